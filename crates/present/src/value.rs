//! Single values as text, the same in every front end: byte sizes, commit times, JSON
//! cells.

/// `n` bytes in binary units (`512 B`, `1.5 KiB`, `2.0 GiB`).
pub fn bytes(n: i64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v.abs() >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A time in milliseconds since the epoch as the core writes it (`2019-10-01T00:00:00Z`);
/// empty when there is none.
pub fn timestamp(ms: Option<i64>) -> String {
    ms.map(deltalens_core::time_travel::format_timestamp)
        .unwrap_or_default()
}

/// A JSON value as short text: strings without quotes, null as empty.
pub fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(bytes(-2048), "-2.0 KiB");
        assert_eq!(bytes(i64::MAX), "8388608.0 TiB");
        assert_eq!(timestamp(None), "");
        assert_eq!(
            timestamp(Some(1_569_888_000_000)),
            "2019-10-01T00:00:00.000Z"
        );
        assert_eq!(cell(&serde_json::json!("a")), "a");
        assert_eq!(cell(&serde_json::json!(null)), "");
        assert_eq!(cell(&serde_json::json!(1.5)), "1.5");
    }
}

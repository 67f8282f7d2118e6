//! Values as text for the page: byte counts, commit times, the status line's I/O
//! counters. Pure functions: no state, no rendering.

/// `n` bytes in binary units (`512 B`, `1.5 KiB`, `2.0 GiB`).
pub fn fmt_bytes(n: i64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v.abs() >= 1024.0 && u < units.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// A commit time (milliseconds since the epoch) as the core writes it; empty when
/// unknown.
pub fn fmt_ts(ms: Option<i64>) -> String {
    ms.map(deltalens_core::time_travel::format_timestamp)
        .unwrap_or_default()
}

/// Requests made and bytes read since the table was opened.
pub fn fmt_io(requests: u64, bytes: u64) -> String {
    format!("{requests} requests, {} read", fmt_bytes(bytes as i64))
}

/// The warning for reads a server answered with the whole file (it ignores Range).
pub fn fmt_ranges_ignored(reads: u64) -> String {
    format!(" · the server ignores Range: {reads} reads downloaded whole files (slower; correct)")
}

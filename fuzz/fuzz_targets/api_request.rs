//! The HTTP API's GET routes: `request::parse_get` with the route on the first line and a
//! query string (`name=value&...`, percent-decoded) after it.
#![no_main]

use deltalens_query::Format;
use deltalens_query::request::parse_get;

fn decode(s: &str) -> String {
    let b = s.replace('+', " ");
    let b = b.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    let (path, query) = text.split_once('\n').unwrap_or((text, ""));
    let params: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    let _ = Format::parse(query);
    if let Ok(r) = parse_get(path, &params) {
        // the table the allowlist is checked against is the one named
        let table = r.table();
        let named = params
            .iter()
            .rev()
            .find(|(k, _)| k == "table")
            .map(|(_, v)| v.as_str());
        assert_eq!(
            named,
            Some(table),
            "the table checked is not the table read"
        );
    }
});

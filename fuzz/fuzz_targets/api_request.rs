//! The HTTP API's GET routes: `request::parse_get` with the route on the first line and a
//! query string (`name=value&...`, percent-decoded) after it.
#![no_main]

use deltalens_api::request::parse_get;

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
            // form encoding: `+` is a space
            let form = |s: &str| deltalens_fuzz::percent_decode(&s.replace('+', " "));
            (form(k), form(v))
        })
        .collect();
    let _ = deltalens_api::parse_format(query);
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

//! Delta Sharing, everything a profile or a sharing server hands over (`deltalens-sharing`):
//! the first byte picks what the rest of the input is: a profile file, a listing page, a
//! table's NDJSON answer, an OAuth token answer, a
//! temporary-credentials answer, a `Delta-Table-Version` header or a share name.
//! Checked, besides no panic: every request a parsed profile builds, with names and page
//! tokens taken from the input, goes to the profile's own endpoint (same origin, under its
//! path: the bearer token goes nowhere else); a listing's names stay one path segment
//! each; every pre-signed URL a table answer accepts is `https://` (or `http://` to a
//! loopback host) without user info; an answer never holds more than its limits say.
#![no_main]

use deltalens_sharing::{
    Auth, MAX_FILES, MAX_ITEMS, MAX_NAME_CHARS, OAuthToken, Page, Profile, Query, Request,
    ResponseFormat, Server, ShareName, TableAnswer,
};

const ENDPOINT: &str = "https://sharing.example.com/delta-sharing";

fn origin(u: &url::Url) -> (String, Option<String>, Option<u16>) {
    (
        u.scheme().to_string(),
        u.host_str().map(str::to_string),
        u.port_or_known_default(),
    )
}

/// `req` goes to `endpoint`'s origin, under its path, and carries the token in a header only.
fn assert_stays_at(endpoint: &str, req: &Request) {
    let e = url::Url::parse(endpoint).expect("a profile's endpoint is a URL");
    let u = url::Url::parse(&req.url).expect("a request's URL parses");
    assert_eq!(origin(&e), origin(&u), "{} left {endpoint}", req.url);
    assert!(
        u.path().starts_with(e.path().trim_end_matches('/')),
        "{} is not under {endpoint}",
        req.url
    );
    assert!(u.username().is_empty() && u.password().is_none());
    assert!(u.fragment().is_none(), "{} has a fragment", req.url);
}

/// Every request `server` builds from the names in `names` stays at its endpoint, and each
/// name is one path segment there.
fn requests_stay(server: &Server, names: &[&str], token: &str) {
    let s = names.first().copied().unwrap_or("s");
    let c = names.get(1).copied().unwrap_or("c");
    let t = names.get(2).copied().unwrap_or("t");
    let ep = server.endpoint().to_string();
    let q = Query {
        version: Some(3),
        timestamp: Some(token.to_string()),
        limit_hint: Some(1),
        json_predicate_hints: Some(token.to_string()),
        starting_version: None,
        ending_version: None,
    };
    let reqs = [
        server.list_shares(Some(token)),
        server.list_schemas(s, Some(token)),
        server.list_tables(s, c, Some(token)),
        server.list_all_tables(s, Some(token)),
        server.table_version(s, c, t, Some(token)),
        server.metadata(s, c, t, ResponseFormat::Delta),
        server.metadata_at(s, c, t, Some(7), ResponseFormat::Parquet),
        server.query(s, c, t, &q, ResponseFormat::Delta),
        server.changes(s, c, t, 0, Some(9), ResponseFormat::Parquet),
        server.temporary_credentials(s, c, t, Some(token)),
        server.metadata_at_timestamp(s, c, t, token, ResponseFormat::Delta),
    ];
    for r in &reqs {
        assert_stays_at(&ep, r);
    }
    // …/shares/{s}/schemas/{c}/tables/{t}/metadata after the endpoint's path: each name
    // one segment
    let e = url::Url::parse(&ep).expect("a profile's endpoint is a URL");
    let u = url::Url::parse(&reqs[5].url).expect("parsed above");
    let rest = u
        .path()
        .strip_prefix(e.path().trim_end_matches('/'))
        .expect("under the endpoint's path");
    let parts: Vec<&str> = rest.split('/').collect();
    assert!(
        parts.len() == 8
            && parts[0].is_empty()
            && [parts[1], parts[3], parts[5], parts[7]]
                == ["shares", "schemas", "tables", "metadata"]
            && parts[2..7].iter().all(|p| !p.is_empty()),
        "a name split the path: {}",
        reqs[5].url
    );
}

fn check_url(endpoint: &str, url: &str) {
    let u = url::Url::parse(url).expect("an accepted pre-signed URL parses");
    let loopback = match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    let endpoint_loopback = url::Url::parse(endpoint).is_ok_and(|e| {
        matches!(e.host(), Some(url::Host::Domain(d)) if d.eq_ignore_ascii_case("localhost"))
            || matches!(e.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
            || matches!(e.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
    });
    assert!(
        u.scheme() == "https" || (u.scheme() == "http" && loopback && endpoint_loopback),
        "accepted {url}"
    );
    assert!(
        u.username().is_empty() && u.password().is_none(),
        "accepted {url}"
    );
}

fn check_answer(endpoint: &str, a: &TableAnswer) {
    assert!(a.files.len() <= MAX_FILES);
    for f in &a.files {
        check_url(endpoint, &f.url);
        assert!(f.id.len() <= 4096);
    }
}

deltalens_fuzz::target!(|data| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let (head, body) = deltalens_fuzz::split_once(rest, b'\n');
    let head = String::from_utf8_lossy(head);
    match kind % 8 {
        0 => {
            // a profile, a NUL, then `share.schema.table` (as a share name accepts them)
            // and, after a \x01, a page token or other value sent in a query
            let (text, names) = deltalens_fuzz::split_once(rest, 0);
            let names = String::from_utf8_lossy(names);
            let (names, token) = names.split_once('\u{1}').unwrap_or((&names, ""));
            let Ok(p) = Profile::parse("fuzz.share", text) else {
                return;
            };
            let given = ShareName::parse(&format!("p#{names}")).ok();
            let parts: Vec<&str> = given
                .iter()
                .flat_map(|n| [&n.share, &n.schema, &n.table])
                .flatten()
                .map(String::as_str)
                .collect();
            match &p.auth {
                Auth::Bearer { .. } => {
                    let server = p.server(None).expect("a bearer profile has a server");
                    requests_stay(&server, &parts, token);
                }
                Auth::OAuthClientCredentials { token_endpoint, .. } => {
                    let req = p.oauth_token().expect("OAuth profiles ask for a token");
                    assert_stays_at(token_endpoint, &req);
                    assert!(p.server(None).is_err());
                }
            }
            let _ = p.check_expiry(0);
        }
        1 => {
            if let Ok(page) = Page::parse(ENDPOINT, "the shares", 200, rest) {
                assert!(page.items.len() <= MAX_ITEMS);
                let server = Profile::parse(
                    "fuzz.share",
                    br#"{"shareCredentialsVersion":1,"endpoint":"https://sharing.example.com/delta-sharing","bearerToken":"x"}"#,
                )
                .and_then(|p| p.server(None))
                .expect("a fixed profile");
                for it in page.items.iter().take(8) {
                    assert!(it.name.chars().count() <= MAX_NAME_CHARS);
                    let names = [
                        it.share.as_deref().unwrap_or(&it.name),
                        it.schema.as_deref().unwrap_or(&it.name),
                        &it.name,
                    ];
                    requests_stay(
                        &server,
                        &names,
                        page.next_page_token.as_deref().unwrap_or(""),
                    );
                }
            }
        }
        2 => {
            let endpoint = if head.is_empty() { ENDPOINT } else { &head };
            if let Ok(a) = TableAnswer::parse(endpoint, "table s.c.t", body) {
                check_answer(endpoint, &a);
            }
        }
        3 => {
            let p = Profile::parse(
                "fuzz.share",
                br#"{"shareCredentialsVersion":2,"type":"oauth_client_credentials","endpoint":"https://sharing.example.com/delta-sharing","tokenEndpoint":"https://login.example.com/token","clientId":"id","clientSecret":"secret"}"#,
            )
            .expect("a fixed OAuth profile");
            let req = p.oauth_token().expect("an OAuth profile");
            let status = u16::from(rest.first().copied().unwrap_or(0)) + 100;
            if let Ok(t) = OAuthToken::parse(&p, &req, status, rest, 1_000) {
                let _ = t.needs_refresh(1_000, i64::MAX);
                let server = p.server(Some(&t)).expect("an OAuth token gives a server");
                requests_stay(&server, &["s", "c", "t"], "");
            }
        }
        4 => {
            let server = Profile::parse(
                "fuzz.share",
                br#"{"shareCredentialsVersion":1,"endpoint":"https://sharing.example.com/delta-sharing","bearerToken":"x"}"#,
            )
            .and_then(|p| p.server(None))
            .expect("a fixed profile");
            let req = server.temporary_credentials("s", "c", "t", None);
            let _ = deltalens_sharing::temporary_credentials(&req, 200, rest);
        }
        5 => {
            let _ = deltalens_sharing::table_version(ENDPOINT, "table s.c.t", Some(&head));
            let _ = deltalens_sharing::check_status(ENDPOINT, "the shares", 403, rest);
        }
        _ => {
            let given = String::from_utf8_lossy(rest);
            if let Ok(n) = ShareName::parse(&given) {
                for part in [&n.share, &n.schema, &n.table].into_iter().flatten() {
                    assert!(!part.contains('.') && !part.is_empty());
                    assert!(part.chars().count() <= MAX_NAME_CHARS);
                }
                let again = ShareName::parse(&format!("{}#{}", n.profile, n.dotted()));
                if n.share.is_some() {
                    assert_eq!(again.ok().as_ref(), Some(&n));
                }
            }
        }
    }
});

//! The shared table URL parser (storage `table_url::TableUrl::parse`) every backend, the
//! worker's allowlist and credential attachment go through. Checked on what it accepts:
//! the rules of the module documentation (no user info but abfss' container, no query or
//! fragment, no `.`/`..`/empty segments, backslash or control character in the key;
//! bucket, account and container names), that the store names the host the input's URL
//! names, and `canonical`/`Display`/`is_within`.
#![no_main]

use deltalens_storage::{Store, TableUrl};

fn is_bucket(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && !s.starts_with('.')
        && !s.ends_with('.')
        && !s.contains("..")
}

fn check_key(t: &TableUrl, key: &str) {
    if key.is_empty() {
        return;
    }
    for segment in key.split('/') {
        assert!(
            !matches!(segment, "" | "." | ".."),
            "{t:?}: segment {segment:?} in the key"
        );
        assert!(
            !segment.contains('\\') && !segment.chars().any(char::is_control),
            "{t:?}"
        );
    }
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    let Ok(t) = TableUrl::parse(text) else {
        return;
    };
    assert_eq!(t.to_string(), t.canonical());
    assert!(t.is_within(&t));
    assert_eq!(t.scheme, t.scheme.to_ascii_lowercase());
    // what url::Url makes of the same text: no query, fragment or password
    let u = url::Url::parse(text.trim()).expect("TableUrl accepted what url::Url refuses");
    assert!(
        u.query().is_none() && u.fragment().is_none() && u.password().is_none(),
        "{text:?}"
    );
    let host = u.host_str().unwrap_or("").to_ascii_lowercase();
    match &t.store {
        Store::File => {
            assert!(t.key.starts_with('/'), "{t:?}: a file key is absolute");
            check_key(&t, &t.key[1..]);
        }
        Store::S3 { bucket } | Store::Gcs { bucket } | Store::R2 { binding: bucket } => {
            assert!(is_bucket(bucket), "{t:?}: bucket {bucket:?}");
            assert_eq!(
                bucket.to_ascii_lowercase(),
                host,
                "{t:?}: the bucket is the URL's host"
            );
            assert!(u.username().is_empty(), "{t:?}: user info");
            check_key(&t, &t.key);
        }
        Store::Azure { account, container } => {
            if let Some(a) = account {
                assert!(
                    (3..=24).contains(&a.len())
                        && a.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                    "{t:?}: account {a:?}"
                );
                assert!(
                    host == format!("{a}.dfs.core.windows.net")
                        || host == format!("{a}.blob.core.windows.net"),
                    "{t:?}: the account is not the URL's host {host:?}"
                );
            }
            assert!(
                (3..=63).contains(&container.len())
                    && container
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !container.starts_with('-'),
                "{t:?}: container {container:?}"
            );
            check_key(&t, &t.key);
        }
        Store::UnityCatalog { name } => {
            assert!((1..=3).contains(&name.len()), "{t:?}");
            for part in name {
                assert!(
                    !part.is_empty()
                        && part
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                    "{t:?}: part {part:?}"
                );
            }
            assert_eq!(
                name.join("."),
                u.host_str().unwrap_or(""),
                "{t:?}: the name is the URL's host"
            );
            assert!(t.key.is_empty() && u.username().is_empty(), "{t:?}");
        }
        Store::Http { origin } => {
            let (scheme, authority) = origin.split_once("://").expect("an origin has a scheme");
            assert!(matches!(scheme, "http" | "https"), "{t:?}");
            assert!(
                !authority.contains(['/', '@', '?', '#', '\\']),
                "{t:?}: origin {origin:?}"
            );
            assert!(u.username().is_empty(), "{t:?}: user info");
            let o = url::Url::parse(origin).expect("an origin parses");
            assert_eq!(
                o.host_str().map(str::to_ascii_lowercase),
                Some(host.clone()),
                "{t:?}"
            );
            assert_eq!(
                o.port_or_known_default(),
                u.port_or_known_default(),
                "{t:?}"
            );
            assert!(!t.key.starts_with('/') && !t.key.ends_with('/'), "{t:?}");
            check_key(&t, &deltalens_fuzz::percent_decode(&t.key));
        }
    }
    // a table lies within its parent directory, not within a sibling's
    if let Some((parent, _)) = t.canonical().rsplit_once('/') {
        if let Ok(p) = TableUrl::parse(parent) {
            // (a store's root: an empty key, or `/` for file://)
            let below = p.key.is_empty()
                || (p.key == "/" && t.store == Store::File)
                || t.key
                    .strip_prefix(&p.key)
                    .is_some_and(|r| r.starts_with('/'));
            if p.store == t.store && below {
                assert!(t.is_within(&p), "{t:?} not within {p:?}");
            }
        }
    }
});

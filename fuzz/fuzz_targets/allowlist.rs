//! The worker's table allowlist (`DELTALENS_ALLOWED_TABLES`): `access::Allowlist::parse`
//! and `Allowlist::check`. The input is the list, a newline, and the table URL.
//! Checked: an allowed URL lies in the store of a listed prefix, at or under its key at a
//! path-segment boundary, and the other way round (comparing the parsed `TableUrl`s field
//! by field, not their canonical strings); and the worker, which opens it with
//! `Endpoint::parse`, reaches the host it reaches for that prefix.
#![no_main]

use deltalens_api::access::Allowlist;
use deltalens_fetch_storage::{BrowserOptions, Endpoint};
use deltalens_storage::{Store, TableUrl};

const PROBE: &str = "_delta_log/00000000000000000000.json";

fn host_of(url: &str, opts: &BrowserOptions) -> Option<(String, String, Option<u16>)> {
    let e = Endpoint::parse(url, opts).ok()?;
    let u = url::Url::parse(&e.object_url(PROBE)).ok()?;
    Some((
        u.scheme().to_string(),
        u.host_str()?.to_string(),
        u.port_or_known_default(),
    ))
}

/// `t` is `root` or under it: same store, key equal or below at a `/` (a root key that
/// ends with `/`, such as `file:`'s `/`, is its own boundary); a Unity Catalog name is
/// under its catalog and schema, part by part (`uc://main` holds `uc://main.sales.t`, not
/// `uc://mainx`).
fn under(t: &TableUrl, root: &TableUrl) -> bool {
    if let (Store::UnityCatalog { name: me }, Store::UnityCatalog { name: root }) =
        (&t.store, &root.store)
    {
        return me.len() >= root.len() && me.iter().zip(root).all(|(a, b)| a == b);
    }
    t.store == root.store
        && (root.key.is_empty()
            || t.key == root.key
            || t.key
                .strip_prefix(&root.key)
                .is_some_and(|r| r.starts_with('/') || root.key.ends_with('/')))
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    let (list, url) = text.split_once('\n').unwrap_or((text, ""));
    let allow = Allowlist::parse(list);
    let _ = (allow.len(), allow.is_empty(), allow.invalid());
    let allowed = allow.check(url).is_ok();
    let prefixes: Vec<(&str, TableUrl)> = list
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| TableUrl::parse(p).ok().map(|t| (p, t)))
        .collect();
    assert_eq!(prefixes.len(), allow.len());
    let Ok(table) = TableUrl::parse(url) else {
        assert!(!allowed, "{url:?} is allowed but is no table URL");
        return;
    };
    let matched: Vec<&str> = prefixes
        .iter()
        .filter(|(_, p)| under(&table, p))
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(
        allowed,
        !matched.is_empty(),
        "{url:?} ({table:?}) allowed: {allowed}, lies under {matched:?}"
    );
    if !allowed {
        return;
    }
    // the worker reaches the host of a prefix it matched
    for opts in [
        BrowserOptions::default(),
        BrowserOptions {
            s3_virtual_hosted: true,
            azure_account: Some("acct".into()),
            ..BrowserOptions::default()
        },
    ] {
        let Some(reached) = host_of(url, &opts) else {
            continue;
        };
        let hosts: Vec<_> = matched.iter().filter_map(|p| host_of(p, &opts)).collect();
        if hosts.is_empty() {
            continue; // a prefix the browser backend cannot open (r2://, file://)
        }
        assert!(
            hosts.contains(&reached),
            "{url} reaches {reached:?}, its prefixes {matched:?} reach {hosts:?} ({opts:?})"
        );
    }
});

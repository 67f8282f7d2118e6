//! Table URLs opened in the browser and the edge worker: `location::Endpoint::parse`
//! (fetch-storage) with default and non-default `BrowserOptions`, then `object_url` and
//! `may_authorise`. The options carry marker credentials that must never appear in a URL
//! or in the options' `Debug`; a table's own objects are on its root's host, and its
//! credential goes with them (and only to their origin).
#![no_main]

use deltalens_fetch_storage::{BrowserOptions, Endpoint, Service};

const KEY_ID: &str = "AKIDFUZZMARKER0001";
const SECRET: &str = "secretFUZZMARKER0002";
const TOKEN: &str = "tokenFUZZMARKER0003";
const SAS: &str = "sv=2024&sig=sasFUZZMARKER0004";

fn options() -> Vec<BrowserOptions> {
    let secrets = BrowserOptions {
        s3_access_key_id: Some(KEY_ID.into()),
        s3_secret_access_key: Some(SECRET.into()),
        s3_session_token: Some(TOKEN.into()),
        azure_sas: Some(format!("?{SAS}")),
        ..BrowserOptions::default()
    };
    vec![
        BrowserOptions::default(),
        BrowserOptions {
            s3_virtual_hosted: true,
            s3_region: Some("eu-west-1".into()),
            ..secrets.clone()
        },
        BrowserOptions {
            s3_endpoint: Some("http://127.0.0.1:9000/".into()),
            s3_region: Some("auto".into()),
            azure_endpoint: Some("http://127.0.0.1:10000/devstoreaccount1".into()),
            azure_account: Some("devstoreaccount1".into()),
            ..secrets.clone()
        },
        BrowserOptions {
            s3_endpoint: Some("minio.example:9000".into()),
            s3_virtual_hosted: true,
            azure_account: Some("acct".into()),
            ..secrets
        },
    ]
}

fn host(u: &str) -> Option<(String, Option<u16>)> {
    let u = url::Url::parse(u).ok()?;
    Some((u.host_str()?.to_string(), u.port_or_known_default()))
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    if text.contains("FUZZMARKER") {
        return;
    }
    for opts in options() {
        let debug = format!("{opts:?}");
        for secret in [KEY_ID, SECRET, TOKEN, "sasFUZZMARKER"] {
            assert!(
                !debug.contains(secret),
                "BrowserOptions' Debug shows a credential"
            );
        }
        let Ok(e) = Endpoint::parse(text, &opts) else {
            continue;
        };
        let _ = e.can_list();
        // a credential never goes to another origin
        if let Some(origin) = e.credential_origin() {
            for other in ["https://evil.example/x", "http://127.0.0.1:9001/x"] {
                if !other.starts_with(&origin) {
                    assert!(!e.may_authorise(other), "{origin} authorises {other}");
                }
            }
        }
        let _ = e.permission_hint("list");
        let _ = e.permission_hint("get");
        if let Service::S3 {
            credentials: Some(c),
            ..
        } = &e.service
        {
            assert!(!format!("{c:?}").contains(SECRET));
        }
        for path in [
            "_delta_log/00000000000000000000.json",
            "a b/%2e%2e/x?y#z",
            "",
        ] {
            let object = e.object_url(path);
            assert!(
                object.starts_with(&format!("{}/", e.root)),
                "{object} is not under the root {}",
                e.root
            );
            for secret in [KEY_ID, SECRET, TOKEN, "sasFUZZMARKER"] {
                assert!(!object.contains(secret), "a credential in the URL {object}");
            }
            // an object of the table is on the table root's host
            if let (Some(root), Some(obj)) = (host(&e.root), host(&object)) {
                assert_eq!(root, obj, "{object} is on another host than {}", e.root);
            }
            if e.credential_origin().is_some() {
                assert!(
                    e.may_authorise(&object),
                    "{object} would go without its credential"
                );
            }
        }
    }
});

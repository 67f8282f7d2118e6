//! What a relay and its clients read from strangers: relay requests (route query strings,
//! from any page that can reach a relay), relay listing and catalog answers (from a
//! relay the tab was pointed at), and Unity Catalog answers (table, credentials,
//! listings). Checked: no panic; an accepted request names only paths under the table
//! root; an accepted listing is bounded, in the prefix and advancing; a resolved catalog
//! table is Delta with a storage location that parses as a table URL.
#![no_main]

use deltalens_catalog::{CatalogConfig, ListPage as UcPage, TableInfo, Vended};
use deltalens_storage::TableUrl;
use deltalens_storage::relay::{self, CatalogEntry, ListPage, RelayRequest};

fn under_root(p: &str) {
    assert!(!p.starts_with('/'), "{p:?}");
    for s in p.trim_end_matches('/').split('/') {
        assert!(!matches!(s, "." | ".."), "{p:?}");
        assert!(
            !s.contains('\\') && !s.chars().any(char::is_control),
            "{p:?}"
        );
    }
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    let (selector, rest) = text.split_at(text.char_indices().nth(1).map_or(text.len(), |(i, _)| i));
    match selector {
        "o" | "l" => {
            let route = if selector == "o" {
                relay::OBJECT_ROUTE
            } else {
                relay::LIST_ROUTE
            };
            match relay::parse_request(route, rest) {
                Ok(Some(RelayRequest::Object { path, table })) => {
                    assert!(!path.is_empty() && !table.is_empty());
                    under_root(&path);
                }
                Ok(Some(RelayRequest::List {
                    prefix,
                    start_after,
                    ..
                })) => {
                    under_root(&prefix);
                    if let Some(a) = start_after {
                        under_root(&a);
                    }
                }
                Ok(None) => panic!("a relay route was not recognised"),
                Err(_) => {}
            }
        }
        "p" => {
            if let Some(page) = ListPage::parse(rest, "_delta_log/") {
                assert!(page.objects.len() <= relay::LIST_PAGE_MAX);
                for o in &page.objects {
                    assert!(o.path.starts_with("_delta_log/"));
                    under_root(&o.path);
                }
                if let (Some(n), Some(last)) = (&page.next_start_after, page.objects.last()) {
                    assert!(n.as_str() >= last.path.as_str());
                }
                // what is accepted survives a round trip
                assert_eq!(ListPage::parse(&page.to_json(), "_delta_log/"), Some(page));
            }
        }
        "c" => {
            if let Some(entries) = CatalogEntry::parse_list(rest) {
                assert!(entries.len() <= relay::CATALOG_ENTRIES_MAX);
                assert!(entries.iter().all(|e| e.name.starts_with("uc://")));
            }
            let _ = relay::parse_catalog_request(rest);
        }
        _ => {
            let config = CatalogConfig {
                endpoint: "https://uc.example".into(),
                token: "t".into(),
            };
            let body = rest.as_bytes();
            let status = if selector == "e" { 404 } else { 200 };
            let req = config.get_table("m.s.t");
            if let Ok(t) = TableInfo::parse(&config, &req, "m.s.t", status, body) {
                TableUrl::parse(&t.storage_location).expect("a resolved location parses");
                assert!(!t.table_id.is_empty());
                let req = config.read_credentials(&t.table_id, "m.s.t");
                let _ = Vended::parse(&config, &req, &t, status, body);
            }
            let parent = vec!["m".to_string()];
            let req = config.list(&parent, None);
            if let Ok(p) = UcPage::parse(&config, &req, &parent, status, body) {
                assert!(p.entries.iter().all(|e| e.full_name.starts_with("m.")));
            }
        }
    }
});

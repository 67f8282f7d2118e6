//! The relay protocol: a read-only HTTP interface to the objects of tables that a server
//! (`deltalens serve`, the edge worker) reads with its own credentials, so that a browser
//! tab opens a private table with no CORS rule on the bucket and no secret in the tab.
//!
//! Two routes, both `GET` (and `HEAD` for objects):
//!
//! - `/v1/object?table=URL&path=PATH`: the object at `PATH` under the table's root, with
//!   `Range` (one range; `bytes=a-b`, `bytes=a-`, `bytes=-n`), `Content-Range`, `ETag`
//!   and `Last-Modified` as a store answers them.
//! - `/v1/list?table=URL&prefix=PREFIX[&start_after=PATH]`: the objects whose path starts
//!   with `PREFIX`, in path order, at most [`LIST_PAGE_MAX`] per answer, as JSON
//!   `{"objects":[{"path":…,"size":…,"last_modified_ms":…}],"next_start_after":…}`;
//!   `next_start_after` is the `start_after` of the next page, `null` on the last one.
//!
//! Paths are relative to the table root and checked here, the same way by every server:
//! no leading `/`, no empty, `.` or `..` segment (also before a `;`, which Tomcat reads as
//! a path parameter: `..;` is `..` there), no backslash or control character — so
//! a request can name nothing outside the table. Which tables a server relays is its own
//! decision (the tables `serve` was given, the worker's allowlist).

use url::form_urlencoded;

use crate::ObjectMeta;

/// The route of object reads.
pub const OBJECT_ROUTE: &str = "/v1/object";
/// The route of listings.
pub const LIST_ROUTE: &str = "/v1/list";
/// The route that names the tables a relay serves: `{"tables":[URL…]}` (a worker, whose
/// allowlist is of prefixes, lists those).
pub const TABLES_ROUTE: &str = "/v1/tables";
/// The most objects one listing answer holds.
pub const LIST_PAGE_MAX: usize = 1000;
/// The `Cache-Control` of an object answer: a Delta table's files never change once
/// written (commits, checkpoints, sidecars, data files, deletion vectors), so the browser
/// may keep them — privately — as it keeps a store's; `_last_checkpoint` changes.
pub fn cache_control(path: &str) -> &'static str {
    if path.rsplit('/').next() == Some("_last_checkpoint") {
        "private, no-cache"
    } else {
        "private, max-age=86400, immutable"
    }
}

/// The route that lists a catalog or schema a relay serves:
/// `/v1/catalog?name=uc://catalog[.schema]` → `{"entries":[{"name","kind","table_type",
/// "format","comment"}]}` (`kind`: catalog, schema or table).
pub const CATALOG_ROUTE: &str = "/v1/catalog";

/// The longest path or prefix accepted (S3's key limit).
pub const MAX_PATH_BYTES: usize = 1024;
/// The longest table URL accepted.
pub const MAX_TABLE_BYTES: usize = 2048;

/// A relay request, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayRequest {
    /// Read (or HEAD) one object.
    Object {
        /// The table URL as the client gave it.
        table: String,
        /// The object's path under the table root.
        path: String,
    },
    /// List objects under a prefix.
    List {
        /// The table URL as the client gave it.
        table: String,
        /// The prefix (may be empty: the whole table).
        prefix: String,
        /// Only paths after this one.
        start_after: Option<String>,
    },
}

impl RelayRequest {
    /// The table URL the request is for.
    pub fn table(&self) -> &str {
        match self {
            RelayRequest::Object { table, .. } | RelayRequest::List { table, .. } => table,
        }
    }
}

/// Why a relay request was refused (an HTTP 400 with this text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RelayError(pub String);

fn bad(message: impl Into<String>) -> RelayError {
    RelayError(message.into())
}

/// Parse a request to `route` (the URL path) with `query` (the URL query, without `?`).
/// `Ok(None)`: the route is not one of the relay's.
pub fn parse_request(route: &str, query: &str) -> Result<Option<RelayRequest>, RelayError> {
    let known: &[&str] = match route {
        OBJECT_ROUTE => &["table", "path"],
        LIST_ROUTE => &["table", "prefix", "start_after"],
        _ => return Ok(None),
    };
    let mut params: Vec<(String, String)> = Vec::new();
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        if !known.contains(&k.as_ref()) {
            return Err(bad(format!(
                "{route} takes only {}; not {k:?}",
                known.join(", ")
            )));
        }
        if params.iter().any(|(have, _)| *have == k) {
            return Err(bad(format!("{k} is given twice")));
        }
        params.push((k.into_owned(), v.into_owned()));
    }
    let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let table = get("table").ok_or_else(|| bad(format!("{route} needs table=URL")))?;
    if table.is_empty() || table.len() > MAX_TABLE_BYTES {
        return Err(bad(format!(
            "table must be a URL of 1 to {MAX_TABLE_BYTES} bytes"
        )));
    }
    Ok(Some(match route {
        OBJECT_ROUTE => {
            let path = get("path").ok_or_else(|| bad("/v1/object needs path=PATH"))?;
            check_path("path", &path, false)?;
            RelayRequest::Object { table, path }
        }
        _ => {
            let prefix = get("prefix").unwrap_or_default();
            check_path("prefix", &prefix, true)?;
            let start_after = get("start_after");
            if let Some(a) = &start_after {
                check_path("start_after", a, false)?;
            }
            RelayRequest::List {
                table,
                prefix,
                start_after,
            }
        }
    }))
}

/// The `name` of a `/v1/catalog` request.
pub fn parse_catalog_request(query: &str) -> Result<String, RelayError> {
    let mut name = None;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        if k != "name" || name.is_some() {
            return Err(bad(format!(
                "{CATALOG_ROUTE} takes one name=uc://catalog[.schema]"
            )));
        }
        name = Some(v.into_owned());
    }
    let name =
        name.ok_or_else(|| bad(format!("{CATALOG_ROUTE} needs name=uc://catalog[.schema]")))?;
    if name.is_empty() || name.len() > MAX_TABLE_BYTES {
        return Err(bad("name must be a uc:// name"));
    }
    Ok(name)
}

/// The URL of the listing of the catalog or schema `name` on the relay at `base`.
pub fn catalog_url(base: &str, name: &str) -> String {
    format!(
        "{}{CATALOG_ROUTE}?{}",
        base.trim_end_matches('/'),
        query(&[("name", name)])
    )
}

/// One entry of a catalog listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// `uc://…` of the entry.
    pub name: String,
    /// `catalog`, `schema` or `table`.
    pub kind: String,
    /// A table's type (`MANAGED`, `EXTERNAL`, `VIEW`…).
    pub table_type: Option<String>,
    /// A table's format (`DELTA`…).
    pub format: Option<String>,
    /// Its comment.
    pub comment: Option<String>,
}

/// The most entries a catalog listing answer holds.
pub const CATALOG_ENTRIES_MAX: usize = 10_000;

impl CatalogEntry {
    /// The JSON of a listing.
    pub fn list_json(entries: &[CatalogEntry]) -> String {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .take(CATALOG_ENTRIES_MAX)
            .map(|e| {
                serde_json::json!({
                    "name": e.name, "kind": e.kind, "table_type": e.table_type,
                    "format": e.format, "comment": e.comment,
                })
            })
            .collect();
        serde_json::json!({ "entries": list }).to_string()
    }

    /// Parse a listing; `None` when it is not one (or too long, or names that are not
    /// `uc://`).
    pub fn parse_list(json: &str) -> Option<Vec<CatalogEntry>> {
        let v: serde_json::Value = deltalens_json::from_str(json).ok()?;
        let list = v.get("entries")?.as_array()?;
        if list.len() > CATALOG_ENTRIES_MAX {
            return None;
        }
        list.iter()
            .map(|e| {
                let text = |k: &str| e.get(k).and_then(|x| x.as_str()).map(str::to_string);
                let name = text("name")?;
                let kind = text("kind")?;
                if !name.starts_with("uc://")
                    || !["catalog", "schema", "table"].contains(&kind.as_str())
                {
                    return None;
                }
                Some(CatalogEntry {
                    name,
                    kind,
                    table_type: text("table_type"),
                    format: text("format"),
                    comment: text("comment"),
                })
            })
            .collect()
    }
}

/// `path` names something under a table root: relative, each segment a name. A prefix
/// may be empty and may end with `/` or in the middle of a name.
pub fn check_path(what: &str, path: &str, prefix: bool) -> Result<(), RelayError> {
    if path.len() > MAX_PATH_BYTES {
        return Err(bad(format!("{what} is longer than {MAX_PATH_BYTES} bytes")));
    }
    if path.is_empty() {
        return if prefix {
            Ok(())
        } else {
            Err(bad(format!("{what} is empty")))
        };
    }
    let body = if prefix {
        path.strip_suffix('/').unwrap_or(path)
    } else {
        path
    };
    if body.is_empty() {
        return Err(bad(format!("{what} {path:?} names the store's root")));
    }
    for segment in body.split('/') {
        let refused = match segment {
            "" => Some("an empty segment (a leading '/' or '//')"),
            "." | ".." => Some("a '.' or '..' segment"),
            s if s.contains('\\') || s.chars().any(char::is_control) => {
                Some("a backslash or a control character")
            }
            // Tomcat drops a segment's `;parameters`: `..;x` is `..` there
            s if matches!(s.split(';').next(), Some("" | "." | "..")) => {
                Some("a segment that is empty, '.' or '..' before a ';' (a path parameter)")
            }
            _ => None,
        };
        if let Some(why) = refused {
            return Err(bad(format!(
                "{what} {path:?} has {why}: only paths under the table root are relayed"
            )));
        }
    }
    Ok(())
}

fn query(pairs: &[(&str, &str)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    q.finish()
}

/// The URL of the object at `path` of `table` on the relay at `base`
/// (`http://127.0.0.1:8080`, no trailing `/`).
pub fn object_url(base: &str, table: &str, path: &str) -> String {
    format!(
        "{}{OBJECT_ROUTE}?{}",
        base.trim_end_matches('/'),
        query(&[("table", table), ("path", path)])
    )
}

/// The URL of a listing page of `table` on the relay at `base`.
pub fn list_url(base: &str, table: &str, prefix: &str, start_after: Option<&str>) -> String {
    let mut pairs = vec![("table", table), ("prefix", prefix)];
    if let Some(a) = start_after {
        pairs.push(("start_after", a));
    }
    format!(
        "{}{LIST_ROUTE}?{}",
        base.trim_end_matches('/'),
        query(&pairs)
    )
}

/// One listing answer: the objects and the `start_after` of the next page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListPage {
    /// Objects in path order.
    pub objects: Vec<ObjectMeta>,
    /// Where the next page starts (`None`: this is the last page).
    pub next_start_after: Option<String>,
}

impl ListPage {
    /// A page of at most [`LIST_PAGE_MAX`] of `objects` (sorted by path); when more
    /// remain, `next_start_after` is the last path sent.
    pub fn of(mut objects: Vec<ObjectMeta>) -> ListPage {
        objects.sort_by(|a, b| a.path.cmp(&b.path));
        let next_start_after = (objects.len() > LIST_PAGE_MAX).then(|| {
            objects.truncate(LIST_PAGE_MAX);
            objects.last().map(|o| o.path.clone()).unwrap_or_default()
        });
        ListPage {
            objects,
            next_start_after,
        }
    }

    /// The answer's JSON.
    pub fn to_json(&self) -> String {
        let objects: Vec<serde_json::Value> = self
            .objects
            .iter()
            .map(|o| {
                serde_json::json!({
                    "path": o.path,
                    "size": o.size,
                    "last_modified_ms": o.last_modified_ms,
                })
            })
            .collect();
        serde_json::json!({
            "objects": objects,
            "next_start_after": self.next_start_after,
        })
        .to_string()
    }

    /// Parse an answer; `None` when it is not one (or breaks the protocol: more than
    /// [`LIST_PAGE_MAX`] objects, a path outside the table, a page that does not advance).
    pub fn parse(json: &str, prefix: &str) -> Option<ListPage> {
        let v: serde_json::Value = deltalens_json::from_str(json).ok()?;
        let list = v.get("objects")?.as_array()?;
        if list.len() > LIST_PAGE_MAX {
            return None;
        }
        let mut objects = Vec::with_capacity(list.len());
        for o in list {
            let path = o.get("path")?.as_str()?;
            check_path("path", path, false).ok()?;
            if !path.starts_with(prefix) {
                return None;
            }
            let size = o.get("size")?.as_u64()?;
            let last_modified_ms = match o.get("last_modified_ms") {
                None | Some(serde_json::Value::Null) => None,
                Some(t) => Some(t.as_i64()?),
            };
            objects.push(ObjectMeta {
                path: path.to_string(),
                size,
                last_modified_ms,
            });
        }
        let next_start_after = match v.get("next_start_after") {
            None | Some(serde_json::Value::Null) => None,
            Some(n) => {
                let n = n.as_str()?;
                // a next page must start after everything on this one
                if objects.last().is_none_or(|o| o.path.as_str() > n) {
                    return None;
                }
                Some(n.to_string())
            }
        };
        Some(ListPage {
            objects,
            next_start_after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(p: &str) -> ObjectMeta {
        ObjectMeta {
            path: p.into(),
            size: 7,
            last_modified_ms: Some(1),
        }
    }

    #[test]
    fn urls_round_trip_through_the_parser() {
        let u = object_url(
            "http://127.0.0.1:8080/",
            "s3://b/t x&y",
            "_delta_log/0.json",
        );
        let (route, q) = u
            .strip_prefix("http://127.0.0.1:8080")
            .unwrap()
            .split_once('?')
            .unwrap();
        assert_eq!(
            parse_request(route, q).unwrap(),
            Some(RelayRequest::Object {
                table: "s3://b/t x&y".into(),
                path: "_delta_log/0.json".into()
            })
        );
        let u = list_url(
            "http://h",
            "uc://c.s.t",
            "_delta_log/",
            Some("_delta_log/00"),
        );
        let (route, q) = u.strip_prefix("http://h").unwrap().split_once('?').unwrap();
        assert_eq!(
            parse_request(route, q).unwrap(),
            Some(RelayRequest::List {
                table: "uc://c.s.t".into(),
                prefix: "_delta_log/".into(),
                start_after: Some("_delta_log/00".into())
            })
        );
        assert_eq!(parse_request("/v1/info", "table=x").unwrap(), None);
    }

    #[test]
    fn paths_outside_the_table_are_refused() {
        for p in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "a//b",
            "./a",
            "a\\b",
            "a\u{0}b",
            "",
            // Tomcat-style path parameters: `..;` is `..` there (audit #31 item 9)
            "..;/x",
            "_delta_log/..;x/../y",
            ".;/x",
            "a/;x/b",
        ] {
            let q = query(&[("table", "s3://b/t"), ("path", p)]);
            assert!(parse_request(OBJECT_ROUTE, &q).is_err(), "{p:?}");
        }
        for p in ["..", "/", "a/../", "//"] {
            let q = query(&[("table", "s3://b/t"), ("prefix", p)]);
            assert!(parse_request(LIST_ROUTE, &q).is_err(), "{p:?}");
        }
        // a name holding ';' is a name (a partition value may hold one)
        let q = query(&[("table", "s3://b/t"), ("path", "c=a;b/part-0.parquet")]);
        assert!(parse_request(OBJECT_ROUTE, &q).is_ok());
        for p in ["", "_delta_log/", "_delta_log/0000", "part-"] {
            let q = query(&[("table", "s3://b/t"), ("prefix", p)]);
            assert!(parse_request(LIST_ROUTE, &q).is_ok(), "{p:?}");
        }
        let long = "a".repeat(MAX_PATH_BYTES + 1);
        let q = query(&[("table", "s3://b/t"), ("path", &long)]);
        assert!(parse_request(OBJECT_ROUTE, &q).is_err());
    }

    #[test]
    fn catalog_listings_round_trip() {
        let u = catalog_url("http://h/", "uc://main.s");
        let q = u.split_once('?').unwrap().1;
        assert_eq!(parse_catalog_request(q).unwrap(), "uc://main.s");
        assert!(parse_catalog_request("").is_err());
        assert!(parse_catalog_request("name=a&name=b").is_err());
        assert!(parse_catalog_request("other=a").is_err());
        let e = vec![CatalogEntry {
            name: "uc://main.s.t".into(),
            kind: "table".into(),
            table_type: Some("EXTERNAL".into()),
            format: Some("DELTA".into()),
            comment: None,
        }];
        assert_eq!(
            CatalogEntry::parse_list(&CatalogEntry::list_json(&e)).unwrap(),
            e
        );
        assert!(
            CatalogEntry::parse_list(r#"{"entries":[{"name":"s3://x","kind":"table"}]}"#).is_none()
        );
        assert!(
            CatalogEntry::parse_list(r#"{"entries":[{"name":"uc://x","kind":"view"}]}"#).is_none()
        );
    }

    #[test]
    fn only_immutable_files_may_be_kept() {
        assert_eq!(
            cache_control("_delta_log/_last_checkpoint"),
            "private, no-cache"
        );
        assert!(cache_control("_delta_log/00000000000000000001.json").contains("immutable"));
        assert!(cache_control("part-0.parquet").contains("immutable"));
    }

    #[test]
    fn odd_queries_are_refused() {
        for q in [
            "",
            "path=x",
            "table=&path=x",
            "table=a&table=b&path=x",
            "table=a&path=x&extra=1",
        ] {
            assert!(parse_request(OBJECT_ROUTE, q).is_err(), "{q}");
        }
    }

    #[test]
    fn pages_are_bounded_and_continue_after_their_last_path() {
        let many: Vec<ObjectMeta> = (0..LIST_PAGE_MAX + 5)
            .rev()
            .map(|i| obj(&format!("_delta_log/{i:020}.json")))
            .collect();
        let page = ListPage::of(many);
        assert_eq!(page.objects.len(), LIST_PAGE_MAX);
        assert_eq!(
            page.next_start_after.as_deref(),
            Some(page.objects[LIST_PAGE_MAX - 1].path.as_str())
        );
        let back = ListPage::parse(&page.to_json(), "_delta_log/").unwrap();
        assert_eq!(back, page);
        let last = ListPage::of(vec![obj("a"), obj("b")]);
        assert_eq!(last.next_start_after, None);
        assert_eq!(ListPage::parse(&last.to_json(), "").unwrap(), last);
    }

    #[test]
    fn hostile_listing_answers_are_refused() {
        for json in [
            "{}",
            "[]",
            r#"{"objects":[{"path":"../x","size":1}]}"#,
            r#"{"objects":[{"path":"other/x","size":1}]}"#,
            r#"{"objects":[{"path":"_delta_log/x","size":-1}]}"#,
            r#"{"objects":[{"path":"_delta_log/b","size":1}],"next_start_after":"_delta_log/a"}"#,
            r#"{"objects":[],"next_start_after":"_delta_log/a"}"#,
        ] {
            assert!(ListPage::parse(json, "_delta_log/").is_none(), "{json}");
        }
        let big = ListPage {
            objects: (0..LIST_PAGE_MAX + 1)
                .map(|i| obj(&format!("_delta_log/{i}")))
                .collect(),
            next_start_after: None,
        };
        assert!(ListPage::parse(&big.to_json(), "_delta_log/").is_none());
    }
}

//! The npm package's answers in Node, Chromium and workerd (written by
//! `crates/js/tests/run.mjs`, which `scripts/js-test` runs with `DELTALENS_JS_OUT` set to
//! their directory) equal the native reads of the same tables through the same API code
//! (`deltalens_api::respond`: the documents of `deltalens info|schema|history|files
//! --json`), and their rows equal the corpus' canonical rows. Skipped (with a message)
//! when `DELTALENS_JS_OUT` is not set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use deltalens_api::request::parse_get;
use deltalens_core::{Table, VersionSpec};
use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{ByteRange, ObjectMeta, Storage, StorageError};
use deltalens_tests::{canonical::canonical_lines, conformance_dir, runtime};
use serde_json::Value;

/// The corpus table as the package read it: from plain HTTP hosting, which cannot list
/// (versions are found by name) and, as run.mjs' server, sends no `Last-Modified` (a
/// commit without a timestamp of its own then has none).
#[derive(Debug)]
struct PlainHttp(ObjectStoreStorage);

#[async_trait::async_trait]
impl Storage for PlainHttp {
    async fn list(&self, prefix: &str, _: Option<&str>) -> Result<Vec<ObjectMeta>, StorageError> {
        Err(StorageError::ListingUnsupported {
            path: prefix.to_string(),
            message: "plain HTTP hosting".into(),
        })
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        self.0.get_range(path, range).await
    }
    async fn get(&self, path: &str) -> Result<Bytes, StorageError> {
        self.0.get(path).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        let meta = self.0.head(path).await?;
        Ok(ObjectMeta {
            last_modified_ms: None,
            ..meta
        })
    }
}

fn open_plain(path: &Path) -> Table {
    let loc = path.to_string_lossy().to_string();
    Table::new(
        Arc::new(PlainHttp(ObjectStoreStorage::open(&loc, &[]).unwrap())),
        loc,
    )
}

/// The document `route` answers natively on `table` (at `path`) with `params`.
fn native(table: &Table, path: &str, route: &str, params: &[(&str, &str)]) -> Value {
    let mut list: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    list.push(("table".into(), path.into()));
    let api = parse_get(route, &list).unwrap();
    let limits = deltalens_api::execute::Limits::default();
    let a = runtime()
        .block_on(deltalens_api::respond(api, table, limits, 0))
        .unwrap();
    without_location(deltalens_json::from_slice(&a.body).unwrap())
}

/// The location names the table as each reader was given it (a URL, a path).
fn without_location(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("location");
    }
    v
}

fn read_json(p: &Path) -> Value {
    deltalens_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Numbers as JavaScript holds them: every number a double (`10.000` and `10` alike), but
/// whole numbers beyond 2^53 exact — the package gives those as `BigInt`s, which the
/// test writes as `{"bigint": "digits"}`.
fn as_js(v: Value) -> Value {
    const SAFE: u64 = (1 << 53) - 1;
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() > SAFE) {
                return Value::from(i);
            }
            if let Some(u) = n.as_u64().filter(|u| *u > SAFE) {
                return Value::from(u);
            }
            let f = n.as_f64().unwrap();
            if f.fract() == 0.0 && f.abs() <= SAFE as f64 {
                Value::from(f as i64)
            } else {
                Value::from(f)
            }
        }
        Value::Array(a) => Value::Array(a.into_iter().map(as_js).collect()),
        Value::Object(o) => {
            if o.len() == 1
                && let Some(Value::String(digits)) = o.get("bigint")
            {
                return deltalens_json::from_str(digits).unwrap();
            }
            Value::Object(o.into_iter().map(|(k, v)| (k, as_js(v))).collect())
        }
        other => other,
    }
}

#[test]
fn the_package_answers_as_the_native_reader_and_the_corpus() {
    let Some(out) = std::env::var_os("DELTALENS_JS_OUT") else {
        eprintln!("skipped: DELTALENS_JS_OUT is not set (scripts/js-test sets it)");
        return;
    };
    let corpus = conformance_dir().expect("the conformance corpus");
    let out = Path::new(&out);
    let mut compared = 0;
    for runtime_dir in ["node", "chromium", "workerd"] {
        let dir = out.join(runtime_dir);
        assert!(
            dir.is_dir(),
            "no answers from {runtime_dir} in {}",
            dir.display()
        );
        let mut tables: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        tables.sort();
        assert!(tables.len() >= 10, "{runtime_dir}: {} tables", tables.len());
        for name in tables {
            let got = dir.join(&name);
            let path = corpus.join("tables").join(&name);
            let what = format!("{runtime_dir} {name}");
            assert!(
                !got.join("error.json").exists(),
                "{what}: {}",
                std::fs::read_to_string(got.join("error.json")).unwrap_or_default()
            );
            let table = open_plain(&path);
            let p = path.to_str().unwrap();
            let latest_s = runtime()
                .block_on(table.version_info(VersionSpec::Latest))
                .unwrap()
                .version
                .to_string();
            for (file, route, params) in [
                ("info", "/v1/info", &[][..]),
                ("schema", "/v1/schema", &[][..]),
                ("history", "/v1/history", &[("limit", "5")][..]),
                ("files", "/v1/files", &[("limit", "50")][..]),
                (
                    "files_v0",
                    "/v1/files",
                    &[("version", "0"), ("limit", "5")][..],
                ),
                (
                    "diff",
                    "/v1/diff",
                    &[("from", "0"), ("to", &latest_s), ("limit", "10")][..],
                ),
            ] {
                assert_eq!(
                    as_js(without_location(read_json(
                        &got.join(format!("{file}.json"))
                    ))),
                    as_js(native(&table, p, route, params)),
                    "{what}: {file}"
                );
            }
            // the rows: the corpus' canonical rows of the latest version
            let versions = read_json(&corpus.join(format!("expected/{name}/versions.json")));
            let latest = versions["latest_version"].as_u64().unwrap();
            let file = versions["versions"][latest.to_string()]["data_file"]
                .as_str()
                .unwrap();
            let want =
                std::fs::read_to_string(corpus.join(format!("expected/{name}/{file}"))).unwrap();
            let bytes = std::fs::read(got.join("scan.arrow")).unwrap();
            let reader =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
                    .unwrap();
            let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
            let snap = runtime()
                .block_on(table.snapshot(VersionSpec::Latest))
                .unwrap();
            let lines = canonical_lines(&batches, snap.schema.fields());
            assert_eq!(lines.concat(), want, "{what}: rows differ from the corpus");
            compared += 1;
        }
    }
    println!(
        "js package: {compared} table reads (3 runtimes) equal the native documents and the corpus rows"
    );
}

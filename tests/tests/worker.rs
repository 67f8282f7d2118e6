//! The Cloudflare Worker, built and running in workerd (`scripts/worker-test` starts it
//! with nginx, moto S3, azurite and an R2 binding on 127.0.0.1 and sets
//! `DELTALENS_WORKER_*`):
//! every route against every store, equal to the same request run natively through the
//! code the CLI runs (`deltalens info --json`, `scan`, `changes`, `query`) and, for the
//! corpus tables, to the corpus' canonical rows; the allowlist (no request reaches another
//! host), bearer auth, CORS, each budget, malformed requests, the isolate cache, and the
//! subrequests of opening a checkpointed table and returning 100 rows. Each test is
//! skipped (with a message) when `DELTALENS_WORKER_URL` is not set.
//!
//! The tests share one worker, and so its isolate's cache (worker/src/stack.rs: what was
//! read, kept for the 8 table roots used last, for every request). Checks that count what a
//! cold or a cached read costs are kept in one test with what must come after them, and the
//! subrequest counts run alone (see [`ISOLATE`]).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use deltalens_api::ApiRequest;
use deltalens_api::request::{parse_get, parse_query};
use deltalens_core::{Table, VersionSpec};
use deltalens_tests::corpus::CHECKPOINTED;
use deltalens_tests::{
    canonical::canonical_lines, conformance_dir, fixtures_dir, groupable, numeric, open_local,
    runtime,
};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

/// Corpus tables loaded into every store by scripts/worker-test (it reads this list).
const CORPUS_TABLES: &[&str] = &[
    "dat_all_primitive_types",
    "dat_basic_partitioned",
    "dat_nested_types",
    "dat_with_checkpoint",
    "dk_basic-dv-with-checkpoint",
    "golden_dv-with-columnmapping",
    "golden_table-with-columnmapping-mode-id",
    "golden_v2-checkpoint-parquet",
    "golden_multi-part-checkpoint",
    "kr_v2-checkpoints-parquet-with-sidecars",
    "kr_cdf-table-with-dv",
    "golden_data-reader-map",
];

struct Env {
    worker: String,
    token: String,
    http: String,
    canary: String,
    canary_count: PathBuf,
    store: PathBuf,
    /// a store that accepts connections and never answers (`DELTALENS_WORKER_STALLER`)
    staller: Option<String>,
}

/// What scripts/worker-test sets, read once.
struct Vars {
    /// the worker under test, with the stores behind it
    worker: Option<Env>,
    /// a worker with neither a token nor `DELTALENS_PUBLIC`, and one public
    /// (`DELTALENS_WORKER_UNCONFIGURED_URL`, `DELTALENS_WORKER_PUBLIC_URL`)
    unconfigured_and_public: Option<(String, String)>,
}

fn vars() -> &'static Vars {
    static VARS: OnceLock<Vars> = OnceLock::new();
    VARS.get_or_init(|| {
        let v = |k: &str| std::env::var(k).ok();
        let worker = || {
            Some(Env {
                worker: v("DELTALENS_WORKER_URL")?,
                token: v("DELTALENS_WORKER_TOKEN").unwrap_or_default(),
                http: v("DELTALENS_WORKER_HTTP")?,
                canary: v("DELTALENS_WORKER_CANARY")?,
                canary_count: v("DELTALENS_WORKER_CANARY_COUNT")?.into(),
                store: v("DELTALENS_WORKER_STORE")?.into(),
                staller: v("DELTALENS_WORKER_STALLER"),
            })
        };
        Vars {
            worker: worker(),
            unconfigured_and_public: v("DELTALENS_WORKER_UNCONFIGURED_URL")
                .zip(v("DELTALENS_WORKER_PUBLIC_URL")),
        }
    })
}

/// The worker under test, or `None` (saying the test is skipped) without one.
fn env() -> Option<&'static Env> {
    let env = vars().worker.as_ref();
    if env.is_none() {
        eprintln!("SKIPPED: DELTALENS_WORKER_URL is not set (scripts/worker-test sets it)");
    }
    env
}

/// The worker's isolate keeps what it read for the 8 table roots used last, for every
/// request (worker/src/stack.rs). Each test holds this lock while it sends to the worker:
/// most of them together, the subrequest counts of a first and a repeated open alone (a
/// test reading other tables in between could evict the cache the repeat counts on).
static ISOLATE: RwLock<()> = RwLock::new(());

fn sharing_the_isolate() -> RwLockReadGuard<'static, ()> {
    ISOLATE.read().unwrap_or_else(PoisonError::into_inner)
}

fn alone_on_the_isolate() -> RwLockWriteGuard<'static, ()> {
    ISOLATE.write().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn num(&self, name: &str) -> u64 {
        self.header(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(u64::MAX)
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }
    fn json(&self) -> Value {
        deltalens_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    fn error_code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }
}

/// One HTTP/1.1 request (connection closed after it), with a bounded timeout.
fn request(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> Resp {
    let host = base.trim_start_matches("http://").trim_end_matches('/');
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        req.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    req.push_str("\r\n");
    if let Some(b) = body {
        req.push_str(b);
    }
    exchange(base, method, req.as_bytes(), Duration::from_secs(120))
}

/// Send `raw` (a request as bytes, possibly with a body shorter than it announces) and
/// read the response, failing when none comes within `timeout`.
fn exchange(base: &str, method: &str, raw_request: &[u8], timeout: Duration) -> Resp {
    let host = base.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(host).unwrap_or_else(|e| panic!("connect {host}: {e}"));
    s.set_read_timeout(Some(timeout)).unwrap();
    // a server answering before the whole body is sent may close early: the answer counts
    let _ = s.write_all(raw_request);
    // read until the response is complete (the server may keep the connection open)
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let split = loop {
        if let Some(p) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("no answer within {timeout:?} from {host}: {e}"));
        assert!(n > 0, "connection closed before the headers");
        raw.extend_from_slice(&buf[..n]);
    };
    let lower = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let length: Option<usize> = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok());
    let chunked = lower.contains("transfer-encoding: chunked");
    loop {
        let body = &raw[split + 4..];
        let done = match length {
            Some(n) => body.len() >= n,
            None if chunked => body.ends_with(b"0\r\n\r\n"),
            None => {
                method == "OPTIONS"
                    || lower.starts_with("http/1.1 204")
                    || lower.starts_with("http/1.1 304")
            }
        };
        if done {
            break;
        }
        let n = s
            .read(&mut buf)
            .unwrap_or_else(|e| panic!("body not complete within {timeout:?} from {host}: {e}"));
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let nl = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let n = usize::from_str_radix(
                String::from_utf8_lossy(&rest[..nl])
                    .split(';')
                    .next()
                    .unwrap()
                    .trim(),
                16,
            )
            .unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + n]);
            rest = &rest[nl + 2 + n + 2..];
        }
        body = out;
    }
    Resp {
        status,
        headers,
        body,
    }
}

fn query_string(params: &[(&str, &str)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, NON_ALPHANUMERIC)))
        .collect::<Vec<_>>()
        .join("&")
}

impl Env {
    fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }
    fn get(&self, route: &str, params: &[(&str, &str)]) -> Resp {
        let auth = self.auth();
        request(
            &self.worker,
            "GET",
            &format!("{route}?{}", query_string(params)),
            None,
            &[("Authorization", &auth)],
        )
    }
    fn post(&self, sql: &str, params: &[(&str, &str)]) -> Resp {
        let auth = self.auth();
        request(
            &self.worker,
            "POST",
            &format!("/v1/query?{}", query_string(params)),
            Some(sql),
            &[("Authorization", &auth), ("Content-Type", "text/plain")],
        )
    }
    /// The table's URL in each store.
    fn urls(&self, table: &str) -> Vec<(&'static str, String)> {
        vec![
            ("r2", format!("r2://TABLES/{table}")),
            ("http", format!("{}/{table}", self.http)),
            ("s3", format!("s3://deltalens/tables/{table}")),
            (
                "azure",
                format!("abfss://deltalens@devstoreaccount1.dfs.core.windows.net/tables/{table}"),
            ),
        ]
    }
    fn canary_hits(&self) -> u64 {
        std::fs::read_to_string(&self.canary_count)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }
}

/// What the same request gives natively, through the code the CLI runs: `(status, body)`.
fn native(api: ApiRequest, table: &Table) -> (u16, Vec<u8>) {
    let limits = deltalens_api::execute::Limits {
        max_rows: Some(100_000),
        max_rows_buffered: None,
        max_decoded_bytes: None,
    };
    // the health cases pass `now`: this clock is not the worker's
    match runtime().block_on(deltalens_api::respond(api, table, limits, 0)) {
        Ok(a) => (200, a.body),
        Err(e) => (e.status(), e.code().into_bytes()),
    }
}

/// Drop what legitimately differs between stores (the location string).
fn comparable(body: &[u8], json: bool) -> Vec<u8> {
    if !json {
        return body.to_vec();
    }
    let mut v: Value = deltalens_json::from_slice(body).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("location");
    }
    v.to_string().into_bytes()
}

fn params_of(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Each route request (without `table`), tables they apply to.
fn route_cases() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    vec![
        ("/v1/info", vec![]),
        ("/v1/info", vec![("version", "1")]),
        ("/v1/info", vec![("timestamp", "2100-01-01")]),
        ("/v1/health", vec![("now", "2030-01-01")]),
        ("/v1/health", vec![("version", "1"), ("now", "2030-01-01")]),
        ("/v1/schema", vec![]),
        ("/v1/schema", vec![("version", "0")]),
        ("/v1/history", vec![]),
        ("/v1/history", vec![("limit", "2")]),
        ("/v1/files", vec![]),
        ("/v1/files", vec![("version", "1")]),
        ("/v1/scan", vec![("format", "jsonl")]),
        ("/v1/scan", vec![("format", "csv"), ("limit", "7")]),
        ("/v1/scan", vec![("format", "json"), ("version", "1")]),
        ("/v1/scan", vec![("format", "arrow"), ("limit", "100")]),
    ]
}

/// Opening each checkpointed corpus table and returning 100 rows stays within the
/// subrequests it needs (`_last_checkpoint`, the listing, each checkpoint part, each commit
/// after it, each data file and deletion vector), and the same request again reads only the
/// log's tip (the isolate's cache); then every corpus table read through every store equals
/// the corpus' canonical rows. One test, in this order: the corpus reads open the same
/// tables, and the first opens must find the cache cold.
#[test]
fn worker_opens_checkpointed_tables_in_few_subrequests_then_reads_the_corpus_rows() {
    let Some(e) = env() else {
        return;
    };
    let Some(corpus) = conformance_dir() else {
        return;
    };
    {
        let _alone = alone_on_the_isolate();
        first_and_repeated_opens_count_their_subrequests(e, &corpus);
    }
    let _shared = sharing_the_isolate();
    corpus_reads_equal_the_corpus(e, &corpus);
}

/// Subrequests of a first open of a checkpointed table + 100 rows (before any cache), and
/// of the same request repeated.
fn first_and_repeated_opens_count_their_subrequests(e: &Env, corpus: &Path) {
    for name in CHECKPOINTED {
        let local = open_local(&corpus.join("tables").join(name));
        let snap = runtime()
            .block_on(local.snapshot(VersionSpec::Latest))
            .unwrap();
        let cp = snap.checkpoint_version.unwrap();
        let since = snap.version - cp;
        // the checkpoint's parts (a multi-part checkpoint has several)
        let parts = std::fs::read_dir(corpus.join("tables").join(name).join("_delta_log"))
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name();
                let n = n.to_string_lossy();
                n.starts_with(&format!("{cp:020}.checkpoint")) && n.ends_with(".parquet")
            })
            .count() as u64;
        // the data files that hold the first 100 rows, and their deletion vectors
        let (mut rows, mut files, mut dvs) = (0i64, 0u64, 0u64);
        for f in &snap.files {
            if rows >= 100 {
                break;
            }
            files += 1;
            let dv = f.deletion_vector.as_ref();
            dvs += u64::from(dv.is_some_and(|d| d.storage_type != "i"));
            rows += f.num_records().unwrap_or(0) - dv.map_or(0, |d| d.cardinality);
        }
        for (store, url) in e.urls(name) {
            let r = e.get(
                "/v1/scan",
                &[("table", &url), ("limit", "100"), ("format", "arrow")],
            );
            assert_eq!(r.status, 200, "{url}: {}", r.text());
            let n = r.num("x-deltalens-subrequests");
            println!(
                "open + 100 rows, {store:4} {name} ({since} commits after the checkpoint, {files} data files, {dvs} DV files): {n} subrequests, {} bytes, {} rows",
                r.num("x-deltalens-bytes-read"),
                r.num("x-deltalens-rows")
            );
            // _last_checkpoint, listing (or up to two wasted probes), each checkpoint
            // part, each commit after it, then one request per data file (its tail
            // holds small files whole) and per deletion-vector file
            // (Azure has no suffix ranges: a HEAD before each part's and file's tail)
            let per_file = if store == "azure" { 2 } else { 1 };
            let bound = 2 + 2 + per_file * parts + since + per_file * files + dvs;
            assert!(n <= bound, "{url}: {n} subrequests");
            // the same again: answered from the isolate's cache but for the log's tip
            let again = e.get(
                "/v1/scan",
                &[("table", &url), ("limit", "100"), ("format", "arrow")],
            );
            assert_eq!(again.body, r.body);
            let m = again.num("x-deltalens-subrequests");
            println!(
                "  repeated: {m} subrequests, {} bytes",
                again.num("x-deltalens-bytes-read")
            );
            // only the log's tip is read again: _last_checkpoint, and the listing or
            // the names probed past the last commit (a missing name is not cached:
            // the next commit may appear), at most one batch of 4
            let tip = if store == "http" { 1 + 4 } else { 2 };
            assert!(
                m <= tip && m < n,
                "{url}: repeated query made {m} subrequests"
            );
        }
    }
}

/// Corpus rows through every store equal the corpus' canonical rows.
fn corpus_reads_equal_the_corpus(e: &Env, corpus: &Path) {
    let mut agree = 0;
    for name in CORPUS_TABLES {
        let versions: Value = deltalens_json::from_slice(
            &std::fs::read(corpus.join(format!("expected/{name}/versions.json"))).unwrap(),
        )
        .unwrap();
        let latest = versions["latest_version"].as_u64().unwrap();
        let file = versions["versions"][latest.to_string()]["data_file"]
            .as_str()
            .unwrap();
        let want = std::fs::read_to_string(corpus.join(format!("expected/{name}/{file}"))).unwrap();
        let local = open_local(&corpus.join("tables").join(name));
        let snap = runtime()
            .block_on(local.snapshot(VersionSpec::Latest))
            .unwrap();
        for (store, url) in e.urls(name) {
            let r = e.get("/v1/scan", &[("table", &url), ("format", "arrow")]);
            assert_eq!(r.status, 200, "{url}: {}", r.text());
            let reader =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(r.body), None)
                    .unwrap();
            let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
            let mut lines = canonical_lines(&batches, snap.schema.fields());
            lines.sort();
            assert_eq!(
                lines.concat(),
                want,
                "{store} {name}: rows differ from the corpus"
            );
            agree += 1;
        }
    }
    println!(
        "corpus: {agree}/{} table reads through the worker equal the corpus",
        CORPUS_TABLES.len() * 4
    );
}

/// Every route on our fixtures, every store, equal to the CLI's code natively.
#[test]
fn worker_routes_on_every_store_equal_the_native_cli_code() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    let mut equal = 0;
    for name in [
        "demo",
        "checkpointed",
        "column_mapping",
        "partitioned",
        "schema_evolution",
        "cdf",
    ] {
        let local_path = e.store.join(name);
        let local = open_local(&local_path);
        let local_url = local_path.to_string_lossy().to_string();
        for (route, extra) in route_cases() {
            let mut native_params = vec![("table", local_url.as_str())];
            native_params.extend(extra.iter().cloned());
            let api = parse_get(route, &params_of(&native_params)).unwrap();
            let (want_status, want) = native(api, &local);
            let json =
                !matches!(extra.iter().find(|(k, _)| *k == "format"), Some((_, f)) if *f != "json");
            for (store, url) in e.urls(name) {
                let mut params = vec![("table", url.as_str())];
                params.extend(extra.iter().cloned());
                let r = e.get(route, &params);
                if want_status != 200 {
                    assert_eq!(
                        r.status,
                        want_status,
                        "{store} {route} {params:?}: {}",
                        r.text()
                    );
                    continue;
                }
                assert_eq!(r.status, 200, "{store} {route} {params:?}: {}", r.text());
                if route == "/v1/scan" && extra.contains(&("format", "arrow")) {
                    // Arrow IPC: compare the decoded batches
                    let read = |b: Vec<u8>| -> Vec<arrow_array::RecordBatch> {
                        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(b), None)
                            .unwrap()
                            .map(|b| b.unwrap())
                            .collect()
                    };
                    assert_eq!(
                        read(r.body.clone()),
                        read(want.clone()),
                        "{store} {name} arrow"
                    );
                } else {
                    assert_eq!(
                        String::from_utf8_lossy(&comparable(&r.body, json)),
                        String::from_utf8_lossy(&comparable(&want, json)),
                        "{store} {name} {route} {extra:?}"
                    );
                }
                equal += 1;
            }
        }
    }
    println!(
        "routes: {equal} responses (fixtures × routes × 4 stores) equal to the native CLI code"
    );
}

/// Changes and SQL queries, every store, equal to native; `TIMESTAMP AS OF`, and the JSON
/// body form.
#[test]
fn worker_changes_and_queries_equal_the_native_cli_code() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    let demo_local = e.store.join("demo").to_string_lossy().to_string();
    let changes: Vec<Vec<(&str, &str)>> = vec![
        vec![("from", "1"), ("format", "jsonl")],
        vec![
            ("from", "2"),
            ("to", "4"),
            ("columns", "user_id,price"),
            ("format", "jsonl"),
        ],
        vec![
            ("from", "0"),
            ("filter", "price > 500"),
            ("limit", "5"),
            ("format", "jsonl"),
        ],
        vec![("from", "3"), ("to", "3"), ("format", "csv")],
    ];
    let mut n_changes = 0;
    for extra in &changes {
        let mut np = vec![("table", demo_local.as_str())];
        np.extend(extra.iter().cloned());
        let (ws, want) = native(
            parse_get("/v1/changes", &params_of(&np)).unwrap(),
            &open_local(std::path::Path::new(&demo_local)),
        );
        assert_eq!(ws, 200);
        for (store, url) in e.urls("demo") {
            let mut p = vec![("table", url.as_str())];
            p.extend(extra.iter().cloned());
            let r = e.get("/v1/changes", &p);
            assert_eq!(r.status, 200, "{store} {p:?}: {}", r.text());
            assert_eq!(
                r.text(),
                String::from_utf8_lossy(&want),
                "{store} changes {extra:?}"
            );
            n_changes += 1;
        }
    }
    let queries = [
        "SELECT * FROM '{T}'",
        "SELECT brand, COUNT(*) AS n, SUM(price), MIN(price), MAX(price), AVG(price) FROM '{T}' WHERE price > 5 GROUP BY brand ORDER BY n DESC, brand",
        "SELECT event_date, event_type, COUNT(*) FROM '{T}' GROUP BY event_date, event_type ORDER BY 1, 2",
        "SELECT COUNT(*), COUNT(brand), COUNT(referrer), MIN(event_time), MAX(event_date) FROM '{T}'",
        "SELECT user_id, price FROM '{T}' VERSION AS OF 1 WHERE brand = 'nars' ORDER BY price DESC LIMIT 5",
        "SELECT product_id AS p, price FROM '{T}' WHERE event_date = '2019-10-02' AND price BETWEEN 100 AND 300 ORDER BY p NULLS LAST",
        "SELECT _change_type, COUNT(*) FROM table_changes('{T}', 1) GROUP BY _change_type ORDER BY _change_type",
        "SELECT user_id, _change_type, _commit_version FROM table_changes('{T}', 2, 4) WHERE _change_type = 'update_postimage' ORDER BY _commit_version, user_id",
        "SELECT SUM(price) FROM '{T}' WHERE brand IS NULL",
        "SELECT brand FROM '{T}' WHERE price < 0",
    ];
    let mut n_queries = 0;
    for q in queries {
        let sql = q.replace("{T}", &demo_local);
        let (ws, want) = native(
            parse_query(&sql, &params_of(&[("format", "jsonl")])).unwrap(),
            &open_local(std::path::Path::new(&demo_local)),
        );
        assert_eq!(ws, 200, "{sql}");
        for (store, url) in e.urls("demo") {
            let r = e.post(&q.replace("{T}", &url), &[("format", "jsonl")]);
            assert_eq!(r.status, 200, "{store} {q}: {}", r.text());
            assert_eq!(r.text(), String::from_utf8_lossy(&want), "{store} {q}");
            n_queries += 1;
        }
    }
    // TIMESTAMP AS OF: a time after the last commit is refused with the valid range (R2
    // objects carry their upload times); each end of that range reads its version
    let future = e.post(
        "SELECT * FROM 'r2://TABLES/demo' TIMESTAMP AS OF '2100-01-01'",
        &[],
    );
    assert_eq!(
        (future.status, future.error_code()),
        (404, "version_not_found".into())
    );
    let message = future.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    let range: Vec<&str> = message
        .split("between ")
        .nth(1)
        .unwrap()
        .split(' ')
        .filter(|w| w.ends_with('Z'))
        .collect();
    assert_eq!(range.len(), 2, "{message}");
    for (ts, v) in [(range[0], 0), (range[1], 6)] {
        let at = e.post(
            &format!("SELECT * FROM 'r2://TABLES/demo' TIMESTAMP AS OF '{ts}'"),
            &[("format", "jsonl")],
        );
        let want = e.post(
            &format!("SELECT * FROM 'r2://TABLES/demo' VERSION AS OF {v}"),
            &[("format", "jsonl")],
        );
        assert_eq!(at.status, 200);
        assert!(
            at.body == want.body,
            "TIMESTAMP AS OF {ts} differs from VERSION AS OF {v}"
        );
    }
    // the JSON body form and the other formats
    let r = e.post(
        "{\"sql\": \"SELECT COUNT(*) AS n FROM 'r2://TABLES/demo'\", \"format\": \"csv\"}",
        &[],
    );
    assert_eq!((r.status, r.text()), (200, "n\n361\n".to_string()));
    println!("changes: {n_changes}, queries: {n_queries} responses equal to the native CLI code");
}

/// The allowlist: other tables are refused before any request (the canary host counts the
/// requests it gets; no other test sends it any).
#[test]
fn worker_allowlist_refuses_other_tables_before_any_request() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    let before = e.canary_hits();
    let refused = [
        format!("{}/tables/demo", e.canary),
        format!("{}/../secret.txt", e.http),
        format!("{}/%2e%2e/secret.txt", e.http),
        format!("{}2/demo", e.http),
        "s3://other-bucket/tables/demo".to_string(),
        "r2://OTHER/demo".to_string(),
        "https://example.com/t".to_string(),
        "file:///etc/passwd".to_string(),
    ];
    for url in &refused {
        let r = e.get("/v1/info", &[("table", url)]);
        assert_eq!(
            (r.status, r.error_code()),
            (403, "table_not_allowed".into()),
            "{url}"
        );
        let r = e.post(&format!("SELECT * FROM '{url}'"), &[]);
        assert_eq!(r.status, 403, "{url}");
        let r = e.post(&format!("SELECT * FROM table_changes('{url}', 0)"), &[]);
        assert_eq!(r.status, 403, "{url}");
    }
    assert_eq!(
        e.canary_hits(),
        before,
        "a refused table URL reached its host"
    );
    println!(
        "allowlist: {} URLs refused with 403, 0 requests reached the canary host",
        refused.len()
    );
}

/// Bearer auth, and CORS for the allowed origin only.
#[test]
fn worker_requires_the_bearer_token_and_allows_its_origin() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    let r = request(
        &e.worker,
        "GET",
        "/v1/info?table=r2%3A%2F%2FTABLES%2Fdemo",
        None,
        &[],
    );
    assert_eq!((r.status, r.error_code()), (401, "unauthorized".into()));
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    let r = request(
        &e.worker,
        "GET",
        "/v1/info?table=r2%3A%2F%2FTABLES%2Fdemo",
        None,
        &[("Authorization", "Bearer wrong")],
    );
    assert_eq!(r.status, 401);
    let r = request(
        &e.worker,
        "OPTIONS",
        "/v1/query",
        None,
        &[
            ("Origin", "http://app.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
    );
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://app.example")
    );
    assert!(
        r.header("access-control-allow-headers")
            .unwrap_or("")
            .contains("authorization")
    );
    let r = request(
        &e.worker,
        "OPTIONS",
        "/v1/query",
        None,
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(r.header("access-control-allow-origin"), None);
    let auth = e.auth();
    let r = request(
        &e.worker,
        "GET",
        "/v1/info?table=r2%3A%2F%2FTABLES%2Fdemo",
        None,
        &[("Authorization", &auth), ("Origin", "http://app.example")],
    );
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("http://app.example")
    );
    assert!(
        r.header("access-control-expose-headers")
            .unwrap_or("")
            .contains("x-deltalens-subrequests")
    );
}

/// Each budget refuses with its own code, malformed requests are answered with the 4xx
/// naming the problem, and every codec the worker is built with decodes. One test, in this
/// order: the bytes budget reads the `codecs` fixture on a cold cache, and the other two
/// read that table.
#[test]
fn worker_refuses_each_budget_and_malformed_request_by_name_then_decodes_its_codecs() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    budgets_refuse_with_their_code(e);
    malformed_requests_get_a_4xx_naming_the_problem(e);
    every_built_codec_decodes(e);
}

/// Budgets, each named.
fn budgets_refuse_with_their_code(e: &Env) {
    let budget = |params: &[(&str, &str)], code: &str, status: u16| {
        let r = e.get("/v1/scan", params);
        assert_eq!(
            (r.status, r.error_code()),
            (status, code.to_string()),
            "{params:?}: {}",
            r.text()
        );
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("budget")
        );
        // the error says what was spent before it, as an answer does
        for h in ["x-deltalens-subrequests", "x-deltalens-bytes-read"] {
            let n = r.header(h).and_then(|v| v.parse::<u64>().ok());
            assert!(n.is_some(), "{params:?}: no {h}");
        }
        println!(
            "budget: {code} -> {status}: {}",
            r.json()["error"]["message"]
        );
    };
    budget(
        &[("table", "r2://TABLES/demo"), ("budget_rows", "100")],
        "rows_budget_exceeded",
        413,
    );
    budget(
        &[("table", "r2://TABLES/demo"), ("budget_subrequests", "1")],
        "subrequests_budget_exceeded",
        413,
    );
    // tables nobody else reads here, so nothing is cached yet
    budget(
        &[("table", "r2://TABLES/codecs"), ("budget_bytes", "2000")],
        "bytes_budget_exceeded",
        413,
    );
    // decoding (Parquet pages into Arrow arrays) is budgeted apart from bytes read
    budget(
        &[
            ("table", "r2://TABLES/demo"),
            ("budget_decoded_bytes", "1000"),
        ],
        "decoded_bytes_budget_exceeded",
        413,
    );
    budget(
        &[
            ("table", "s3://deltalens/tables/row_groups"),
            ("budget_ms", "1"),
        ],
        "wall_time_ms_budget_exceeded",
        408,
    );
    let r = e.post(
        "SELECT brand, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY brand",
        &[("budget_rows", "3")],
    );
    assert_eq!(r.error_code(), "rows_budget_exceeded");
    let r = e.get(
        "/v1/scan",
        &[
            ("table", "r2://TABLES/demo"),
            ("budget_rows", "100"),
            ("limit", "100"),
        ],
    );
    assert_eq!(r.status, 200, "a LIMIT within the budget is fine");
    // a budget larger than the isolate's usize (32 bits on wasm32) lowers nothing: it was
    // cut to 1 before
    let r = e.get(
        "/v1/scan",
        &[
            ("table", "r2://TABLES/demo"),
            ("budget_rows", "4294967297"),
            ("budget_rows_buffered", "4294967297"),
            ("limit", "100"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    // a file list longer than the rows budget is refused with a hint to page; pages
    // within it are served (checkpointed: 21 files)
    let files = |extra: &[(&str, &str)]| {
        let mut params = vec![
            ("table", "s3://deltalens/tables/checkpointed"),
            ("budget_rows", "5"),
        ];
        params.extend_from_slice(extra);
        e.get("/v1/files", &params)
    };
    for too_many in [vec![], vec![("offset", "15")], vec![("limit", "6")]] {
        let r = files(&too_many);
        assert_eq!(
            (r.status, r.error_code()),
            (413, "rows_budget_exceeded".to_string()),
            "{too_many:?}: {}",
            r.text()
        );
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("offset"), "{message}");
    }
    let page = files(&[("limit", "5"), ("offset", "3")]);
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(page.json().as_array().unwrap().len(), 5);
    let tail = files(&[("offset", "17")]);
    assert_eq!(tail.status, 200, "{}", tail.text());
    assert_eq!(tail.json().as_array().unwrap().len(), 4);
}

/// Malformed requests: 4xx naming the problem.
fn malformed_requests_get_a_4xx_naming_the_problem(e: &Env) {
    let auth = e.auth();
    let bad_sql = [
        ("SELEC * FROM 'r2://TABLES/demo'", "syntax_error", ""),
        (
            "SELECT upper(brand) FROM 'r2://TABLES/demo'",
            "unsupported",
            "upper",
        ),
        (
            "SELECT DISTINCT brand FROM 'r2://TABLES/demo'",
            "unsupported",
            "DISTINCT",
        ),
        (
            "SELECT a.x FROM 'r2://TABLES/demo' a JOIN 'r2://TABLES/cdf' b ON a.x = b.x",
            "unsupported",
            "JOIN",
        ),
        (
            "SELECT brand FROM 'r2://TABLES/demo' LIMIT 1 OFFSET 1",
            "unsupported",
            "OFFSET",
        ),
        ("DELETE FROM 'r2://TABLES/demo'", "unsupported", "DELETE"),
        (
            "SELECT brand, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY brand HAVING COUNT(*) > 1",
            "unsupported",
            "HAVING",
        ),
        (
            "SELECT price, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY brand",
            "invalid_column",
            "GROUP BY",
        ),
        (
            "SELECT nope FROM 'r2://TABLES/demo'",
            "invalid_argument",
            "nope",
        ),
        (
            "SELECT SUM(brand) FROM 'r2://TABLES/demo'",
            "invalid_column",
            "numeric",
        ),
        (
            "SELECT * FROM 'r2://TABLES/demo' VERSION AS OF 99",
            "version_not_found",
            "99",
        ),
        (
            "SELECT * FROM 'r2://TABLES/demo' WHERE price >",
            "syntax_error",
            "",
        ),
        ("", "invalid_parameter", "sql"),
    ];
    for (sql, code, word) in bad_sql {
        let r = e.post(sql, &[]);
        assert!(
            (400..500).contains(&r.status),
            "{sql}: {} {}",
            r.status,
            r.text()
        );
        assert_eq!(r.error_code(), code, "{sql}: {}", r.text());
        assert!(r.text().contains(word), "{sql}: {}", r.text());
    }
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16, &'a str);
    let bad_get: Vec<Case> = vec![
        ("/v1/info", vec![], 400, "invalid_parameter"),
        (
            "/v1/scan",
            vec![("table", "r2://TABLES/demo"), ("limt", "3")],
            400,
            "invalid_parameter",
        ),
        (
            "/v1/scan",
            vec![("table", "r2://TABLES/demo"), ("format", "xml")],
            400,
            "invalid_parameter",
        ),
        (
            "/v1/scan",
            vec![("table", "r2://TABLES/demo"), ("filter", "price >")],
            400,
            "invalid_parameter",
        ),
        (
            "/v1/scan",
            vec![("table", "r2://TABLES/demo"), ("budget_rows", "x")],
            400,
            "invalid_parameter",
        ),
        (
            "/v1/changes",
            vec![("table", "r2://TABLES/demo")],
            400,
            "invalid_parameter",
        ),
        (
            "/v1/changes",
            vec![("table", "r2://TABLES/partitioned"), ("from", "0")],
            409,
            "change_data_feed_not_enabled",
        ),
        (
            "/v1/scan",
            vec![("table", "r2://TABLES/column_mapping"), ("format", "csv")],
            400,
            "invalid_parameter",
        ),
        // the worker is built without the brotli codec; one file of this fixture uses it
        (
            "/v1/scan",
            vec![("table", "r2://TABLES/codecs")],
            501,
            "codec_not_built",
        ),
        (
            "/v1/info",
            vec![("table", "r2://TABLES/no_such_table")],
            404,
            "not_a_table",
        ),
        (
            "/v1/info",
            vec![("table", "r2://TABLES/demo"), ("version", "42")],
            404,
            "version_not_found",
        ),
        (
            "/v1/info",
            vec![("table", "r2://TABLES/demo"), ("timestamp", "1999-01-01")],
            404,
            "version_not_found",
        ),
        ("/v1/nothing", vec![], 400, "invalid_parameter"),
        ("/elsewhere", vec![], 404, "not_found"),
    ];
    for (route, params, status, code) in &bad_get {
        let r = e.get(route, params);
        assert_eq!(
            (r.status, r.error_code()),
            (*status, code.to_string()),
            "{route} {params:?}: {}",
            r.text()
        );
    }
    let r = request(
        &e.worker,
        "GET",
        "/v1/query",
        None,
        &[("Authorization", &auth)],
    );
    assert_eq!(r.status, 405);
    let r = request(
        &e.worker,
        "DELETE",
        "/v1/info?table=r2%3A%2F%2FTABLES%2Fdemo",
        None,
        &[("Authorization", &auth)],
    );
    assert_eq!(r.status, 405);
    println!(
        "malformed: {} queries and {} requests answered with their 4xx (501 for the codec left out) naming the problem",
        bad_sql.len(),
        bad_get.len() + 2
    );
}

/// Every codec the worker is built with decodes (snappy, gzip, lz4, zstd, none): the
/// filter skips the one brotli file by its statistics, so it is never opened. Last: the
/// budget cases above read this table with a cold cache.
fn every_built_codec_decodes(e: &Env) {
    let codecs = e.store.join("codecs");
    let codecs_local = codecs.to_string_lossy().to_string();
    let filter = [("filter", "codec <> 'BROTLI'"), ("format", "jsonl")];
    let mut native_params = vec![("table", codecs_local.as_str())];
    native_params.extend(filter);
    let (status, want) = native(
        parse_get("/v1/scan", &params_of(&native_params)).unwrap(),
        &open_local(&codecs),
    );
    assert_eq!(status, 200);
    let want = String::from_utf8(want).unwrap();
    let seen: std::collections::BTreeSet<String> = want
        .lines()
        .map(|line| {
            let row: Value = deltalens_json::from_str(line).unwrap();
            row["codec"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        ["GZIP", "LZ4_RAW", "SNAPPY", "UNCOMPRESSED", "ZSTD"]
    );
    assert_eq!(want.lines().count(), 500);
    for (store, url) in e.urls("codecs") {
        let mut params = vec![("table", url.as_str())];
        params.extend(filter);
        let r = e.get("/v1/scan", &params);
        assert_eq!(r.status, 200, "{store} codecs: {}", r.text());
        assert_eq!(r.text(), want, "{store} codecs");
    }
    println!(
        "codecs: 500 rows in 5 codecs (zstd among them) equal to the native CLI code on 4 stores"
    );
}

/// `POST /v1/query` bodies over the 64 KiB cap are refused with a 413 naming the limit:
/// when `Content-Length` announces too much, before any of the body is read (the body is
/// never sent here, so a worker waiting for it times out); when no length is announced
/// (chunked), as soon as the bytes streamed pass the cap.
#[test]
fn worker_refuses_large_query_bodies_before_reading_them() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    let host = e.worker.trim_start_matches("http://").to_string();
    let auth = e.auth();
    let head = |extra: &str| {
        format!(
            "POST /v1/query HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nAuthorization: {auth}\r\nContent-Type: text/plain\r\n{extra}\r\n"
        )
    };
    let started = std::time::Instant::now();
    let r = exchange(
        &e.worker,
        "POST",
        head("Content-Length: 10000000\r\n").as_bytes(),
        Duration::from_secs(20),
    );
    assert_eq!(
        (r.status, r.error_code()),
        (413, "query_too_large".to_string()),
        "{}",
        r.text()
    );
    assert!(r.text().contains("65536"), "{}", r.text());
    println!(
        "body: Content-Length 10000000 refused in {:?} without the body: {}",
        started.elapsed(),
        r.json()["error"]["message"]
    );
    // chunked, 100 KiB: refused while streaming
    let mut raw = head("Transfer-Encoding: chunked\r\n").into_bytes();
    let chunk = format!("{}{}", "SELECT 1 ", " ".repeat(4096 - 9));
    for _ in 0..25 {
        raw.extend_from_slice(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes());
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    let r = exchange(&e.worker, "POST", &raw, Duration::from_secs(20));
    assert_eq!(
        (r.status, r.error_code()),
        (413, "query_too_large".to_string()),
        "{}",
        r.text()
    );
    // chunked within the cap: answered
    let sql = "SELECT COUNT(*) AS n FROM 'r2://TABLES/demo'";
    let mut raw = head("Transfer-Encoding: chunked\r\n").into_bytes();
    for part in [&sql[..20], &sql[20..]] {
        raw.extend_from_slice(format!("{:x}\r\n{part}\r\n", part.len()).as_bytes());
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    let r = exchange(&e.worker, "POST", &raw, Duration::from_secs(60));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("361"), "{}", r.text());
}

/// A store that accepts connections and never answers: the request ends with the 408
/// wall-time error when its `budget_ms` is up, not when the store gives up.
#[test]
fn worker_ends_stalled_fetches_at_the_wall_time_budget() {
    let Some(e) = env() else {
        return;
    };
    let Some(staller) = &e.staller else {
        eprintln!("SKIPPED: DELTALENS_WORKER_STALLER is not set (scripts/worker-test sets it)");
        return;
    };
    let _shared = sharing_the_isolate();
    let url = format!("{staller}/stall/demo");
    let started = std::time::Instant::now();
    let auth = e.auth();
    let path = format!(
        "/v1/info?{}",
        query_string(&[("table", &url), ("budget_ms", "1500")])
    );
    let raw = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAuthorization: {auth}\r\n\r\n",
        e.worker.trim_start_matches("http://")
    );
    let r = exchange(&e.worker, "GET", raw.as_bytes(), Duration::from_secs(30));
    let took = started.elapsed();
    assert_eq!(
        (r.status, r.error_code()),
        (408, "wall_time_ms_budget_exceeded".to_string()),
        "{}",
        r.text()
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    println!(
        "stalled store: 408 after {took:?} (budget_ms=1500): {}",
        r.json()["error"]["message"]
    );
}

/// Rows held in memory for ORDER BY, and the groups held for GROUP BY (aggregates fold
/// batch by batch: a few groups over many rows hold little), have their own budget.
#[test]
fn worker_bounds_the_rows_it_buffers() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    // 361 rows in 9 groups: within 100
    let r = e.post(
        "SELECT brand, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY brand",
        &[("budget_rows_buffered", "100")],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    for sql in [
        // 361 groups
        "SELECT event_time, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY event_time",
        "SELECT user_id FROM 'r2://TABLES/demo' ORDER BY price DESC LIMIT 3",
    ] {
        let r = e.post(sql, &[("budget_rows_buffered", "100")]);
        assert_eq!(
            (r.status, r.error_code()),
            (413, "rows_buffered_budget_exceeded".to_string()),
            "{sql}: {}",
            r.text()
        );
        println!("rows buffered: {}", r.json()["error"]["message"]);
        let r = e.post(sql, &[("budget_rows_buffered", "361")]);
        assert_eq!(r.status, 200, "{sql}: {}", r.text());
    }
}

/// A worker with neither `DELTALENS_AUTH_TOKEN` nor `DELTALENS_PUBLIC = "true"` serves
/// nothing (503 `not_configured` naming both); `DELTALENS_PUBLIC = "true"` serves without
/// a token. scripts/worker-test starts one worker of each kind.
#[test]
fn worker_serves_only_once_configured() {
    let Some((unconfigured, public)) = &vars().unconfigured_and_public else {
        eprintln!(
            "SKIPPED: DELTALENS_WORKER_UNCONFIGURED_URL is not set (scripts/worker-test sets it)"
        );
        return;
    };
    let info = "/v1/info?table=r2%3A%2F%2FTABLES%2Fdemo";
    let cases: [(&str, &str, Option<&str>); 5] = [
        ("GET", "/", None),
        ("GET", info, None),
        (
            "POST",
            "/v1/query",
            Some("SELECT * FROM 'r2://TABLES/demo'"),
        ),
        ("OPTIONS", "/v1/query", None),
        ("GET", "/nowhere", None),
    ];
    for (method, path, body) in cases {
        let r = request(
            unconfigured,
            method,
            path,
            body,
            &[
                ("Authorization", "Bearer anything"),
                ("Origin", "http://app.example"),
            ],
        );
        assert_eq!(
            (r.status, r.error_code()),
            (503, "not_configured".to_string()),
            "{method} {path}: {}",
            r.text()
        );
        let text = r.text();
        assert!(
            text.contains("DELTALENS_AUTH_TOKEN") && text.contains("DELTALENS_PUBLIC"),
            "{text}"
        );
    }
    println!(
        "unconfigured: {} requests answered 503 not_configured",
        cases.len()
    );
    let r = request(public, "GET", info, None, &[]);
    assert_eq!(r.status, 200, "public worker: {}", r.text());
    assert_eq!(r.json()["version"], 6, "{}", r.text());
}

/// `POST /v1/query` of `sql` to the worker at `base`, rows as JSON lines.
fn query_jsonl(base: &str, sql: &str) -> Resp {
    request(base, "POST", "/v1/query?format=jsonl", Some(sql), &[])
}

/// The fan-out worker the environment variable `var` names (scripts/worker-test sets it)
/// and the public worker it is compared with; `None` (the test skipped) without them.
fn fan_out_and_public(var: &str) -> Option<(String, &'static str)> {
    let workers = std::env::var(var)
        .ok()
        .zip(vars().unconfigured_and_public.as_ref());
    if workers.is_none() {
        eprintln!("SKIPPED: {var} is not set (scripts/worker-test sets it)");
    }
    workers.map(|(fanned, (_, public))| (fanned, public.as_str()))
}

/// Fan-out: a worker with `DELTALENS_FANOUT_BYTES=1` and width 3 answers every table query
/// over 3 splits, each sent to another instance through its service binding to itself
/// (`POST /v1/partial`), and merges them; the answers equal the same worker build's
/// without fan-out, byte for byte. Each split gets its share of the request's budgets. A
/// change feed is not split. `/v1/partial` answers only calls carrying the fan-out's
/// secret (403 otherwise; 404 where fan-out is off), and refuses malformed bodies and
/// splits that leave their table.
#[test]
fn worker_fans_large_queries_out_to_its_own_instances() {
    let Some((fanout, public)) = fan_out_and_public("DELTALENS_WORKER_FANOUT_URL") else {
        return;
    };
    let queries = [
        "SELECT COUNT(*) FROM 'r2://TABLES/demo'",
        "SELECT brand, COUNT(*) AS n, SUM(price), MIN(price), MAX(price), AVG(price) FROM 'r2://TABLES/demo' WHERE price > 5 GROUP BY brand ORDER BY n DESC, brand",
        "SELECT event_date, event_type, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY event_date, event_type ORDER BY 1, 2",
        "SELECT COUNT(*), COUNT(brand), MIN(event_time), MAX(event_date) FROM 'r2://TABLES/demo' VERSION AS OF 3",
        "SELECT user_id, price, event_time FROM 'r2://TABLES/demo' WHERE brand = 'nars' ORDER BY price DESC, event_time, user_id LIMIT 5",
        "SELECT SUM(price) FROM 'r2://TABLES/demo' WHERE brand IS NULL",
    ];
    let mut tree_bytes = [0u64; 3];
    for sql in queries {
        let f = query_jsonl(&fanout, sql);
        let p = query_jsonl(public, sql);
        assert_eq!(f.status, 200, "{sql}: {}", f.text());
        // 3 splits of the latest version's 5 files; version 3 has 2 files, so 2 splits
        let want = if sql.contains("VERSION AS OF 3") {
            "2"
        } else {
            "3"
        };
        assert_eq!(
            f.header("x-deltalens-splits"),
            Some(want),
            "{sql}: not fanned out as planned"
        );
        assert_eq!(p.header("x-deltalens-splits"), None);
        assert_eq!(f.text(), p.text(), "{sql}");
        // the answer reports the tree: one call per split (none failed), and what the
        // split workers read beside what the coordinator did
        assert_eq!(f.header("x-deltalens-split-calls"), Some(want), "{sql}");
        let n = |r: &Resp, h: &str| -> u64 {
            r.header(h)
                .unwrap_or_else(|| panic!("{sql}: no {h}"))
                .parse()
                .unwrap()
        };
        tree_bytes[0] += n(&f, "x-deltalens-bytes-read");
        tree_bytes[1] += n(&f, "x-deltalens-splits-bytes-read");
        tree_bytes[2] += n(&p, "x-deltalens-bytes-read");
        n(&f, "x-deltalens-splits-subrequests");
    }
    // the split workers read the data (their files' footers and pages; the coordinator
    // the log). Cache hits cost nothing, so the figures depend on what each isolate has
    // read before: they are printed, not compared
    assert!(
        tree_bytes[1] > 0,
        "the split workers read nothing: {tree_bytes:?}"
    );
    println!(
        "worker: 6 fanned-out queries read {} B at the coordinator + {} B at the split workers; the unfanned worker (warm) {} B",
        tree_bytes[0], tree_bytes[1], tree_bytes[2]
    );
    // a scan fans out too: the same rows (in the splits' order, so compared sorted), and
    // a limit returns that many of them
    let scan = "/v1/scan?table=r2%3A%2F%2FTABLES%2Fdemo&columns=user_id,brand,price&filter=price%20%3E%205&format=jsonl";
    let (f, p) = (
        request(&fanout, "GET", scan, None, &[]),
        request(public, "GET", scan, None, &[]),
    );
    assert_eq!(
        (f.status, f.header("x-deltalens-splits")),
        (200, Some("3")),
        "{}",
        f.text()
    );
    let lines = |t: String| {
        let mut l: Vec<String> = t.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    let all = lines(p.text());
    assert!(all.len() > 10);
    assert_eq!(lines(f.text()), all);
    let f = request(&fanout, "GET", &format!("{scan}&limit=7"), None, &[]);
    assert_eq!(f.status, 200, "{}", f.text());
    let some = lines(f.text());
    assert_eq!(some.len(), 7);
    assert!(some.iter().all(|l| all.contains(l)), "rows of the table");
    // each split gets a third of the buffered-rows budget: 361 groups (one per row) fit
    // the unfanned worker's 361, but one of 3 splits holds at least 121, over its 120
    let grouped =
        "SELECT event_time, COUNT(*) FROM 'r2://TABLES/demo' GROUP BY event_time ORDER BY 1";
    let path = "/v1/query?format=jsonl&budget_rows_buffered=361";
    let p = request(public, "POST", path, Some(grouped), &[]);
    assert_eq!(p.status, 200, "{}", p.text());
    let f = request(&fanout, "POST", path, Some(grouped), &[]);
    assert_eq!(
        (f.status, f.error_code()),
        (413, "rows_buffered_budget_exceeded".into()),
        "{}",
        f.text()
    );
    assert!(f.text().contains("split "), "{}", f.text());
    // a change feed runs where it is asked
    let cdf = "SELECT _change_type, COUNT(*) FROM table_changes('r2://TABLES/demo', 1) GROUP BY _change_type ORDER BY 1";
    let f = query_jsonl(&fanout, cdf);
    assert_eq!(
        (f.status, f.header("x-deltalens-splits")),
        (200, None),
        "{}",
        f.text()
    );
    assert_eq!(f.text(), query_jsonl(public, cdf).text());
    // the partial route answers only the fan-out's own calls (they carry its secret), and
    // is no route where fan-out is off
    let secret = std::env::var("DELTALENS_WORKER_FANOUT_SECRET").unwrap_or_default();
    let count = serde_json::json!({"sql": "SELECT COUNT(*) FROM 'r2://TABLES/demo'", "split": {}})
        .to_string();
    for headers in [
        vec![],
        vec![("x-deltalens-fanout-secret", "guess-guess-guess-guess")],
    ] {
        let r = request(&fanout, "POST", "/v1/partial", Some(&count), &headers);
        assert_eq!(
            (r.status, r.error_code()),
            (403, "forbidden".into()),
            "{}",
            r.text()
        );
    }
    let r = request(public, "POST", "/v1/partial", Some(&count), &[]);
    assert_eq!(
        (r.status, r.error_code()),
        (404, "not_found".into()),
        "{}",
        r.text()
    );
    // malformed bodies and a split outside its table, with the secret
    let with_secret = [("x-deltalens-fanout-secret", secret.as_str())];
    let partial = |body: &str| request(&fanout, "POST", "/v1/partial", Some(body), &with_secret);
    let r = partial("not json");
    assert_eq!(
        (r.status, r.error_code()),
        (400, "invalid_parameter".into()),
        "{}",
        r.text()
    );
    let plan = runtime().block_on(async {
        let t = open_local(&fixtures_dir().join("demo"));
        let info = t
            .version_info(deltalens_core::VersionSpec::Latest)
            .await
            .unwrap();
        info.plan(&Default::default(), &Default::default())
            .await
            .unwrap()
    });
    let mut evil = plan.splits[0].clone();
    evil.files[0].path = "../../../other/secret.parquet".into();
    let body = serde_json::json!({"sql": "SELECT COUNT(*) FROM 'r2://TABLES/demo'", "split": evil})
        .to_string();
    let r = partial(&body);
    assert!(
        r.status >= 400 && r.text().contains("secret.parquet"),
        "{} {}",
        r.status,
        r.text()
    );
    let body = serde_json::json!({"sql": "SELECT COUNT(*) FROM 'r2://TABLES/nope/../demo'", "split": plan.splits[0]}).to_string();
    assert!(partial(&body).status >= 400);
    println!(
        "fan-out: {} queries over 2-3 splits equal to the unfanned worker's answers",
        queries.len()
    );
}

/// The queries a fanned-out worker answers over a table of `schema` (`{T}`: the table):
/// a count, the first integer or decimal column's aggregates (float sums depend on the
/// order of the additions), the first numeric column's extremes, and a GROUP BY on the
/// first column that can be a key.
fn fan_out_queries(schema: &arrow_schema::Schema) -> Vec<String> {
    use arrow_schema::DataType as D;
    let mut out = vec!["SELECT COUNT(*) FROM '{T}'".to_string()];
    let q = |c: &str| c.to_string();
    // plain names only: the query subset has no quoted identifiers
    let plain = |c: &str| {
        c.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && c.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let fields: Vec<_> = schema.fields().iter().filter(|f| plain(f.name())).collect();
    let exact = |t: &D| {
        matches!(
            t,
            D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::Decimal128(..)
        )
    };
    if let Some(f) = fields.iter().find(|f| exact(f.data_type())) {
        let c = q(f.name());
        out.push(format!(
            "SELECT COUNT({c}), SUM({c}), MIN({c}), MAX({c}), AVG({c}) FROM '{{T}}'"
        ));
    }
    if let Some(f) = fields
        .iter()
        .find(|f| numeric(f.data_type()) && !exact(f.data_type()))
    {
        let c = q(f.name());
        out.push(format!(
            "SELECT MIN({c}), MAX({c}), COUNT({c}) FROM '{{T}}'"
        ));
    }
    if let Some(f) = fields.iter().find(|f| groupable(f.data_type())) {
        let c = q(f.name());
        out.push(format!(
            "SELECT {c}, COUNT(*) FROM '{{T}}' GROUP BY {c} ORDER BY {c} NULLS FIRST"
        ));
    }
    out
}

/// Fan-out on the corpus tables the worker tests read: each answer of the fanned-out
/// worker (3 splits where a table has the files) equals one worker's and the CLI code's,
/// natively.
#[test]
fn worker_fan_out_answers_the_corpus_as_one_worker_and_the_cli() {
    let Some((fanout, public)) = fan_out_and_public("DELTALENS_WORKER_FANOUT_URL") else {
        return;
    };
    let Some(corpus) = conformance_dir() else {
        eprintln!("SKIPPED: no conformance corpus");
        return;
    };
    let (mut compared, mut answered, mut fanned, mut splits) = (0, 0, 0, 0);
    for name in CORPUS_TABLES {
        let path = corpus.join("tables").join(name);
        let local = open_local(&path);
        let snap = runtime()
            .block_on(local.snapshot(VersionSpec::Latest))
            .unwrap();
        let schema = snap.schema.to_arrow().unwrap();
        for q in fan_out_queries(&schema) {
            let r2 = q.replace("{T}", &format!("r2://TABLES/{name}"));
            let parsed = parse_query(
                &q.replace("{T}", &path.to_string_lossy()),
                &params_of(&[("format", "jsonl")]),
            );
            let (status, want) = match parsed {
                Ok(api) => native(api, &local),
                Err(e) => (e.status(), e.code().into_bytes()),
            };
            let (f, p) = (query_jsonl(&fanout, &r2), query_jsonl(public, &r2));
            assert_eq!((f.status, f.text()), (p.status, p.text()), "{name}: {r2}");
            if status == 200 {
                answered += 1;
                assert_eq!(f.text(), String::from_utf8_lossy(&want), "{name}: {r2}");
            } else {
                assert_eq!(f.status, status, "{name}: {r2}: {}", f.text());
            }
            if let Some(n) = f.header("x-deltalens-splits") {
                fanned += 1;
                splits += n.parse::<usize>().unwrap();
            }
            compared += 1;
        }
    }
    println!(
        "fan-out: {compared} queries ({answered} answered, the rest refused alike) over {} corpus tables equal to one worker's and the CLI code's; {fanned} fanned out over {splits} splits (tables of one file are answered whole)",
        CORPUS_TABLES.len()
    );
    assert!(fanned >= 5, "only {fanned} queries fanned out");
    assert!(
        answered * 4 >= compared * 3,
        "only {answered} of {compared} answered"
    );
}

/// The client's sub-request budget (`budget_subrequests`) holds for the whole fan-out
/// tree: the splits share what the coordinator leaves of it (the configured
/// `DELTALENS_MAX_SUBREQUESTS` is per invocation, as Cloudflare's limit is). On the flaky
/// coordinator, whose isolates cache nothing, so each split reads its files every time:
/// every budget is met by an answer within it, equal to the unbounded one, or by a 413
/// naming the budget; also when each split's first call reads and then fails, so that
/// its retry must be paid from what is left.
#[test]
fn worker_fan_out_shares_the_clients_subrequest_budget() {
    let Some((flaky, _)) = fan_out_and_public("DELTALENS_WORKER_FLAKY_URL") else {
        return;
    };
    let summed = "SELECT SUM(price), COUNT(*) FROM 'r2://TABLES/demo' WHERE price > 1";
    let used = |r: &Resp| -> u64 {
        ["x-deltalens-subrequests", "x-deltalens-splits-subrequests"]
            .iter()
            .map(|h| r.header(h).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
            .sum()
    };
    let whole = query_jsonl(&flaky, summed);
    assert_eq!(whole.status, 200, "{}", whole.text());
    assert_eq!(whole.header("x-deltalens-splits"), Some("3"));
    let need = used(&whole);
    let coordinator: u64 = whole
        .header("x-deltalens-subrequests")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // the coordinator reads the log, each of the 3 splits its files
    assert!(need > 3, "the tree made {need} requests");
    let mut answered = Vec::new();
    for budget in [0, 1, need / 2, need - 1, need, 3 * need + 3] {
        let path = format!("/v1/query?format=jsonl&budget_subrequests={budget}");
        let r = request(&flaky, "POST", &path, Some(summed), &[]);
        if r.status == 200 {
            assert!(
                used(&r) <= budget,
                "budget_subrequests={budget}: the tree made {} requests",
                used(&r)
            );
            assert_eq!(r.header("x-deltalens-splits"), Some("3"));
            assert_eq!(r.text(), whole.text());
            answered.push(budget);
            continue;
        }
        assert_eq!(
            (r.status, r.error_code()),
            (413, "subrequests_budget_exceeded".into()),
            "budget_subrequests={budget}: {}",
            r.text()
        );
        if budget == need - 1 {
            // the coordinator's reads fit; the splits' shares together do not
            assert!(r.text().contains("split "), "{}", r.text());
        }
    }
    // with 3 times what the whole tree needed, every split has enough of its own
    assert!(
        answered.contains(&(3 * need + 3)),
        "answered within {answered:?} of {need}"
    );
    // retries are paid from the same budget: each split's first call reads its files and
    // then fails (reporting what it spent), so the tree reads everything twice, and is
    // answered only within a budget that holds both
    let mut retried = Vec::new();
    for budget in (need..=2 * need).chain([3 * need + 3, 6 * need + 6]) {
        let sql = format!("{summed} /* deltalens-test-split-reads-then-fails {budget} */");
        let path = format!("/v1/query?format=jsonl&budget_subrequests={budget}");
        let r = request(&flaky, "POST", &path, Some(&sql), &[]);
        if r.status != 200 {
            assert_eq!(
                (r.status, r.error_code()),
                (413, "subrequests_budget_exceeded".into()),
                "budget_subrequests={budget}, retried: {}",
                r.text()
            );
            continue;
        }
        // the failed attempts' reads are in the tree's figures: at least twice the splits'
        assert!(
            used(&r) <= budget && used(&r) >= 2 * need - 2 * coordinator,
            "budget_subrequests={budget}, retried: the tree reported {} requests",
            used(&r)
        );
        assert_eq!(r.header("x-deltalens-split-calls"), Some("6"));
        assert_eq!(r.text(), whole.text());
        retried.push(budget);
    }
    assert!(
        retried.contains(&(6 * need + 6)),
        "retried, answered within {retried:?} of {need}"
    );
    println!(
        "fan-out: budget_subrequests holds for the tree ({need} requests unbounded; answered within {answered:?}, 413 otherwise; with every split read twice, within {retried:?})"
    );
}

/// Fan-out retries: a coordinator whose splits go through a flaky Worker (each split's
/// first call answers 503, a transient storage failure; worker/local.mjs, tests only)
/// answers every query as the unfanned worker does, each split retried; a split that
/// keeps failing fails the query with a 502 naming it and its attempts.
#[test]
fn worker_fan_out_retries_a_failed_split_and_names_one_that_keeps_failing() {
    let Some((flaky, public)) = fan_out_and_public("DELTALENS_WORKER_FLAKY_URL") else {
        return;
    };
    for sql in [
        "SELECT COUNT(*) FROM 'r2://TABLES/demo'",
        "SELECT brand, COUNT(*) AS n, SUM(price), AVG(price) FROM 'r2://TABLES/demo' GROUP BY brand ORDER BY n DESC, brand",
        "SELECT user_id, price FROM 'r2://TABLES/demo' WHERE brand = 'nars' ORDER BY price DESC, user_id LIMIT 5",
    ] {
        let f = query_jsonl(&flaky, sql);
        assert_eq!(f.status, 200, "{sql}: {}", f.text());
        assert_eq!(f.header("x-deltalens-splits"), Some("3"), "{sql}");
        assert_eq!(f.text(), query_jsonl(public, sql).text(), "{sql}");
    }
    let fails = "SELECT COUNT(*) FROM 'r2://TABLES/demo' /* deltalens-test-split-fails */";
    let f = query_jsonl(&flaky, fails);
    assert_eq!(f.status, 502, "{}", f.text());
    let text = f.text();
    assert!(
        text.contains("split 0") && text.contains("attempt") && text.contains("injected"),
        "the error names the split, its attempts and the cause: {text}"
    );
    // a split that does not answer: the coordinator's wall time (here 3 s) ends the
    // query with the time budget's error naming the split, not a hang; the other splits
    // were sent what was left of it, not the whole
    let hangs = "SELECT COUNT(*) FROM 'r2://TABLES/demo' /* deltalens-test-split-hangs */";
    let t = std::time::Instant::now();
    let f = request(
        &flaky,
        "POST",
        "/v1/query?format=jsonl&budget_ms=3000",
        Some(hangs),
        &[],
    );
    let took = t.elapsed().as_secs_f64();
    let text = f.text();
    assert_eq!(f.status, 408, "{text}");
    assert!(
        text.contains("split 0") && text.contains("wall_time_ms") && text.contains("3000"),
        "the error names the split and the wall-time budget: {text}"
    );
    assert!(
        (2.9..15.0).contains(&took),
        "the coordinator gave up after {took:.1} s, its budget being 3 s"
    );
    println!(
        "worker: a split that hangs ends its query at the 3 s wall-time budget, in {took:.1} s"
    );
}

/// Answers of pinned versions are kept in the Cache API (worker/src/pinned.rs): the same
/// pinned question again is answered from the cache — the same bytes, nothing read,
/// `x-deltalens-cache: hit`; another format or other budgets are another question; the
/// latest version, a time and a change feed without an end are never kept.
#[test]
fn worker_keeps_the_answers_of_pinned_versions() {
    let Some(e) = env() else {
        return;
    };
    let _shared = sharing_the_isolate();
    let url = "r2://TABLES/demo";
    // SQL no other test sends: the cache lives as long as the worker under test
    let pinned = format!(
        "SELECT event_type, COUNT(*) AS n_kept FROM '{url}' VERSION AS OF 3 GROUP BY event_type ORDER BY event_type"
    );
    let first = e.post(&pinned, &[("format", "jsonl")]);
    assert_eq!(first.status, 200, "{}", first.text());
    assert_eq!(first.header("x-deltalens-cache"), Some("miss"));
    assert!(first.num("x-deltalens-subrequests") > 0);
    let again = e.post(&pinned, &[("format", "jsonl")]);
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.header("x-deltalens-cache"), Some("hit"));
    assert_eq!(again.body, first.body, "a kept answer is the answer");
    assert_eq!(again.num("x-deltalens-subrequests"), 0);
    assert_eq!(again.num("x-deltalens-bytes-read"), 0);
    assert_eq!(again.header("x-deltalens-version"), Some("3"));
    assert_eq!(again.header("cache-control"), Some("no-store"));
    // another format, other budgets: other questions
    let csv = e.post(&pinned, &[("format", "csv")]);
    assert_eq!(
        csv.header("x-deltalens-cache"),
        Some("miss"),
        "{}",
        csv.text()
    );
    let budget = e.post(&pinned, &[("format", "jsonl"), ("budget_rows", "2")]);
    assert_eq!(budget.status, 413, "{}", budget.text());
    assert_eq!(
        budget.header("x-deltalens-cache"),
        None,
        "an error is not kept"
    );
    // a scan at a version and a bounded change feed are pinned too
    let scan = |_: u8| {
        e.get(
            "/v1/scan",
            &[
                ("table", url),
                ("version", "2"),
                ("limit", "7"),
                ("columns", "product_id,event_type"),
                ("format", "jsonl"),
            ],
        )
    };
    let (s1, s2) = (scan(1), scan(2));
    assert_eq!((s1.status, s2.status), (200, 200), "{}", s1.text());
    assert_eq!(s2.header("x-deltalens-cache"), Some("hit"));
    assert_eq!(s2.body, s1.body);
    let feed = format!(
        "SELECT _change_type, COUNT(*) AS n_kept FROM table_changes('{url}', 1, 3) GROUP BY _change_type ORDER BY _change_type"
    );
    let (f1, f2) = (
        e.post(&feed, &[("format", "jsonl")]),
        e.post(&feed, &[("format", "jsonl")]),
    );
    assert_eq!((f1.status, f2.status), (200, 200), "{}", f1.text());
    assert_eq!(f2.header("x-deltalens-cache"), Some("hit"));
    assert_eq!(f2.body, f1.body);
    // what moves is never kept: the latest version, a time (answered or not: the time
    // may be past the newest commit), a change feed without an end
    for (sql, must_answer) in [
        (format!("SELECT COUNT(*) AS n_kept FROM '{url}'"), true),
        (
            format!(
                "SELECT COUNT(*) AS n_kept FROM '{url}' TIMESTAMP AS OF '2030-01-01T00:00:00Z'"
            ),
            false,
        ),
        (
            format!("SELECT COUNT(*) AS n_kept FROM table_changes('{url}', 1)"),
            true,
        ),
    ] {
        for _ in 0..2 {
            let r = e.post(&sql, &[("format", "jsonl")]);
            assert!(!must_answer || r.status == 200, "{sql}: {}", r.text());
            assert_eq!(r.header("x-deltalens-cache"), None, "{sql}");
        }
    }
}

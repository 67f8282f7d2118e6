//! The browser column of the fault matrix (the CLI's is tests/harness/fault_matrix.py,
//! the worker's tests/worker/fault_matrix.py): in headless Chromium, every fault mode of
//! tests/harness/faultproxy.py × {open, scan with a filter, changes (CDF tables), history}
//! × conformance tables × {http (nginx), s3 (moto), azure (azurite)}, read through fault
//! proxies that `scripts/browser-test` starts in front of the stores, and classified
//! against the same read of the store directly:
//!
//! - equal: the same answer (open: version, protocol, metadata, schema and the sorted
//!   file list; scan and changes: the canonical rows; history: its JSON);
//! - clear-error: an error with a message, within the cell's time bound;
//! - WRONG: a different answer; HANG: nothing within the bound (a JS timer);
//! - CRASH: an error without a message; a panic aborts the test (the reads running are
//!   logged first).
//!
//! Reads go through the explorer's storage stack (web/src/session.rs: a session cache over
//! 5xx and network-error retries over the fetch backend), so faults limited to the first N
//! requests per object (5xx-then-ok, MODE:N) should be read through. A stalled store costs
//! the fetch backend's header timeout (30 s) per attempt, five attempts with the retries:
//! the stall modes run on the bare fetch backend (rows `stall (fetch)`; the quick set on
//! its first table only) and, with `DELTALENS_TEST_FAULT_STALL_STACK=both` (the full set),
//! on the explorer's stack too (rows `stall (explorer)`). Reads over a minute are listed.
//!
//! In a mode, every read runs at once. For a fault on the first N requests per object the
//! reads of one table share the proxy's counts (as in the CLI's matrix), unless
//! `DELTALENS_TEST_FAULT_SERIAL=1` (the full set): then each table's reads run one after the
//! other with its counts reset before each (`/__faultproxy/reset`), so every read meets the
//! whole fault. The proxies answer with `Cache-Control:
//! no-store` (`--no-store`): Chromium's HTTP cache would otherwise answer the reads of the
//! modes after `pass` without reaching the proxy.
//!
//! Tables, filters and modes come from fault_matrix.py (`--spec`), compiled in as
//! `DELTALENS_TEST_FAULT_SPEC`, with the proxies' origins (`DELTALENS_TEST_FAULT_HTTP`,
//! `_S3`, `_AZURE`) and `DELTALENS_TEST_FAULT_STALL_STACK` (`fetch` or `both`). Each
//! proxy's mode is switched with `GET /__faultproxy/mode` (answered with CORS). Fails on
//! any WRONG, HANG or CRASH, a direct read that fails, or a proxy that saw no request in a
//! mode it had cells for.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use deltalens_core::changes::Changes;
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_core::schema::{DataType, StructField};
use deltalens_core::{Snapshot, Table, VersionSpec};
use deltalens_fetch_storage::{BrowserOptions, FetchStorage, Sleep, boxed_sleep};
use deltalens_storage::{CachingStorage, DynStorage, RetryPolicy, RetryStorage};
use futures::future::{Either, join_all, select};
use js_sys::{Function, Promise, Reflect};
use serde_json::{Value, json};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[path = "../../../tests/src/canonical.rs"]
mod canonical;

/// Fixed when the test is built (see `scripts/browser-test`).
const BASE: Option<&str> = option_env!("DELTALENS_TEST_HTTP");
const S3_ENDPOINT: Option<&str> = option_env!("DELTALENS_TEST_S3_ENDPOINT");
const AZURE_ENDPOINT: Option<&str> = option_env!("DELTALENS_TEST_AZURE_ENDPOINT");
const AZURE_SAS: Option<&str> = option_env!("DELTALENS_TEST_AZURE_SAS");
const FAULT_HTTP: Option<&str> = option_env!("DELTALENS_TEST_FAULT_HTTP");
const FAULT_S3: Option<&str> = option_env!("DELTALENS_TEST_FAULT_S3");
const FAULT_AZURE: Option<&str> = option_env!("DELTALENS_TEST_FAULT_AZURE");
const FAULT_SPEC: Option<&str> = option_env!("DELTALENS_TEST_FAULT_SPEC");
const STALL_STACK: Option<&str> = option_env!("DELTALENS_TEST_FAULT_STALL_STACK");
const SERIAL: Option<&str> = option_env!("DELTALENS_TEST_FAULT_SERIAL");

const COMMANDS: &[&str] = &["open", "scan", "changes", "history"];
/// Faults a reader with retries can and should get through with the right answer.
const RECOVERABLE: &[&str] = &[
    "pass",
    "5xx-then-ok",
    "range-ignored",
    "reset-mid-body:1",
    "short-body:1",
];
/// The explorer's session cache (web/src/session.rs).
const CACHE_BYTES: usize = 64 * 1024 * 1024;

fn now_ms() -> f64 {
    let global = js_sys::global();
    let perf = Reflect::get(&global, &JsValue::from_str("performance")).unwrap();
    let now: Function = Reflect::get(&perf, &JsValue::from_str("now"))
        .unwrap()
        .dyn_into()
        .unwrap();
    now.call0(&perf).unwrap().as_f64().unwrap()
}

/// `f`'s output, or `None` when `limit` passes first (a `setTimeout` future).
async fn bounded<T>(limit: Duration, f: impl Future<Output = T>) -> Option<T> {
    let f = std::pin::pin!(f);
    let timer = std::pin::pin!(deltalens_fetch_storage::sleep(limit));
    match select(f, timer).await {
        Either::Left((out, _)) => Some(out),
        Either::Right(_) => None,
    }
}

/// Which storage a cell reads through.
#[derive(Clone, Copy, PartialEq)]
enum Stack {
    /// The fetch backend alone (as the worker uses it, without its budget).
    Fetch,
    /// The explorer's: session cache over retries over the fetch backend.
    Explorer,
}

impl Stack {
    fn name(self) -> &'static str {
        match self {
            Stack::Fetch => "fetch",
            Stack::Explorer => "explorer",
        }
    }
    /// A cell's time bound. The fetch backend gives up on a request after 30 s without
    /// headers (a body: 30 s plus its length at 64 KiB/s); the explorer's retries make that
    /// five attempts per request, and a read may meet several stalled requests in a row
    /// and wait for one of Chromium's 6 connections per host: measured up to 332 s.
    fn bound(self) -> Duration {
        match self {
            Stack::Fetch => Duration::from_secs(90),
            Stack::Explorer => Duration::from_secs(600),
        }
    }
    fn storage(self, url: &str, opts: &BrowserOptions) -> DynStorage {
        let fetch = FetchStorage::open(url, opts).unwrap();
        match self {
            Stack::Fetch => Arc::new(fetch),
            Stack::Explorer => Arc::new(CachingStorage::new(
                RetryStorage::new(fetch, RetryPolicy::default(), boxed_sleep as Sleep),
                CACHE_BYTES,
            )),
        }
    }
}

/// One store, read directly and through its proxy.
struct Store {
    name: &'static str,
    direct: BrowserOptions,
    faulted: BrowserOptions,
    direct_base: String,
    faulted_base: String,
    /// The proxy's origin (its control endpoint).
    control: String,
}

impl Store {
    fn url(&self, table: &str, faulted: bool) -> String {
        let base = if faulted {
            &self.faulted_base
        } else {
            &self.direct_base
        };
        format!("{base}{table}")
    }
    fn opts(&self, faulted: bool) -> &BrowserOptions {
        if faulted { &self.faulted } else { &self.direct }
    }
}

fn origin(url: &str) -> String {
    url.splitn(4, '/').take(3).collect::<Vec<_>>().join("/")
}

fn stores() -> Vec<Store> {
    let (Some(base), Some(fault_http)) = (BASE, FAULT_HTTP) else {
        return Vec::new();
    };
    let mut out = vec![Store {
        name: "http",
        direct: BrowserOptions::default(),
        faulted: BrowserOptions::default(),
        direct_base: format!("{base}/tables/"),
        faulted_base: format!("{fault_http}/tables/"),
        control: fault_http.to_string(),
    }];
    if let (Some(direct), Some(faulted)) = (S3_ENDPOINT, FAULT_S3) {
        let s3 = |endpoint: &str| BrowserOptions {
            s3_endpoint: Some(endpoint.to_string()),
            s3_region: Some("us-east-1".into()),
            s3_access_key_id: Some("deltalens-test".into()),
            s3_secret_access_key: Some("deltalens-test-secret".into()),
            ..Default::default()
        };
        out.push(Store {
            name: "s3",
            direct: s3(direct),
            faulted: s3(faulted),
            direct_base: "s3://deltalens/tables/".into(),
            faulted_base: "s3://deltalens/tables/".into(),
            control: faulted.to_string(),
        });
    }
    if let (Some(direct), Some(faulted)) = (AZURE_ENDPOINT, FAULT_AZURE) {
        let az = |endpoint: &str| BrowserOptions {
            azure_endpoint: Some(endpoint.to_string()),
            azure_sas: AZURE_SAS.map(str::to_string),
            ..Default::default()
        };
        out.push(Store {
            name: "azure",
            direct: az(direct),
            faulted: az(faulted),
            direct_base: "az://deltalens/tables/".into(),
            faulted_base: "az://deltalens/tables/".into(),
            control: origin(faulted),
        });
    }
    out
}

/// `GET url` with the page's fetch; the JSON answer.
async fn fetch_json(url: &str) -> Value {
    let global = js_sys::global();
    let fetch: Function = Reflect::get(&global, &JsValue::from_str("fetch"))
        .unwrap()
        .dyn_into()
        .unwrap();
    let promise: Promise = fetch
        .call1(&global, &JsValue::from_str(url))
        .unwrap()
        .dyn_into()
        .unwrap();
    let resp: web_sys::Response = JsFuture::from(promise)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e:?}"))
        .dyn_into()
        .unwrap();
    assert!(resp.ok(), "{url}: HTTP {}", resp.status());
    let text = JsFuture::from(resp.text().unwrap()).await.unwrap();
    deltalens_json::from_str(&text.as_string().unwrap()).unwrap()
}

/// Switch a proxy to `mode` (`MODE` or `MODE:N`; resets its per-target counts): its
/// stats (`times` > 0 when only the first N requests per target are faulted).
async fn set_mode(control: &str, mode: &str) -> Value {
    let (name, times) = match mode.split_once(':') {
        Some((n, t)) => (n, format!("&times={t}")),
        None => (mode, String::new()),
    };
    fetch_json(&format!("{control}/__faultproxy/mode?name={name}{times}")).await
}

/// Make the next requests to `table`'s objects meet a MODE:N fault again.
async fn reset_counts(control: &str, table: &str) {
    fetch_json(&format!("{control}/__faultproxy/reset?table={table}")).await;
}

async fn proxy_requests(control: &str) -> u64 {
    fetch_json(&format!("{control}/__faultproxy/stats")).await["requests"]
        .as_u64()
        .unwrap()
}

/// One table of the spec.
struct TableSpec {
    name: String,
    filter: String,
    changes_from: Option<u64>,
}

/// What `open` answers: everything the snapshot holds that a log can say, files sorted.
fn open_summary(s: &Snapshot) -> String {
    let mut files: Vec<String> = s.files.iter().map(|f| format!("{f:?}")).collect();
    files.sort();
    json!({
        "version": s.version,
        "protocol": format!("{:?}", s.protocol),
        "metadata": format!("{:?}", s.metadata),
        "schema": s.schema.raw,
        "files": files,
        "txns": format!("{:?}", s.txns),
        "domain_metadata": format!("{:?}", s.domain_metadata),
        "checkpoint_version": s.checkpoint_version,
    })
    .to_string()
}

fn change_fields(mut fields: Vec<StructField>) -> Vec<StructField> {
    for (name, ty) in [
        ("_change_type", "string"),
        ("_commit_version", "long"),
        ("_commit_timestamp", "timestamp"),
    ] {
        fields.push(StructField {
            name: name.into(),
            data_type: DataType::Primitive(ty.into()),
            nullable: true,
            metadata: Default::default(),
        });
    }
    fields
}

/// One read; its answer as text, or the error's message.
async fn run(command: &str, table: &Table, spec: &TableSpec) -> Result<String, String> {
    let e = |e: deltalens_core::Error| e.to_string();
    match command {
        "open" => Ok(open_summary(
            &table.snapshot(VersionSpec::Latest).await.map_err(e)?,
        )),
        "scan" => {
            let snap = table.snapshot(VersionSpec::Latest).await.map_err(e)?;
            let options = ScanOptions {
                filter: Some(Predicate::parse(&spec.filter).map_err(e)?),
                ..Default::default()
            };
            let scan = snap.scan(options).map_err(e)?;
            let mut batches = Vec::new();
            scan.execute(&mut |b| {
                batches.push(b);
                Ok(true)
            })
            .await
            .map_err(e)?;
            Ok(canonical::canonical_lines(&batches, snap.schema.fields()).concat())
        }
        "changes" => {
            let from = spec.changes_from.unwrap();
            let changes = Changes::new(table, from, None, ScanOptions::default())
                .await
                .map_err(e)?;
            let mut batches = Vec::new();
            changes
                .execute(&mut |b| {
                    batches.push(b);
                    Ok(true)
                })
                .await
                .map_err(e)?;
            let fields = change_fields(changes.snapshot.schema.fields().to_vec());
            Ok(canonical::canonical_lines(&batches, &fields).concat())
        }
        "history" => {
            let h = table.history(None).await.map_err(e)?;
            Ok(serde_json::to_string(&h).unwrap())
        }
        other => panic!("no command {other}"),
    }
}

/// A cell's outcome.
#[derive(Clone)]
struct Cell {
    mode: String,
    store: &'static str,
    table: String,
    command: &'static str,
    stack: Stack,
    class: &'static str,
    ms: f64,
    /// The error message, or where a WRONG answer differs.
    detail: String,
}

const BAD: &[&str] = &["WRONG", "HANG", "CRASH"];

thread_local! {
    /// The reads running now, for the panic hook.
    static RUNNING: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn started(what: &str) {
    RUNNING.with(|r| r.borrow_mut().push(what.to_string()));
}

fn finished(what: &str) {
    RUNNING.with(|r| {
        let mut r = r.borrow_mut();
        if let Some(i) = r.iter().position(|x| x == what) {
            r.remove(i);
        }
    });
}

fn first_difference(want: &str, got: &str) -> String {
    for (i, (a, b)) in want.lines().zip(got.lines()).enumerate() {
        if a != b {
            let cut = |s: &str| s.chars().take(200).collect::<String>();
            return format!("line {}: {} -> {}", i + 1, cut(a), cut(b));
        }
    }
    format!(
        "{} lines -> {} lines ({} -> {} bytes)",
        want.lines().count(),
        got.lines().count(),
        want.len(),
        got.len()
    )
}

async fn cell(
    mode: &str,
    store: &Store,
    spec: &TableSpec,
    command: &'static str,
    stack: Stack,
    want: &str,
) -> Cell {
    let url = store.url(&spec.name, true);
    let table = Table::new(stack.storage(&url, store.opts(true)), &url);
    let label = format!(
        "{mode} {} {command} {} ({} stack)",
        store.name,
        spec.name,
        stack.name()
    );
    started(&label);
    let t0 = now_ms();
    let out = bounded(stack.bound(), run(command, &table, spec)).await;
    let ms = now_ms() - t0;
    finished(&label);
    let (class, detail) = match out {
        None => ("HANG", format!("no answer within {:?}", stack.bound())),
        Some(Ok(got)) if got == want => ("equal", String::new()),
        Some(Ok(got)) => ("WRONG", first_difference(want, &got)),
        Some(Err(m)) if m.trim().is_empty() => ("CRASH", "an error without a message".into()),
        Some(Err(m)) => ("clear-error", m),
    };
    let c = Cell {
        mode: mode.to_string(),
        store: store.name,
        table: spec.name.clone(),
        command,
        stack,
        class,
        ms,
        detail,
    };
    if BAD.contains(&class) {
        console_log!(
            "  {class}: {mode} {} {command} {} ({:.1}s): {}",
            c.store,
            c.table,
            ms / 1000.0,
            c.detail
        );
    }
    c
}

/// An error message without what varies between tables and runs (for grouping).
fn shape(text: &str, table: &str) -> String {
    let text = text.replace(table, "T");
    let mut out = String::with_capacity(text.len());
    let mut digits = false;
    for ch in text.chars() {
        if ch.is_ascii_digit() {
            if !digits {
                out.push('N');
            }
            digits = true;
        } else {
            digits = false;
            out.push(ch);
        }
    }
    out
}

fn counts(cells: &[&Cell]) -> String {
    let mut parts = Vec::new();
    for (class, sym) in [
        ("equal", "="),
        ("clear-error", "e"),
        ("WRONG", "W"),
        ("HANG", "H"),
        ("CRASH", "X"),
    ] {
        let n = cells.iter().filter(|c| c.class == class).count();
        if n > 0 {
            parts.push(format!("{sym}{n}"));
        }
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

fn matrix(title: &str, modes: &[String], cells: &[&Cell]) -> String {
    let mut out = format!("\n{title}\n{:<27}", "mode");
    for c in COMMANDS {
        out += &format!("{c:<16}");
    }
    for m in modes {
        out += &format!("\n{m:<27}");
        for c in COMMANDS {
            let sel: Vec<&Cell> = cells
                .iter()
                .copied()
                .filter(|x| &x.mode == m && x.command == *c)
                .collect();
            out += &format!("{:<16}", counts(&sel));
        }
    }
    out
}

#[wasm_bindgen_test]
async fn fault_matrix() {
    let Some(spec) = FAULT_SPEC else {
        console_log!(
            "SKIPPED: DELTALENS_TEST_FAULT_SPEC was not set when the test was built (scripts/browser-test sets it)"
        );
        return;
    };
    let stores = stores();
    assert!(
        !stores.is_empty(),
        "no fault proxy origins were compiled in"
    );
    // a panic is a failure of its own: say which read it was
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        RUNNING.with(|r| console_log!("PANIC while reading (one of): {}", r.borrow().join("; ")));
        default_hook(info);
    }));
    let spec: Value = deltalens_json::from_str(spec).unwrap();
    let tables: Vec<TableSpec> = spec["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| TableSpec {
            name: t["name"].as_str().unwrap().to_string(),
            filter: t["filter"].as_str().unwrap().to_string(),
            changes_from: t["changes_from"].as_u64(),
        })
        .collect();
    let modes: Vec<String> = spec["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let stall_tables: Vec<&str> = spec["stall_tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // (proxy mode, stack, row label): stalls on the bare fetch backend, and with `both`
    // on the explorer's stack too
    let mut runs: Vec<(&str, Stack, String)> = Vec::new();
    for m in &modes {
        if m.starts_with("stall") {
            runs.push((m, Stack::Fetch, format!("{m} (fetch)")));
            if STALL_STACK == Some("both") {
                runs.push((m, Stack::Explorer, format!("{m} (explorer)")));
            }
        } else {
            runs.push((m, Stack::Explorer, m.clone()));
        }
    }
    let commands = |t: &TableSpec| -> Vec<&'static str> {
        COMMANDS
            .iter()
            .copied()
            .filter(|c| *c != "changes" || t.changes_from.is_some())
            .collect()
    };
    let t_start = now_ms();

    // 1. references: each store read directly, with each stack a mode uses
    let mut stacks = vec![Stack::Explorer];
    if runs.iter().any(|r| r.1 == Stack::Fetch) {
        stacks.push(Stack::Fetch);
    }
    let mut reference: BTreeMap<(&str, String, &str, &str), String> = BTreeMap::new();
    let mut problems = Vec::new();
    for store in &stores {
        for t in &tables {
            for command in commands(t) {
                for &stack in &stacks {
                    let url = store.url(&t.name, false);
                    let table = Table::new(stack.storage(&url, store.opts(false)), &url);
                    let label = format!("direct {} {command} {}", store.name, t.name);
                    started(&label);
                    let out = bounded(stack.bound(), run(command, &table, t)).await;
                    finished(&label);
                    match out {
                        Some(Ok(text)) => {
                            reference
                                .insert((store.name, t.name.clone(), command, stack.name()), text);
                        }
                        other => problems.push(format!(
                            "direct {} {command} {} ({}): {}",
                            store.name,
                            t.name,
                            stack.name(),
                            match other {
                                None => "no answer".to_string(),
                                Some(Err(m)) => m,
                                Some(Ok(_)) => unreachable!(),
                            }
                        )),
                    }
                }
            }
        }
    }
    console_log!(
        "references: {} direct reads ({:.0}s)",
        reference.len(),
        (now_ms() - t_start) / 1000.0
    );

    // 2. mode by mode: every proxy switched, then the cells
    let mut cells: Vec<Cell> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (mode, stack, row) in &runs {
        let (mode, stack) = (*mode, *stack);
        let t_mode = now_ms();
        let stall = mode.starts_with("stall");
        let mut counted = false;
        let mut before = Vec::new();
        for s in &stores {
            counted |= set_mode(&s.control, mode).await["times"]
                .as_u64()
                .unwrap_or(0)
                > 0;
            before.push(proxy_requests(&s.control).await);
        }
        let mut todo = Vec::new();
        for (i, s) in stores.iter().enumerate() {
            for t in &tables {
                if stall && !stall_tables.contains(&t.name.as_str()) {
                    continue;
                }
                for command in commands(t) {
                    if let Some(want) =
                        reference.get(&(s.name, t.name.clone(), command, stack.name()))
                    {
                        todo.push((i, t, command, want.clone()));
                    }
                }
            }
        }
        // a fault on the first N requests per object, with DELTALENS_TEST_FAULT_SERIAL=1
        // (the full set): each table's reads one after the other, its counts reset before
        // each; otherwise (and for every other fault) all reads at once, the counts shared
        // by the reads of a table as in the CLI's matrix
        let serial = counted && SERIAL == Some("1");
        let done: Vec<Cell> = if !serial {
            // all at once (stalled reads wait, they do not work)
            join_all(
                todo.iter()
                    .map(|(i, t, c, want)| cell(row, &stores[*i], t, c, stack, want)),
            )
            .await
        } else {
            let mut groups: Vec<(usize, &TableSpec)> = Vec::new();
            for (i, t, ..) in &todo {
                if !groups.iter().any(|(j, u)| j == i && u.name == t.name) {
                    groups.push((*i, t));
                }
            }
            let todo = &todo;
            let stores = &stores;
            let per_group = join_all(groups.into_iter().map(|(i, t)| async move {
                let mut out = Vec::new();
                for (j, u, c, want) in todo {
                    if *j != i || u.name != t.name {
                        continue;
                    }
                    reset_counts(&stores[i].control, &t.name).await;
                    out.push(cell(row, &stores[i], t, c, stack, want).await);
                }
                out
            }))
            .await;
            per_group.into_iter().flatten().collect()
        };
        let mut line = Vec::new();
        for (i, s) in stores.iter().enumerate() {
            let n = proxy_requests(&s.control).await - before[i];
            line.push(format!("{}={n}", s.name));
            if n == 0 && todo.iter().any(|(j, ..)| *j == i) {
                problems.push(format!(
                    "mode {row}: the {} proxy saw no request: the reads did not go through it",
                    s.name
                ));
            }
        }
        let refs: Vec<&Cell> = done.iter().collect();
        console_log!(
            "mode {row} ({} stack): {} reads in {:.0}s: {}; proxy requests {}",
            stack.name(),
            done.len(),
            (now_ms() - t_mode) / 1000.0,
            counts(&refs),
            line.join(", ")
        );
        seen.push(row.clone());
        cells.extend(done);
    }
    for s in &stores {
        set_mode(&s.control, "pass").await;
    }

    // 3. the matrix
    let all: Vec<&Cell> = cells.iter().collect();
    let mut text = format!(
        "browser fault matrix: {} reads, {} tables ({}), {:.0}s\ncells: =equal e=clear-error W=WRONG H=HANG X=CRASH (counts of table reads)",
        cells.len(),
        tables.len(),
        tables
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        (now_ms() - t_start) / 1000.0
    );
    text += &matrix("all stores", &seen, &all);
    for s in &stores {
        let sel: Vec<&Cell> = all.iter().copied().filter(|c| c.store == s.name).collect();
        text += &matrix(&format!("store {}", s.name), &seen, &sel);
    }
    text += "\n\nnon-green cells (mode, store, command: counts, then each distinct answer with its tables;\n`!` = a fault a reader should get through, or a WRONG/HANG/CRASH):";
    for m in &seen {
        for s in &stores {
            for c in COMMANDS {
                let sel: Vec<&Cell> = all
                    .iter()
                    .copied()
                    .filter(|x| &x.mode == m && x.store == s.name && x.command == *c)
                    .filter(|x| x.class != "equal")
                    .collect();
                if sel.is_empty() {
                    continue;
                }
                let flag = if RECOVERABLE.contains(&m.as_str())
                    || sel.iter().any(|x| BAD.contains(&x.class))
                {
                    "!"
                } else {
                    " "
                };
                text += &format!("\n{flag} {m} / {} / {c}: {}", s.name, counts(&sel));
                let mut distinct: BTreeMap<(&str, String), Vec<&Cell>> = BTreeMap::new();
                for x in sel {
                    distinct
                        .entry((x.class, shape(&x.detail, &x.table)))
                        .or_default()
                        .push(x);
                }
                for ((class, _), same) in distinct {
                    let secs = same.iter().map(|x| x.ms).fold(0.0, f64::max) / 1000.0;
                    let names: Vec<&str> = same.iter().map(|x| x.table.as_str()).collect();
                    let detail: String = same[0].detail.chars().take(300).collect();
                    text += &format!(
                        "\n      {class} [{}; {}; <= {secs:.1}s]: {detail}",
                        names.join(", "),
                        same[0].stack.name()
                    );
                }
            }
        }
    }
    let slow: Vec<&&Cell> = all.iter().filter(|c| c.ms > 60_000.0).collect();
    if !slow.is_empty() {
        text += "\n\nreads that took over a minute (bounded, but a user waits):";
        for c in slow {
            text += &format!(
                "\n  {} / {} / {} {}: {:.0}s, {}",
                c.mode,
                c.store,
                c.command,
                c.table,
                c.ms / 1000.0,
                c.class
            );
        }
    }
    let bad: Vec<&&Cell> = all.iter().filter(|c| BAD.contains(&c.class)).collect();
    if !problems.is_empty() {
        text += "\n\nproblems (a direct read that failed, a proxy that saw nothing):";
        for p in &problems {
            text += &format!("\n  {p}");
        }
    }
    text += &format!(
        "\n\nbrowser fault matrix: WRONG={}, HANG={}, CRASH={} (a panic fails the test); problems={}",
        bad.iter().filter(|c| c.class == "WRONG").count(),
        bad.iter().filter(|c| c.class == "HANG").count(),
        bad.iter().filter(|c| c.class == "CRASH").count(),
        problems.len()
    );
    console_log!("{text}");
    assert!(
        bad.is_empty() && problems.is_empty(),
        "{} WRONG/HANG/CRASH reads, {} problems (see the matrix above)",
        bad.len(),
        problems.len()
    );
}

//! In headless Chromium, against servers `scripts/browser-test` starts on 127.0.0.1:
//! nginx (Range + CORS) serving the conformance corpus, moto S3 (bucket CORS rule,
//! SigV4-signed requests) and azurite (container SAS, CORS rules). Rows read in the
//! browser must equal the corpus' canonical rows byte for byte (the native conformance
//! tests check the same files), and opening a checkpointed table must take at most three
//! sequential round trips.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use deltalens_core::scan::ScanOptions;
use deltalens_core::{Table, VersionSpec};
use deltalens_fetch_storage::{BrowserOptions, FetchStorage};
use deltalens_storage::{CountingStorage, Storage, StorageError};
use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[path = "../../../tests/src/canonical.rs"]
mod canonical;
// the checkpointed tables whose opening is timed (CHECKPOINTED), shared with the worker tests
#[path = "../../../tests/src/corpus.rs"]
mod corpus;

/// Fixed when the test is built (see `scripts/browser-test`).
const BASE: Option<&str> = option_env!("DELTALENS_TEST_HTTP");
const NO_CORS: Option<&str> = option_env!("DELTALENS_TEST_HTTP_NO_CORS");
const S3_ENDPOINT: Option<&str> = option_env!("DELTALENS_TEST_S3_ENDPOINT");
const AZURE_ENDPOINT: Option<&str> = option_env!("DELTALENS_TEST_AZURE_ENDPOINT");
const AZURE_SAS: Option<&str> = option_env!("DELTALENS_TEST_AZURE_SAS");

/// Tables loaded into every store (the harness reads this list from here).
const TABLES: &[&str] = &[
    "dat_all_primitive_types",
    "dat_basic_partitioned",
    "dat_multi_partitioned",
    "dat_nested_types",
    "dat_with_checkpoint",
    "dk_basic-dv-with-checkpoint",
    "golden_dv-with-columnmapping",
    "golden_table-with-columnmapping-mode-id",
    "golden_v2-checkpoint-parquet",
    "golden_multi-part-checkpoint",
    "kr_v2-checkpoints-json-with-sidecars",
    "kr_v2-checkpoints-parquet-with-sidecars",
    "kr_table-with-dv-small",
    "kr_cdf-table-with-dv",
    "golden_data-reader-map",
];

fn now_ms() -> f64 {
    let global = js_sys::global();
    let perf = Reflect::get(&global, &JsValue::from_str("performance")).unwrap();
    let now: Function = Reflect::get(&perf, &JsValue::from_str("now"))
        .unwrap()
        .dyn_into()
        .unwrap();
    now.call0(&perf).unwrap().as_f64().unwrap()
}

fn s3_options() -> Option<BrowserOptions> {
    Some(BrowserOptions {
        s3_endpoint: Some(S3_ENDPOINT?.to_string()),
        s3_region: Some("us-east-1".into()),
        s3_access_key_id: Some("deltalens-test".into()),
        s3_secret_access_key: Some("deltalens-test-secret".into()),
        ..Default::default()
    })
}

fn azure_options(sas: bool) -> Option<BrowserOptions> {
    Some(BrowserOptions {
        azure_endpoint: Some(AZURE_ENDPOINT?.to_string()),
        azure_sas: sas.then(|| AZURE_SAS.map(str::to_string)).flatten(),
        ..Default::default()
    })
}

/// The corpus' canonical rows of `name` at its latest version.
async fn expected(corpus: &FetchStorage, name: &str) -> (u64, String) {
    let versions: serde_json::Value = deltalens_json::from_slice(
        &corpus
            .get(&format!("expected/{name}/versions.json"))
            .await
            .unwrap(),
    )
    .unwrap();
    let latest = versions["latest_version"].as_u64().unwrap();
    let file = versions["versions"][latest.to_string()]["data_file"]
        .as_str()
        .unwrap();
    let want = corpus
        .get(&format!("expected/{name}/{file}"))
        .await
        .unwrap();
    (latest, String::from_utf8(want.to_vec()).unwrap())
}

/// Every row of `snap`.
async fn read_all(snap: &deltalens_core::Snapshot) -> Vec<arrow_array::RecordBatch> {
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let mut batches = Vec::new();
    scan.execute(&mut |b| {
        batches.push(b);
        Ok(true)
    })
    .await
    .unwrap();
    batches
}

/// Open every table at `url_of(name)` and compare its rows with the corpus.
async fn rows_equal_the_corpus(
    label: &str,
    url_of: impl Fn(&str) -> String,
    opts: &BrowserOptions,
) {
    let corpus = FetchStorage::new(BASE.unwrap()).unwrap();
    let mut agree = 0;
    for name in TABLES {
        let (latest, want) = expected(&corpus, name).await;
        let url = url_of(name);
        let counter = Arc::new(CountingStorage::with_clock(
            FetchStorage::open(&url, opts).unwrap(),
            now_ms,
        ));
        let table = Table::new(counter.clone(), &url);
        let snap = table.snapshot(VersionSpec::Latest).await.unwrap();
        assert_eq!(snap.version, latest, "{label} {name}");
        let opened = counter.stats();
        let batches = read_all(&snap).await;
        let got = canonical::canonical_lines(&batches, snap.schema.fields()).concat();
        assert_eq!(got, want, "{label} {name} v{latest}");
        let all = counter.stats();
        console_log!(
            "{label} {name}: v{latest} equal ({} rows); open: {} round trips, {} requests, {} bytes; scan: {} requests, {} bytes",
            want.lines().count(),
            opened.round_trips,
            opened.requests,
            opened.bytes,
            all.requests - opened.requests,
            all.bytes - opened.bytes
        );
        agree += 1;
    }
    console_log!(
        "{label}: {agree} of {} tables equal the corpus byte for byte",
        TABLES.len()
    );
}

#[wasm_bindgen_test]
async fn http_rows_equal_the_corpus() {
    let Some(base) = BASE else {
        console_log!("SKIPPED: DELTALENS_TEST_HTTP was not set when the test was built");
        return;
    };
    let opts = BrowserOptions::default();
    rows_equal_the_corpus("http", |n| format!("{base}/tables/{n}"), &opts).await;
}

#[wasm_bindgen_test]
async fn s3_rows_equal_the_corpus() {
    let Some(opts) = s3_options() else {
        console_log!("SKIPPED: no S3 emulator (DELTALENS_TEST_S3_ENDPOINT)");
        return;
    };
    rows_equal_the_corpus("s3", |n| format!("s3://deltalens/tables/{n}"), &opts).await;
}

#[wasm_bindgen_test]
async fn azure_rows_equal_the_corpus() {
    let Some(opts) = azure_options(true) else {
        console_log!("SKIPPED: no Azure emulator (DELTALENS_TEST_AZURE_ENDPOINT)");
        return;
    };
    rows_equal_the_corpus("azure", |n| format!("az://deltalens/tables/{n}"), &opts).await;
}

/// Open each checkpointed table through every store with a timed request log; the
/// critical path must be at most three round trips. Bytes read are printed next to the
/// size of the table's log.
#[wasm_bindgen_test]
async fn opening_a_checkpointed_table_takes_at_most_three_round_trips() {
    let Some(base) = BASE else {
        console_log!("SKIPPED: DELTALENS_TEST_HTTP was not set when the test was built");
        return;
    };
    let mut stores: Vec<(&str, String, BrowserOptions)> =
        vec![("http", format!("{base}/tables/"), BrowserOptions::default())];
    if let Some(o) = s3_options() {
        stores.push(("s3", "s3://deltalens/tables/".into(), o));
    }
    if let Some(o) = azure_options(true) {
        stores.push(("azure", "az://deltalens/tables/".into(), o));
    }
    let mut opens = 0;
    for (label, prefix, opts) in &stores {
        for name in corpus::CHECKPOINTED {
            let url = format!("{prefix}{name}");
            let counter = Arc::new(CountingStorage::with_clock(
                FetchStorage::open(&url, opts).unwrap(),
                now_ms,
            ));
            let table = Table::new(counter.clone(), &url);
            let t0 = now_ms();
            let snap = table.snapshot(VersionSpec::Latest).await.unwrap();
            let elapsed = now_ms() - t0;
            let s = counter.stats();
            let records = counter.records();
            // the log's size, listed through a store that can list
            let log_size = match *label {
                "http" => None,
                _ => Some(
                    counter
                        .inner()
                        .list("_delta_log/", None)
                        .await
                        .unwrap()
                        .iter()
                        .map(|m| m.size)
                        .sum::<u64>(),
                ),
            };
            let timeline: Vec<String> = records
                .iter()
                .map(|r| {
                    format!(
                        "  {:>7.1}-{:>7.1} ms {:?} {} {}",
                        r.start_us as f64 / 1000.0 - t0,
                        r.end_us as f64 / 1000.0 - t0,
                        r.kind,
                        r.path,
                        r.bytes
                    )
                })
                .collect();
            console_log!(
                "{label} {name} v{}: {} round trips, {} requests, {} bytes read{} in {elapsed:.1} ms\n{}",
                snap.version,
                s.round_trips,
                s.requests,
                s.bytes,
                log_size
                    .map(|l| format!(" of a {l}-byte _delta_log"))
                    .unwrap_or_default(),
                timeline.join("\n")
            );
            assert!(
                s.round_trips <= 3,
                "{label} {name}: {} round trips",
                s.round_trips
            );
            opens += 1;
        }
    }
    console_log!("round trips: {opens} opens of checkpointed tables, each <= 3");
}

/// Errors a user can act on: CORS, a missing SAS, a missing table; a server that ignores
/// Range still gives the right rows and is reported; dropping a read aborts it.
#[wasm_bindgen_test]
async fn failures_say_what_to_do() {
    let Some(base) = BASE else {
        console_log!("SKIPPED: DELTALENS_TEST_HTTP was not set when the test was built");
        return;
    };
    // a server that sends no CORS headers: the browser hides the response
    if let Some(no_cors) = NO_CORS {
        let url = format!("{no_cors}/tables/dat_with_checkpoint");
        let t = Table::new(Arc::new(FetchStorage::new(&url).unwrap()), &url);
        let e = t
            .snapshot(VersionSpec::Latest)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("CORS") && e.contains("Content-Range"), "{e}");
        console_log!("CORS failure: {e}");
    }
    // a private container without a SAS: 403 naming the SAS permissions
    if let Some(opts) = azure_options(false) {
        let url = "az://deltalens/tables/dat_with_checkpoint";
        let t = Table::new(Arc::new(FetchStorage::open(url, &opts).unwrap()), url);
        let e = t
            .snapshot(VersionSpec::Latest)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("403") && e.contains("SAS token"), "{e}");
        console_log!("missing SAS: {e}");
    }
    // not a table
    let url = format!("{base}/tables/no-such-table");
    let t = Table::new(Arc::new(FetchStorage::new(&url).unwrap()), &url);
    let e = t
        .snapshot(VersionSpec::Latest)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("no-such-table"), "{e}");
    console_log!("not a table: {e}");

    // nginx with Range switched off (max_ranges 0) under /norange/
    let url = format!("{base}/norange/tables/dat_with_checkpoint");
    let fetch = Arc::new(FetchStorage::new(&url).unwrap());
    let table = Table::new(fetch.clone(), &url);
    let snap = table.snapshot(VersionSpec::Latest).await.unwrap();
    let batches = read_all(&snap).await;
    let (_, want) = expected(&FetchStorage::new(base).unwrap(), "dat_with_checkpoint").await;
    assert_eq!(
        canonical::canonical_lines(&batches, snap.schema.fields()).concat(),
        want
    );
    assert!(fetch.ranges_ignored() > 0);
    console_log!(
        "server ignoring Range: rows equal, {} ranged reads answered with whole files",
        fetch.ranges_ignored()
    );

    // dropping a read before it completes aborts the fetch
    let big = FetchStorage::new(&format!("{base}/tables/dat_with_checkpoint")).unwrap();
    {
        let mut fut = std::pin::pin!(big.get("_delta_log/00000000000000000002.checkpoint.parquet"));
        let polled = futures::poll!(fut.as_mut());
        assert!(polled.is_pending());
    }
    assert_eq!(big.aborted(), 1);
    let missing: Result<_, StorageError> = big.get("no/such/file").await;
    assert!(missing.unwrap_err().is_not_found());
    console_log!("cancellation: a dropped read was aborted");
}

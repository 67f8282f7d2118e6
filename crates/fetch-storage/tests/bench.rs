//! Benchmark (not a test: it asserts nothing about time): open a table over HTTP and
//! scan every row, `DELTALENS_BENCH_RUNS` times, in headless Chromium. `bench/wasm.sh`
//! builds it in release mode and runs it side by side with `deltalens bench` natively.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use deltalens_core::scan::ScanOptions;
use deltalens_core::{Table, VersionSpec};
use deltalens_fetch_storage::FetchStorage;
use deltalens_storage::{CountingStorage, Storage};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const URL: Option<&str> = option_env!("DELTALENS_BENCH_URL");
const RUNS: Option<&str> = option_env!("DELTALENS_BENCH_RUNS");
/// Interleaved shares of the scan, as `deltalens bench` uses natively.
const SHARES: usize = 8;

#[wasm_bindgen_test]
async fn bench_scan() {
    let Some(url) = URL else {
        console_log!("SKIPPED: DELTALENS_BENCH_URL was not set when the benchmark was built");
        return;
    };
    let runs: usize = RUNS.and_then(|r| r.parse().ok()).unwrap_or(5);
    let mut totals = Vec::new();
    // one warm-up run (memory growth, JIT tiers), not counted: natively the page cache
    // and allocator are warm too
    for run in 0..=runs {
        let counter = Arc::new(CountingStorage::new(FetchStorage::new(url).unwrap()));
        let table = Table::new(counter.clone(), url);
        let t0 = js_sys::Date::now();
        let snap = table.snapshot(VersionSpec::Latest).await.unwrap();
        let opened = js_sys::Date::now() - t0;
        let scan = snap.scan(ScanOptions::default()).unwrap();
        let mut rows = 0u64;
        scan.execute_interleaved(SHARES, &mut |b| {
            rows += b.num_rows() as u64;
            Ok(true)
        })
        .await
        .unwrap();
        let total = (js_sys::Date::now() - t0) / 1000.0;
        console_log!(
            "BENCH {{\"open_s\": {}, \"total_s\": {total}, \"rows\": {rows}, \"bytes\": {}}}",
            opened / 1000.0,
            counter.stats().bytes
        );
        if run > 0 {
            totals.push(total);
        }
    }
    // the transfer alone: every data file fetched whole, three at a time
    let storage = FetchStorage::new(url).unwrap();
    let table = Table::new(Arc::new(FetchStorage::new(url).unwrap()), url);
    let snap = table.snapshot(VersionSpec::Latest).await.unwrap();
    let t0 = js_sys::Date::now();
    use futures::StreamExt;
    let fetched: usize = futures::stream::iter(snap.files.iter())
        .map(|f| storage.get(&f.path))
        .buffer_unordered(SHARES)
        .map(|r| r.unwrap().len())
        .fold(0, |a, b| async move { a + b })
        .await;
    console_log!(
        "BENCH fetch only: {fetched} bytes in {} s",
        (js_sys::Date::now() - t0) / 1000.0
    );
    totals.sort_by(f64::total_cmp);
    console_log!("BENCH median {} s", totals[totals.len() / 2]);
}

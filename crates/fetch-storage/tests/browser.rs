//! In headless Chromium: tables of the conformance corpus served over HTTP by nginx (the
//! harness in `scripts/browser-test`), read with `fetch` + Range and no listing; rows must
//! equal the corpus' canonical rows byte for byte.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use deltalens_core::scan::{Scan, ScanOptions};
use deltalens_core::{Table, VersionSpec};
use deltalens_fetch_storage::FetchStorage;
use deltalens_storage::{CountingStorage, Storage};
use wasm_bindgen_test::{console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[path = "../../../tests/src/canonical.rs"]
mod canonical;

/// Base URL of the corpus, fixed when the test is built.
const BASE: Option<&str> = option_env!("DELTALENS_TEST_HTTP");

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

#[wasm_bindgen_test]
async fn browser_rows_equal_the_corpus() {
    let Some(base) = BASE else {
        console_log!("SKIPPED: DELTALENS_TEST_HTTP was not set when the test was built");
        return;
    };
    let corpus = FetchStorage::new(base);
    let mut agree = 0;
    for name in TABLES {
        let versions: serde_json::Value = serde_json::from_slice(
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
        let want = String::from_utf8(
            corpus
                .get(&format!("expected/{name}/{file}"))
                .await
                .unwrap()
                .to_vec(),
        )
        .unwrap();

        let url = format!("{base}/tables/{name}");
        let counter = Arc::new(CountingStorage::new(FetchStorage::new(&url)));
        let storage: Arc<dyn Storage> = counter.clone();
        let table = Table::new(storage, &url);
        let snap = table.snapshot(VersionSpec::Latest).await.unwrap();
        assert_eq!(snap.version, latest, "{name}");
        let opened = counter.stats();
        let scan = Scan::new(&snap, table.location(), ScanOptions::default()).unwrap();
        let mut batches = Vec::new();
        scan.execute(table.storage().as_ref(), &mut |b| {
            batches.push(b);
            Ok(true)
        })
        .await
        .unwrap();
        let got = canonical::canonical_lines(&batches, snap.schema.fields()).concat();
        assert_eq!(got, want, "{name} v{latest}");
        let all = counter.stats();
        console_log!(
            "{name}: v{latest} equal ({} rows); open: {} requests, {} bytes; scan: {} requests, {} bytes",
            want.lines().count(),
            opened.requests,
            opened.bytes,
            all.requests - opened.requests,
            all.bytes - opened.bytes
        );
        agree += 1;
    }
    console_log!(
        "browser: {agree} of {} tables equal the corpus byte for byte",
        TABLES.len()
    );
}

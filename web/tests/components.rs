//! Component tests in headless Chromium: rendering puts table content in the page as
//! text (never HTML), errors read as instructions, downloads are well-formed.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use deltalens_core::Error;
use deltalens_present::Format;
use deltalens_storage::StorageError;
use deltalens_web::{errors, rows, tabs};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn hostile() -> (Arc<Schema>, RecordBatch) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("<img src=x onerror=alert(1)>", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![Some(1), None])),
            Arc::new(StringArray::from(vec![
                Some("<script>alert('xss')</script>"),
                Some("a,\"b\"\nc"),
            ])),
        ],
    )
    .unwrap();
    (schema, batch)
}

fn container() -> web_sys::HtmlElement {
    let doc = web_sys::window().unwrap().document().unwrap();
    let div = doc.create_element("div").unwrap();
    doc.body().unwrap().append_child(&div).unwrap();
    div.dyn_into().unwrap()
}

#[wasm_bindgen_test]
fn grid_renders_html_as_text() {
    let (schema, batch) = hostile();
    let g = rows::grid(&schema, &[batch]).unwrap();
    assert_eq!(g.rows.len(), 2);
    assert_eq!(g.rows[1][0], "∅");
    let el = container();
    let handle = leptos::mount::mount_to(el.clone(), move || tabs::grid_view(g.clone(), "t", None));
    let html = el.inner_html();
    assert!(el.query_selector("img").unwrap().is_none(), "{html}");
    assert!(el.query_selector("script").unwrap().is_none(), "{html}");
    let text = el.text_content().unwrap();
    assert!(text.contains("<img src=x onerror=alert(1)>"), "{text}");
    assert!(text.contains("<script>alert('xss')</script>"), "{text}");
    assert!(html.contains("&lt;script&gt;"), "{html}");
    drop(handle);
}

#[wasm_bindgen_test]
fn downloads_are_well_formed() {
    let (schema, batch) = hostile();
    let one = std::slice::from_ref(&batch);
    let csv = String::from_utf8(rows::file(Format::Csv, &schema, one).unwrap()).unwrap();
    assert_eq!(
        csv,
        "<img src=x onerror=alert(1)>,name\n1,<script>alert('xss')</script>\n,\"a,\"\"b\"\"\nc\"\n"
    );
    // an Arrow IPC stream, as the CLI and the worker write
    let ipc = rows::file(Format::Arrow, &schema, one).unwrap();
    // Parquet: written by the codec module from the Arrow stream, as the Data tab does
    let pq = deltalens_web_extras::parquet_from_ipc(&ipc).unwrap();
    assert_eq!(&pq[..4], b"PAR1");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::from(pq),
    )
    .unwrap()
    .build()
    .unwrap();
    let back: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(back, 2);
    let back: Vec<RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    assert_eq!(back, vec![batch]);
}

#[wasm_bindgen_test]
fn utc_timestamps_show_in_the_grid() {
    // the Data tab showed `event_time` (timestamp, UTC) blank in every row: the wasm build
    // has no time-zone database for the name "UTC"
    let schema = Arc::new(Schema::new(vec![Field::new(
        "event_time",
        DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
        true,
    )]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(
            arrow_array::TimestampMicrosecondArray::from(vec![Some(1_569_888_000_000_000)])
                .with_timezone("UTC"),
        )],
    )
    .unwrap();
    let g = rows::grid(&schema, &[batch]).unwrap();
    assert_eq!(g.rows, vec![vec!["2019-10-01T00:00:00Z".to_string()]]);
}

#[wasm_bindgen_test]
fn errors_say_what_to_do() {
    let cors = Error::Storage(StorageError::Unreachable {
        path: "_delta_log/_last_checkpoint".into(),
        operation: "get",
        message: "Failed to fetch (a network or CORS failure)".into(),
    });
    assert!(errors::explain(&cors).contains("Content-Range"));
    let denied = Error::Storage(StorageError::PermissionDenied {
        path: "x".into(),
        operation: "get",
        message: "HTTP 403".into(),
    });
    assert!(errors::explain(&denied).contains("credentials"));
    let missing = Error::NotATable {
        location: "https://h/t".into(),
    };
    assert!(errors::explain(&missing).contains("table root"));
    let feature = Error::UnsupportedFeature {
        feature: "catalogManaged".into(),
    };
    assert!(errors::explain(&feature).contains("catalogManaged"));
}

#[wasm_bindgen_test]
fn charts_scale_to_the_largest_value() {
    let el = container();
    let pts = vec![("v0".to_string(), 10.0), ("v1".to_string(), 5.0)];
    let handle = leptos::mount::mount_to(el.clone(), move || tabs::bars("t", pts.clone(), "c"));
    let rects = el.query_selector_all("rect").unwrap();
    assert_eq!(rects.length(), 2);
    let h = |i: u32| -> f64 {
        rects
            .item(i)
            .unwrap()
            .dyn_into::<web_sys::Element>()
            .unwrap()
            .get_attribute("height")
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!((h(0) - 2.0 * h(1)).abs() < 0.2, "{} {}", h(0), h(1));
    drop(handle);
}

#[wasm_bindgen_test]
fn charts_say_what_they_show_and_empty_ones_say_so() {
    let el = container();
    let pts = vec![("1".to_string(), 3.0), ("2".to_string(), 9.0)];
    let handle = leptos::mount::mount_to(el.clone(), move || tabs::bars("bytes", pts.clone(), "c"));
    let svg = el.query_selector("svg").unwrap().unwrap();
    assert_eq!(svg.get_attribute("role").as_deref(), Some("img"));
    assert_eq!(
        svg.get_attribute("aria-label").as_deref(),
        Some("bytes: 2 bars from 1 to 2; the largest is 9 at 2")
    );
    drop(handle);
    let el = container();
    let zeros = vec![("1".to_string(), 0.0), ("2".to_string(), 0.0)];
    let handle =
        leptos::mount::mount_to(el.clone(), move || tabs::bars("bytes", zeros.clone(), "c"));
    assert!(el.query_selector("svg").unwrap().is_none());
    assert!(el.text_content().unwrap().contains("No data"));
    drop(handle);
}

#[wasm_bindgen_test]
fn counts_are_grouped_by_thousands() {
    use deltalens_web::format::group_digits;
    assert_eq!(group_digits("1000250"), "1,000,250");
    assert_eq!(
        group_digits("12345 files, version 2024"),
        "12,345 files, version 2024"
    );
    assert_eq!(
        group_digits("1.2 MiB (1234567 bytes)"),
        "1.2 MiB (1,234,567 bytes)"
    );
    assert_eq!(group_digits("999"), "999");
    assert_eq!(group_digits("12345.123456"), "12,345.123456");
    assert_eq!(group_digits(""), "");
}

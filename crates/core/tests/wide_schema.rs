//! Tables of very many columns (security audit, issue #31, finding 3): a scan's work grows
//! linearly with the number of columns, and a schema of more columns than
//! `MAX_SCHEMA_COLUMNS` is refused when it is read, before any other work.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use deltalens_core::scan::ScanOptions;
use deltalens_core::storage::MemoryStorage;
use deltalens_core::{Error, Table, VersionSpec};
use futures::executor::block_on;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

const PROTOCOL: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#;

/// The `metaData` line of a table whose columns are `c0..c{n}` (longs).
fn metadata(n: usize) -> String {
    let fields: Vec<serde_json::Value> = (0..n)
        .map(|i| serde_json::json!({"name": format!("c{i}"), "type": "long", "nullable": true, "metadata": {}}))
        .collect();
    let schema = serde_json::json!({"type": "struct", "fields": fields}).to_string();
    serde_json::json!({"metaData": {
        "id": "t", "format": {"provider": "parquet", "options": {}},
        "schemaString": schema, "partitionColumns": [], "configuration": {}
    }})
    .to_string()
}

/// One row of `n` long columns `c0..c{n}`, as Parquet.
fn parquet_file(n: usize) -> Vec<u8> {
    let fields: Vec<Field> = (0..n)
        .map(|i| Field::new(format!("c{i}"), DataType::Int64, true))
        .collect();
    let columns: Vec<ArrayRef> = (0..n)
        .map(|i| Arc::new(Int64Array::from(vec![i as i64])) as ArrayRef)
        .collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::None)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// A table of `n` columns and `files` one-row data files (all the same file's bytes).
fn wide_table(n: usize, files: usize) -> Table {
    let data = parquet_file(n);
    let mut commit = vec![PROTOCOL.to_string(), metadata(n)];
    for f in 0..files {
        commit.push(format!(
            r#"{{"add":{{"path":"f{f}.parquet","partitionValues":{{}},"size":{},"modificationTime":0,"dataChange":true,"stats":"{{\"numRecords\":1}}"}}}}"#,
            data.len()
        ));
    }
    let mem = MemoryStorage::new();
    mem.put("_delta_log/00000000000000000000.json", commit.join("\n"), 0);
    for f in 0..files {
        mem.put(&format!("f{f}.parquet"), data.clone(), 0);
    }
    Table::new(Arc::new(mem), "mem://t")
}

/// The time of opening `table`'s latest snapshot and scanning every row of it (the
/// best of `runs`), checking each row group came back whole.
fn scan_time(table: &Table, n: usize, files: usize, runs: usize) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let snapshot = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
            let scan = snapshot.scan(ScanOptions::default()).unwrap();
            let mut rows = 0;
            block_on(scan.execute(&mut |b| {
                assert_eq!(b.num_columns(), n);
                rows += b.num_rows();
                Ok(true)
            }))
            .unwrap();
            assert_eq!(rows, files);
            start.elapsed()
        })
        .min()
        .unwrap()
}

/// A scan of 8× the columns costs about 8× the time, not 64× (40,000 columns took 4 s and
/// 80,000 took 16.5 s: each batch looked every column up by a linear search). A ratio,
/// not a time: the test holds on a slow or busy machine.
#[test]
fn scan_time_grows_linearly_with_the_number_of_columns() {
    let (small, large, files) = (5_000, 40_000, 4);
    let (t_small, t_large) = (wide_table(small, files), wide_table(large, files));
    scan_time(&t_small, small, files, 1); // warm up
    let a = scan_time(&t_small, small, files, 3);
    let b = scan_time(&t_large, large, files, 2);
    let ratio = b.as_secs_f64() / a.as_secs_f64();
    println!(
        "{small} columns: {a:?}; {large} columns: {b:?}; ratio {ratio:.1} (linear 8, quadratic 64)"
    );
    assert!(
        ratio < 20.0,
        "{large} columns took {ratio:.1}× the time of {small} (linear is 8×, quadratic 64×): {a:?} vs {b:?}"
    );
}

/// A schema of more columns than `MAX_SCHEMA_COLUMNS` is refused when the snapshot
/// reads its `metaData`, naming the limit; one at the limit is read.
#[test]
fn a_schema_over_the_column_limit_is_refused() {
    let max = deltalens_core::limits::MAX_SCHEMA_COLUMNS;
    let open = |n: usize| {
        let mem = MemoryStorage::new();
        mem.put(
            "_delta_log/00000000000000000000.json",
            [PROTOCOL.to_string(), metadata(n)].join("\n"),
            0,
        );
        block_on(Table::new(Arc::new(mem), "mem://t").snapshot(VersionSpec::Latest))
    };
    let Err(e) = open(max as usize + 1) else {
        panic!("a schema of {} columns was read", max + 1);
    };
    match &e {
        Error::LimitExceeded {
            limit,
            value,
            max: m,
            ..
        } => {
            assert_eq!(*limit, "MAX_SCHEMA_COLUMNS");
            assert_eq!((*value, *m), (max + 1, max));
        }
        other => panic!("expected the column limit, got: {other}"),
    }
    assert!(e.to_string().contains("MAX_SCHEMA_COLUMNS"), "{e}");
    assert_eq!(
        open(max as usize).unwrap().schema.fields().len(),
        max as usize
    );
}

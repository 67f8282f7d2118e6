//! A small, valid table used by the filter and statistics targets: one data file whose
//! rows, statistics and Parquet page index agree.

use std::sync::{Arc, OnceLock};

use arrow_array::types::{Date32Type, Int32Type};
use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int64Array, PrimitiveArray, RecordBatch,
    StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use deltalens_core::{Snapshot, Table, VersionSpec};
use deltalens_storage::MemoryStorage;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::{LOCATION, block_on};

/// The Delta schema of the table (`part` is its partition column).
pub const SCHEMA: &str = r#"{"type":"struct","fields":[
{"name":"id","type":"long","nullable":true,"metadata":{}},
{"name":"price","type":"double","nullable":true,"metadata":{}},
{"name":"brand","type":"string","nullable":true,"metadata":{}},
{"name":"d","type":"date","nullable":true,"metadata":{}},
{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
{"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
{"name":"flag","type":"boolean","nullable":true,"metadata":{}},
{"name":"dec","type":"decimal(10,2)","nullable":true,"metadata":{}},
{"name":"s","type":{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
{"name":"part","type":"string","nullable":true,"metadata":{}}]}"#;

/// Statistics of the data file as Delta writers put them (timestamps truncated to
/// milliseconds, no bounds for booleans).
pub const STATS: &str = r#"{"numRecords":4,"minValues":{"id":1,"price":-1.25,"brand":"","d":"2020-12-31","ts":"2020-06-01T00:00:00.000Z","ntz":"2020-06-01T00:00:00.000","dec":-7.89,"s":{"a":1}},"maxValues":{"id":3,"price":12.5,"brand":"nars","d":"2021-06-15","ts":"2021-01-02T12:00:00.000Z","ntz":"2021-01-02T12:00:00.000","dec":4.56,"s":{"a":4}},"nullCount":{"id":1,"price":1,"brand":1,"d":1,"ts":1,"ntz":1,"flag":1,"dec":1,"s":{"a":1}}}"#;

pub const DATA_FILE: &str = "part=p1/data.parquet";

/// The rows of the data file (without the partition column).
pub fn batch() -> RecordBatch {
    let ts = vec![
        Some(1_609_459_200_123_456), // 2021-01-01T00:00:00.123456
        Some(1_609_588_800_000_001), // 2021-01-02T12:00:00.000001
        None,
        Some(1_590_969_600_000_000), // 2020-06-01T00:00:00
    ];
    let a: ArrayRef = Arc::new(PrimitiveArray::<Int32Type>::from(vec![
        Some(1),
        None,
        Some(3),
        Some(4),
    ]));
    let s = StructArray::from(vec![(Arc::new(Field::new("a", DataType::Int32, true)), a)]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![Some(1), Some(2), Some(3), None])),
        Arc::new(Float64Array::from(vec![
            Some(5.5),
            Some(12.5),
            Some(-1.25),
            None,
        ])),
        Arc::new(StringArray::from(vec![
            Some("nars"),
            Some("Dior"),
            Some(""),
            None,
        ])),
        Arc::new(PrimitiveArray::<Date32Type>::from(vec![
            Some(18628), // 2021-01-01
            Some(18793), // 2021-06-15
            None,
            Some(18627), // 2020-12-31
        ])),
        Arc::new(TimestampMicrosecondArray::from(ts.clone()).with_timezone("UTC")),
        Arc::new(TimestampMicrosecondArray::from(ts)),
        Arc::new(BooleanArray::from(vec![
            Some(true),
            Some(false),
            None,
            Some(true),
        ])),
        Arc::new(
            Decimal128Array::from(vec![Some(123), Some(456), None, Some(-789)])
                .with_precision_and_scale(10, 2)
                .expect("decimal(10,2)"),
        ),
        Arc::new(s),
    ];
    let fields = vec![
        Field::new("id", DataType::Int64, true),
        Field::new("price", DataType::Float64, true),
        Field::new("brand", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new(
            "ntz",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        ),
        Field::new("flag", DataType::Boolean, true),
        Field::new("dec", DataType::Decimal128(10, 2), true),
        Field::new(
            "s",
            DataType::Struct(Fields::from(vec![Field::new("a", DataType::Int32, true)])),
            true,
        ),
    ];
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("batch")
}

/// The data file: two row groups of two rows, one row per page, page statistics.
pub fn parquet_file() -> Vec<u8> {
    let b = batch();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2))
        .set_data_page_row_count_limit(1)
        .set_write_batch_size(1)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, b.schema(), Some(props)).expect("writer");
    w.write(&b).expect("write");
    w.close().expect("close");
    out
}

/// The commit of version 0 adding the data file with `stats`.
pub fn commit(stats: &str, size: usize) -> String {
    let metadata = serde_json::json!({"metaData": {
        "id": "fuzz", "format": {"provider": "parquet", "options": {}},
        "schemaString": SCHEMA.replace('\n', ""), "partitionColumns": ["part"],
        "configuration": {}, "createdTime": 1_600_000_000_000i64}});
    let add = serde_json::json!({"add": {
        "path": DATA_FILE, "partitionValues": {"part": "p1"}, "size": size,
        "modificationTime": 1_600_000_000_000i64, "dataChange": true, "stats": stats}});
    format!(
        "{}\n{}\n{}\n",
        r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#, metadata, add
    )
}

/// The table, its storage and its snapshot, made once per process.
pub fn table() -> &'static (Arc<MemoryStorage>, Snapshot) {
    static TABLE: OnceLock<(Arc<MemoryStorage>, Snapshot)> = OnceLock::new();
    TABLE.get_or_init(|| {
        let file = parquet_file();
        let mem = Arc::new(MemoryStorage::new());
        mem.put(DATA_FILE, file.clone(), 1_600_000_000_000);
        mem.put(
            "_delta_log/00000000000000000000.json",
            commit(STATS, file.len()),
            1_600_000_000_000,
        );
        let snapshot = block_on(Table::new(mem.clone(), LOCATION).snapshot(VersionSpec::Latest))
            .expect("the fixed table opens");
        (mem, snapshot)
    })
}

//! Dictionary amplification (issue #31, item 2): a small Parquet file whose string column
//! repeats one large dictionary-encoded value decodes to rows × value bytes. A 240 KB
//! checkpoint of 200,000 adds sharing one 100 KB `stats` string took 1.77 GB to count
//! (`info`), a 300 KB data file 1.6 GB to scan: batches were bounded by rows only (8,192
//! rows × 100 KB = 800 MB in one batch). Batches are now sized by the bytes they decode
//! (`deltalens_core::limits::BATCH_BYTES`), so memory follows that, not the rows claimed.
//!
//! Allocations are counted by this binary's global allocator; the tests take a lock so
//! that each measures itself alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::builder::{BooleanBufferBuilder, StringViewBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use deltalens_core::scan::ScanOptions;
use deltalens_core::{Error, Table, VersionSpec};
use deltalens_storage::MemoryStorage;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

/// Counts the bytes allocated and not yet freed, and their peak.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = CURRENT.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are
// updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One test measures at a time.
static ALONE: Mutex<()> = Mutex::new(());

/// The most memory a read of these files may hold (bytes allocated above what was held
/// before it started).
const BUDGET: usize = 256 << 20;

/// Run `f`, returning its result, the peak of bytes allocated above those held when it
/// started, and its duration.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize, Duration) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    (out, peak, took)
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

const PROTOCOL: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#;

fn metadata(column: &str) -> String {
    format!(
        r#"{{"metaData":{{"id":"t","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{{\"type\":\"struct\",\"fields\":[{{\"name\":\"{column}\",\"type\":\"string\",\"nullable\":true,\"metadata\":{{}}}}]}}","partitionColumns":[],"configuration":{{}},"createdTime":0}}}}"#
    )
}

/// A Parquet file of `batches` (dictionary encoding on, Snappy), without the Arrow schema
/// in its metadata: a dictionary array written here reads back as a plain string column,
/// as a file written by Spark does, so the reader materializes every repeated value.
fn parquet_file(schema: Arc<Schema>, batches: impl Iterator<Item = RecordBatch>) -> Vec<u8> {
    let props = WriterProperties::builder()
        .set_dictionary_enabled(true)
        // a dictionary of one value larger than the default 1 MiB limit stays a dictionary
        .set_dictionary_page_size_limit(8 << 20)
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .build();
    let options = ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(true);
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new_with_options(&mut out, schema, options).unwrap();
    for b in batches {
        w.write(&b).unwrap();
    }
    w.close().unwrap();
    out
}

/// `rows` copies of `value` as one dictionary-encoded column (a dictionary of one value,
/// so the generator holds it once).
fn repeated(value: &str, rows: usize) -> ArrayRef {
    let keys = Int32Array::from(vec![0; rows]);
    let values = Arc::new(StringArray::from(vec![value]));
    Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).unwrap())
}

/// A dictionary-encoded column of two values: `large` where `is_large` says so.
fn two_values(small: &str, large: &str, is_large: impl Iterator<Item = bool>) -> ArrayRef {
    let keys = Int32Array::from_iter_values(is_large.map(i32::from));
    let values = Arc::new(StringArray::from(vec![small, large]));
    Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).unwrap())
}

/// A table at version 1: a Parquet checkpoint at version 1 of `adds` adds whose `stats`
/// all are one `stats_bytes` JSON string (dictionary-encoded: stored once), then a commit
/// with the protocol and metadata. Returns the table and the checkpoint's size.
fn checkpoint_table(adds: usize, stats_bytes: usize) -> (Table, usize) {
    checkpoint_growing_table(adds, 0, stats_bytes)
}

/// As [`checkpoint_table`], but the adds before `large_from` share a small `stats` string
/// (`{"numRecords":3}`) and only those from it on the large one: rows that grow part-way.
fn checkpoint_growing_table(adds: usize, large_from: usize, stats_bytes: usize) -> (Table, usize) {
    let pad = stats_bytes.saturating_sub(40);
    let stats = format!(
        r#"{{"numRecords":3,"minValues":{{"a":"{}"}}}}"#,
        "x".repeat(pad)
    );
    let small = r#"{"numRecords":3}"#;
    let add_fields = Fields::from(vec![
        Field::new("path", DataType::Utf8, true),
        Field::new("size", DataType::Int64, true),
        Field::new("modificationTime", DataType::Int64, true),
        Field::new("dataChange", DataType::Boolean, true),
        Field::new(
            "stats",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            true,
        ),
    ]);
    let schema = Arc::new(Schema::new(vec![Field::new(
        "add",
        DataType::Struct(add_fields.clone()),
        true,
    )]));
    let chunk = 1000;
    let batches = (0..adds).step_by(chunk).map(|start| {
        let n = chunk.min(adds - start);
        let add = StructArray::new(
            add_fields.clone(),
            vec![
                Arc::new(StringArray::from_iter_values(
                    (start..start + n).map(|i| format!("{i}.parquet")),
                )) as ArrayRef,
                Arc::new(Int64Array::from(vec![1000; n])),
                Arc::new(Int64Array::from(vec![0; n])),
                Arc::new(BooleanArray::from(vec![true; n])),
                two_values(small, &stats, (start..start + n).map(|i| i >= large_from)),
            ],
            None,
        );
        RecordBatch::try_new(schema.clone(), vec![Arc::new(add)]).unwrap()
    });
    let file = parquet_file(schema.clone(), batches);
    let size = file.len();
    let mem = MemoryStorage::new();
    mem.put(
        "_delta_log/00000000000000000001.checkpoint.parquet",
        file,
        0,
    );
    mem.put(
        "_delta_log/_last_checkpoint",
        format!(r#"{{"version":1,"size":{adds}}}"#).into_bytes(),
        0,
    );
    mem.put(
        "_delta_log/00000000000000000002.json",
        [PROTOCOL, &metadata("a")].join("\n").into_bytes(),
        0,
    );
    (Table::new(Arc::new(mem), "mem://t"), size)
}

/// A table of one data file, `x.parquet`, whose column `s` holds `rows` copies of one
/// `value_bytes` string, dictionary-encoded. Returns the table and the file's size.
fn data_file_table(rows: usize, value_bytes: usize) -> (Table, usize) {
    let value = "y".repeat(value_bytes);
    let schema = Arc::new(Schema::new(vec![Field::new(
        "s",
        DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        true,
    )]));
    let chunk = 256;
    let batches = (0..rows).step_by(chunk).map(|start| {
        let n = chunk.min(rows - start);
        RecordBatch::try_new(schema.clone(), vec![repeated(&value, n)]).unwrap()
    });
    let file = parquet_file(schema.clone(), batches);
    let size = file.len();
    let add = format!(
        r#"{{"add":{{"path":"x.parquet","partitionValues":{{}},"size":{size},"modificationTime":0,"dataChange":true,"stats":"{{\"numRecords\":{rows}}}"}}}}"#
    );
    let mem = MemoryStorage::new();
    mem.put(
        "_delta_log/00000000000000000000.json",
        [PROTOCOL, &metadata("s"), &add].join("\n").into_bytes(),
        0,
    );
    mem.put("x.parquet", file, 0);
    (Table::new(Arc::new(mem), "mem://t"), size)
}

/// Counts the file totals of `table`'s checkpoint of `adds` adds (3 rows each) and asserts
/// that it held at most [`BUDGET`] at its peak; `what` describes the checkpoint of `size`
/// bytes in the printed line.
fn counted_within_budget(table: &Table, adds: usize, size: usize, what: &str) {
    let ((), peak, took) = measured(|| {
        let v = block_on(table.version_info(VersionSpec::Latest)).unwrap();
        let totals = block_on(v.file_totals(&mut |_| true)).unwrap();
        assert_eq!(totals.files, adds as u64);
        assert_eq!(totals.rows, Some(3 * adds as i64));
    });
    println!(
        "checkpoint of {} KB, {what}: file totals in {took:?}, peak {} MB",
        size >> 10,
        mb(peak)
    );
    assert!(
        peak <= BUDGET,
        "counting {adds} adds of a {} KB checkpoint held {} MB at its peak (budget {} MB)",
        size >> 10,
        mb(peak),
        mb(BUDGET)
    );
}

fn mb(n: usize) -> usize {
    n >> 20
}

/// `info` (the file totals, streamed from the checkpoint) over 50,000 adds that share one
/// dictionary-encoded 100 KB `stats` string: 5 GB claimed by a file of a few hundred KB.
/// Counted within the budget (it took 1.8 GB for 200,000 adds, about 800 MB a batch).
#[test]
fn a_checkpoint_of_one_repeated_large_stats_string_is_counted_within_budget() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (adds, stats_bytes) = (50_000, 100 << 10);
    let (table, size) = checkpoint_table(adds, stats_bytes);
    let what = format!("claiming {} MB of stats", mb(adds * stats_bytes));
    counted_within_budget(&table, adds, size, &what);
}

/// A scan (what `query "SELECT COUNT(s)"` runs) of a data file whose string column repeats
/// one dictionary-encoded 1 MiB value 1,536 times: 1.5 GiB decoded from a file of a few
/// KB, within the budget (the first batch alone was 1.5 GiB; over 2 GiB it failed, its
/// string offsets overflowing).
#[test]
fn a_data_file_of_one_repeated_large_string_is_scanned_within_budget() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (rows, value_bytes) = (1536, 1 << 20);
    let (table, size) = data_file_table(rows, value_bytes);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let options = ScanOptions {
        columns: Some(vec!["s".into()]),
        ..Default::default()
    };
    let scan = snap.scan(options).unwrap();
    let (counted, peak, took) = measured(|| {
        let mut counted = 0;
        let mut largest = 0;
        block_on(scan.execute(&mut |b| {
            counted += b.num_rows();
            largest = largest.max(b.get_array_memory_size());
            Ok(true)
        }))
        .unwrap();
        (counted, largest)
    });
    println!(
        "data file of {} KB claiming {} MB: scanned in {took:?}, peak {} MB, largest batch {} MB",
        size >> 10,
        mb(rows * value_bytes),
        mb(peak),
        mb(counted.1)
    );
    assert_eq!(counted.0, rows);
    assert!(
        peak <= BUDGET,
        "scanning a {} KB file held {} MB at its peak (budget {} MB)",
        size >> 10,
        mb(peak),
        mb(BUDGET)
    );
}

/// With a decoded-bytes budget (the worker's), the same file is refused once the batches
/// decoded pass it, naming the limit, having held about the budget, not the 1.5 GiB one batch
/// used to decode before it was counted.
#[test]
fn a_decoded_bytes_budget_stops_a_dictionary_bomb_early() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (rows, value_bytes) = (1536, 1 << 20);
    let (table, _) = data_file_table(rows, value_bytes);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let max = 64u64 << 20;
    let options = ScanOptions {
        columns: Some(vec!["s".into()]),
        max_decoded_bytes: Some(max),
        ..Default::default()
    };
    let scan = snap.scan(options).unwrap();
    let (err, peak, took) = measured(|| block_on(scan.execute(&mut |_| Ok(true))).unwrap_err());
    println!("refused in {took:?}, peak {} MB: {err}", mb(peak));
    match &err {
        Error::DecodedBytesExceeded { max: m, path, .. } => {
            assert_eq!((*m, path.as_str()), (max, "x.parquet"));
        }
        other => panic!("expected the decoded-bytes budget, got: {other}"),
    }
    assert!(err.to_string().contains("max_decoded_bytes"), "{err}");
    assert!(
        peak <= 2 * max as usize,
        "refusing held {} MB at its peak (budget {} MB)",
        mb(peak),
        mb(max as usize)
    );
}

/// A table of one data file, `x.parquet`, of `small + large` rows: `id` (0, 1, ...) and a
/// dictionary-encoded `s` that is "a" for the first `small` rows and one `value_bytes`
/// string for the rest. Returns the table and the file's size.
fn growing_data_file_table(small: usize, large: usize, value_bytes: usize) -> (Table, usize) {
    let value = "y".repeat(value_bytes);
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("s", dict, true),
    ]));
    let rows = small + large;
    let chunk = 256;
    let batches = (0..rows).step_by(chunk).map(|start| {
        let n = chunk.min(rows - start);
        let ids = Int64Array::from_iter_values((start..start + n).map(|i| i as i64));
        let s = two_values("a", &value, (start..start + n).map(|i| i >= small));
        RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), s]).unwrap()
    });
    let file = parquet_file(schema.clone(), batches);
    let size = file.len();
    let add = format!(
        r#"{{"add":{{"path":"x.parquet","partitionValues":{{}},"size":{size},"modificationTime":0,"dataChange":true,"stats":"{{\"numRecords\":{rows}}}"}}}}"#
    );
    let schema_string = r#"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}"#;
    let metadata = format!(
        r#"{{"metaData":{{"id":"t","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{schema_string}","partitionColumns":[],"configuration":{{}},"createdTime":0}}}}"#
    );
    let mem = MemoryStorage::new();
    mem.put(
        "_delta_log/00000000000000000000.json",
        [PROTOCOL, &metadata, &add].join("\n").into_bytes(),
        0,
    );
    mem.put("x.parquet", file, 0);
    (Table::new(Arc::new(mem), "mem://t"), size)
}

/// Rows that grow part-way through a file (the open finding of `scan_amplification`):
/// 50,000 rows of "a", then 1,500 rows of one 1 MiB dictionary value. The batches grow to
/// 8,192 rows over the small rows, so the first batch to reach the large ones would
/// decode 8,192 x 1 MiB (it held 1.5 GiB here before the decoder counted the bytes it
/// copies). Now that batch is refused at `BATCH_VALUE_BYTES` and its rows decoded again
/// in smaller batches: every row once, in order, within the budget.
#[test]
fn rows_that_grow_part_way_are_scanned_within_budget_each_once() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (small, large, value_bytes) = (50_000, 1_500, 1 << 20);
    let (table, size) = growing_data_file_table(small, large, value_bytes);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let ((ids, lengths, largest), peak, took) = measured(|| {
        let (mut ids, mut lengths, mut largest) = (Vec::new(), Vec::new(), 0);
        block_on(scan.execute(&mut |b| {
            largest = largest.max(b.get_array_memory_size());
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            ids.extend(id.values().iter().copied());
            let s = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            lengths.extend(s.iter().map(|v| v.map_or(0, str::len)));
            Ok(true)
        }))
        .unwrap();
        (ids, lengths, largest)
    });
    println!(
        "data file of {} KB, {small} small rows then {large} of {} KB: scanned in {took:?}, peak {} MB, largest batch {} MB",
        size >> 10,
        value_bytes >> 10,
        mb(peak),
        mb(largest)
    );
    assert_eq!(ids, (0..(small + large) as i64).collect::<Vec<_>>());
    assert!(lengths[..small].iter().all(|&l| l == 1));
    assert!(lengths[small..].iter().all(|&l| l == value_bytes));
    assert!(
        peak <= BUDGET,
        "scanning a {} KB file held {} MB at its peak (budget {} MB)",
        size >> 10,
        mb(peak),
        mb(BUDGET)
    );
}

/// The same in a checkpoint (read for the file totals): 40,000 adds with a small `stats`
/// string, then 3,000 sharing one 100 KB string. Counted within the budget, every add once.
#[test]
fn a_checkpoint_whose_stats_grow_part_way_is_counted_within_budget() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (adds, large_from, stats_bytes) = (43_000, 40_000, 100 << 10);
    let (table, size) = checkpoint_growing_table(adds, large_from, stats_bytes);
    let what = format!("stats growing to {} KB part-way", stats_bytes >> 10);
    counted_within_budget(&table, adds, size, &what);
}

/// Under a decoded-bytes budget (the worker's), the rows that grow part-way are refused at
/// the budget, and the batches refused and decoded again count against it: the work a
/// scan does is bounded by the budget (and one batch), not by the 20 GB the file decodes
/// to. (The retry after a refusal is sized by the refused batch's largest value, 1 MiB: 32
/// rows, not 8,192 / 8 = 1,024 rows refused again.)
#[test]
fn a_decoded_bytes_budget_bounds_the_work_of_rows_that_grow_part_way() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (small, large, value_bytes) = (50_000, 20_000, 1 << 20);
    let (table, size) = growing_data_file_table(small, large, value_bytes);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let max = 128u64 << 20;
    let options = ScanOptions {
        max_decoded_bytes: Some(max),
        ..Default::default()
    };
    let scan = snap.scan(options).unwrap();
    let mut rows = 0;
    let (err, peak, took) = measured(|| {
        block_on(scan.execute(&mut |b| {
            rows += b.num_rows();
            Ok(true)
        }))
        .unwrap_err()
    });
    println!(
        "{} KB file of {small} small rows then {large} of 1 MiB, budget {} MB: refused after {rows} rows in {took:?}, peak {} MB: {err}",
        size >> 10,
        mb(max as usize),
        mb(peak)
    );
    let Error::DecodedBytesExceeded { used, .. } = err else {
        panic!("expected the decoded-bytes budget, got: {err}");
    };
    // counted: batches handed on and refused (64 MiB each) up to the one that passed the
    // budget: at most one refused batch (64 MiB) or one batch of large rows (32 MiB) over
    assert!(used <= max + (64 << 20), "{used}");
    assert!(rows < small + 128, "{rows}");
    assert!(
        peak <= BUDGET,
        "refusing held {} MB at its peak (budget {} MB)",
        mb(peak),
        mb(BUDGET)
    );
}

/// A wide table of large dictionaries (a reviewer's finding): 70 string columns, each with
/// a dictionary of 1,000 values of 1 KB (70 MB of dictionaries per row group), in two row
/// groups. A dictionary page is decoded once per column chunk, by whichever batch reads it
/// first: charged to that batch, the second row group's first batch passed the 64 MiB
/// value ceiling at any row count, was refused down to one row, and left the rest of the
/// file in batches of one row. Dictionaries are not a batch's work: the file scans in a few
/// dozen batches.
#[test]
fn large_dictionaries_are_not_charged_to_a_batch() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (columns, distinct, rows) = (70, 1000, 2000);
    let fields: Vec<Field> = (0..columns)
        .map(|c| Field::new(format!("c{c}"), DataType::Utf8, true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let values: Vec<String> = (0..distinct)
        .map(|i| format!("{i:06}{}", "x".repeat(994)))
        .collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        (0..columns)
            .map(|c| {
                Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|r| values[(r + c) % distinct].as_str()),
                )) as ArrayRef
            })
            .collect(),
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(true)
        .set_dictionary_page_size_limit(8 << 20)
        .set_max_row_group_row_count(Some(rows / 2))
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .build();
    let options = ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(true);
    let mut file = Vec::new();
    let mut w = ArrowWriter::try_new_with_options(&mut file, schema, options).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let fields_json: Vec<String> = (0..columns)
        .map(|c| {
            format!(
                r#"{{\"name\":\"c{c}\",\"type\":\"string\",\"nullable\":true,\"metadata\":{{}}}}"#
            )
        })
        .collect();
    let metadata = format!(
        r#"{{"metaData":{{"id":"t","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{{\"type\":\"struct\",\"fields\":[{}]}}","partitionColumns":[],"configuration":{{}},"createdTime":0}}}}"#,
        fields_json.join(",")
    );
    let add = format!(
        r#"{{"add":{{"path":"x.parquet","partitionValues":{{}},"size":{},"modificationTime":0,"dataChange":true}}}}"#,
        file.len()
    );
    let mem = MemoryStorage::new();
    mem.put(
        "_delta_log/00000000000000000000.json",
        [PROTOCOL, &metadata, &add].join("\n").into_bytes(),
        0,
    );
    mem.put("x.parquet", file, 0);
    let table = Table::new(Arc::new(mem), "mem://t");
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let (mut seen, mut batches) = (0, 0);
    let ((), peak, took) = measured(|| {
        block_on(scan.execute(&mut |b| {
            seen += b.num_rows();
            batches += 1;
            Ok(true)
        }))
        .unwrap();
    });
    println!(
        "{columns} columns of 1 MB dictionaries, {rows} rows in 2 row groups: {batches} batches in {took:?}, peak {} MB",
        mb(peak)
    );
    assert_eq!(seen, rows);
    assert!(batches < 100, "{batches} batches");
    assert!(peak <= BUDGET, "peak {} MB", mb(peak));
}

/// A table of one data file, `x.parquet` (`file`), whose Delta schema has the fields
/// `fields` (Delta JSON, as in a `schemaString`).
fn one_file_table(file: Vec<u8>, fields: &str) -> Table {
    let schema_string = format!(r#"{{"type":"struct","fields":[{fields}]}}"#).replace('"', "\\\"");
    let metadata = format!(
        r#"{{"metaData":{{"id":"t","format":{{"provider":"parquet","options":{{}}}},"schemaString":"{schema_string}","partitionColumns":[],"configuration":{{}},"createdTime":0}}}}"#
    );
    let add = format!(
        r#"{{"add":{{"path":"x.parquet","partitionValues":{{}},"size":{},"modificationTime":0,"dataChange":true}}}}"#,
        file.len()
    );
    let mem = MemoryStorage::new();
    mem.put(
        "_delta_log/00000000000000000000.json",
        [PROTOCOL, &metadata, &add].join("\n").into_bytes(),
        0,
    );
    mem.put("x.parquet", file, 0);
    Table::new(Arc::new(mem), "mem://t")
}

const ID_AND_S: &str = r#"{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}}"#;

/// Writes `batches` with `props`; the Arrow schema is kept in the file's metadata when
/// `arrow_schema` (the reader then follows its types, e.g. `Utf8View`).
fn written(
    schema: Arc<Schema>,
    props: WriterProperties,
    arrow_schema: bool,
    batches: impl Iterator<Item = RecordBatch>,
) -> Vec<u8> {
    let options = ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(!arrow_schema);
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new_with_options(&mut out, schema, options).unwrap();
    for b in batches {
        w.write(&b).unwrap();
    }
    w.close().unwrap();
    out
}

/// Scans `table` (columns `id`, `s`) and asserts every id once in order, the first `small`
/// strings of 1 byte and the rest of `value_bytes`, within [`BUDGET`].
fn scanned_within_budget(
    table: &Table,
    small: usize,
    large: usize,
    value_bytes: usize,
    what: &str,
) {
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let ((ids, lengths), peak, took) = measured(|| {
        let (mut ids, mut lengths) = (Vec::new(), Vec::new());
        block_on(scan.execute(&mut |b| {
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            ids.extend(id.values().iter().copied());
            let s = b.column(1);
            match s.data_type() {
                DataType::Utf8 => {
                    lengths.extend(s.as_string::<i32>().iter().map(|v| v.map_or(0, str::len)))
                }
                DataType::Utf8View => {
                    lengths.extend(s.as_string_view().iter().map(|v| v.map_or(0, str::len)))
                }
                other => panic!("s is {other}"),
            }
            Ok(true)
        }))
        .unwrap();
        (ids, lengths)
    });
    println!("{what}: scanned in {took:?}, peak {} MB", mb(peak));
    assert_eq!(ids, (0..(small + large) as i64).collect::<Vec<_>>());
    assert!(lengths[..small].iter().all(|&l| l == 1));
    assert!(lengths[small..].iter().all(|&l| l == value_bytes));
    assert!(
        peak <= BUDGET,
        "{what}: held {} MB at its peak (budget {} MB)",
        mb(peak),
        mb(BUDGET)
    );
}

/// `small` ids and strings "a", then `large` of one `value_bytes` string, in chunks of 256
/// rows, the strings as `Utf8View` when `view` (one copy of the value held per chunk).
fn growing_batches(
    schema: Arc<Schema>,
    small: usize,
    large: usize,
    value_bytes: usize,
    view: bool,
) -> impl Iterator<Item = RecordBatch> {
    let value = "y".repeat(value_bytes);
    let rows = small + large;
    (0..rows).step_by(256).map(move |start| {
        let n = 256.min(rows - start);
        let ids = Int64Array::from_iter_values((start..start + n).map(|i| i as i64));
        let pick = |i: usize| if i < small { "a" } else { value.as_str() };
        let s: ArrayRef = if view {
            let mut b = StringViewBuilder::new().with_deduplicate_strings();
            (start..start + n).for_each(|i| b.append_value(pick(i)));
            Arc::new(b.finish())
        } else {
            Arc::new(StringArray::from_iter_values((start..start + n).map(pick)))
        };
        RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), s]).unwrap()
    })
}

/// Writes `small` ids and strings "a", then `large` of one 1 MiB string, with the string
/// column `s` in `encoding` (no dictionary, Snappy) and typed `Utf8View` in the embedded
/// Arrow schema when `view`, and scans it within the budget ([`scanned_within_budget`]).
fn growing_strings_scanned_within_budget(encoding: Encoding, view: bool, large: usize) {
    let (small, value_bytes) = (50_000, 1 << 20);
    let s_type = if view {
        DataType::Utf8View
    } else {
        DataType::Utf8
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("s", s_type.clone(), true),
    ]));
    let s = ColumnPath::from("s");
    let props = WriterProperties::builder()
        .set_column_dictionary_enabled(s.clone(), false)
        .set_column_encoding(s, encoding)
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .build();
    let batches = growing_batches(schema.clone(), small, large, value_bytes, view);
    let file = written(schema, props, view, batches);
    let what = format!(
        "{} KB file, {s_type} in {encoding}, {small} rows of 1 byte then {large} of {} KB",
        file.len() >> 10,
        value_bytes >> 10
    );
    scanned_within_budget(
        &one_file_table(file, ID_AND_S),
        small,
        large,
        value_bytes,
        &what,
    );
}

/// A reviewer's finding: a file whose embedded Arrow schema asks for `Utf8View` is read by
/// parquet's view decoder, which copied `DELTA_BYTE_ARRAY` values (a prefix repeated from
/// the value before: 1 MiB a row from a few bytes) without counting them. 50,000 rows of
/// "a", then 1,500 of one 1 MiB value: every row once, within the budget.
#[test]
fn a_view_column_whose_values_grow_part_way_is_scanned_within_budget() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    growing_strings_scanned_within_budget(Encoding::DELTA_BYTE_ARRAY, true, 1_500);
}

/// A reviewer's finding: `DELTA_LENGTH_BYTE_ARRAY` copies a batch's values out of each page
/// in one piece, without counting them; a batch spanning many pages of compressed 1 MiB
/// values held them all. 50,000 rows of "a", then 600 of 1 MiB (Snappy: 30 MB on disk):
/// every row once, within the budget.
#[test]
fn delta_length_byte_arrays_that_grow_part_way_are_scanned_within_budget() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    growing_strings_scanned_within_budget(Encoding::DELTA_LENGTH_BYTE_ARRAY, false, 600);
}

/// A reviewer's finding: the elements of a list are bounded by nothing but the levels a
/// page claims, and run-length encoded levels make a million null elements of a few bytes.
/// 50,000 rows of `[true]`, then 100 rows of 1,000,000 null elements (400 MB of levels
/// and slots from a file of a few hundred KB): every row once, with its length, within the
/// budget.
#[test]
fn lists_that_grow_part_way_are_scanned_within_budget() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (small, large, elements) = (50_000usize, 100usize, 1_000_000usize);
    let item = Arc::new(Field::new("element", DataType::Boolean, true));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("l", DataType::List(item.clone()), true),
    ]));
    let rows = small + large;
    let total = small + large * elements;
    let mut valid = BooleanBufferBuilder::new(total);
    valid.append_n(small, true);
    valid.append_n(total - small, false);
    let valid = valid.finish();
    let child = BooleanArray::new(valid.clone(), Some(valid.into()));
    let offsets =
        OffsetBuffer::from_lengths((0..rows).map(|r| if r < small { 1 } else { elements }));
    let list = ListArray::new(item, offsets, Arc::new(child), None);
    let ids = Int64Array::from_iter_values(0..rows as i64);
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(list)]).unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .build();
    let file = written(schema, props, false, std::iter::once(batch));
    let size = file.len();
    let fields = r#"{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"l","type":{"type":"array","elementType":"boolean","containsNull":true},"nullable":true,"metadata":{}}"#;
    let table = one_file_table(file, fields);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let ((ids, lengths), peak, took) = measured(|| {
        let (mut ids, mut lengths) = (Vec::new(), Vec::new());
        block_on(scan.execute(&mut |b| {
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            ids.extend(id.values().iter().copied());
            let l = b.column(1).as_list::<i32>();
            lengths.extend(l.offsets().lengths());
            Ok(true)
        }))
        .unwrap();
        (ids, lengths)
    });
    println!(
        "{} KB file, {small} lists of 1 then {large} of {elements} null elements: scanned in {took:?}, peak {} MB",
        size >> 10,
        mb(peak)
    );
    assert_eq!(ids, (0..rows as i64).collect::<Vec<_>>());
    assert!(lengths[..small].iter().all(|&l| l == 1));
    assert!(lengths[small..].iter().all(|&l| l == elements));
    assert!(
        peak <= BUDGET,
        "held {} MB at its peak (budget {} MB)",
        mb(peak),
        mb(BUDGET)
    );
}

/// A reviewer's finding: a FIXED_LEN_BYTE_ARRAY column's width is the file's claim, up to
/// 2^31 - 1 bytes, and the decoder reserves a batch's rows times it (8 TiB for a 1 GiB
/// width: an abort, which nothing catches) and pads each null to a whole width. A file of
/// one null value of a 1 GiB width is refused at its footer, naming the limit.
#[test]
fn a_fixed_length_column_wider_than_the_limit_is_refused_at_the_footer() {
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let schema = parse_message_type(
        "message m { optional int64 id; optional fixed_len_byte_array(1073741824) s; }",
    )
    .unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut file = Vec::new();
    let mut w = SerializedFileWriter::new(&mut file, Arc::new(schema), props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut id = rg.next_column().unwrap().unwrap();
    id.typed::<parquet::data_type::Int64Type>()
        .write_batch(&[0], Some(&[1]), None)
        .unwrap();
    id.close().unwrap();
    let mut col = rg.next_column().unwrap().unwrap();
    col.typed::<parquet::data_type::FixedLenByteArrayType>()
        .write_batch(&[], Some(&[0]), None)
        .unwrap();
    col.close().unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    let size = file.len();
    let fields = r#"{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"s","type":"binary","nullable":true,"metadata":{}}"#;
    let table = one_file_table(file, fields);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let (err, peak, took) = measured(|| block_on(scan.execute(&mut |_| Ok(true))).unwrap_err());
    println!(
        "{size} B file of a 1 GiB-wide column: refused in {took:?}, peak {} MB: {err}",
        mb(peak)
    );
    assert!(err.to_string().contains("MAX_FIXED_LEN_BYTES"), "{err}");
    assert!(peak <= BUDGET, "peak {} MB", mb(peak));
}

/// A reviewer's finding: an embedded Arrow schema that reads a list as `ListView` of
/// `Utf8View` reached the view decoder again (its values uncounted), and one that reads a
/// list as `FixedSizeList` of 2^26 elements padded every null row to that length. Such
/// hints are read as plain lists of plain strings: every row, within the budget.
#[test]
fn list_view_and_fixed_size_list_hints_are_read_as_plain_lists() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // the file is written with plain types, then its embedded schema is replaced by one
    // with the hostile types (as a crafted file would carry)
    let item = Arc::new(Field::new("element", DataType::Utf8, true));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("l", DataType::List(item.clone()), true),
    ]));
    let rows = 1000usize;
    let lists = ListArray::new(
        item.clone(),
        OffsetBuffer::from_lengths((0..rows).map(|r| usize::from(r % 2 == 0))),
        Arc::new(StringArray::from_iter_values(
            (0..rows / 2).map(|i| format!("v{i}")),
        )),
        Some(arrow_buffer::NullBuffer::from_iter(
            (0..rows).map(|r| r % 2 == 0),
        )),
    );
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(lists),
        ],
    )
    .unwrap();
    for (name, hint) in [
        (
            "ListView<Utf8View>",
            DataType::ListView(Arc::new(Field::new("element", DataType::Utf8View, true))),
        ),
        (
            "FixedSizeList<Utf8, 2^26>",
            DataType::FixedSizeList(item.clone(), 1 << 26),
        ),
    ] {
        let hinted = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("l", hint, true),
        ]);
        let encoded = parquet::arrow::encode_arrow_schema(&hinted);
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new(
                "ARROW:schema".to_string(),
                encoded,
            )]))
            .build();
        let file = written(schema.clone(), props, false, std::iter::once(batch.clone()));
        let fields = r#"{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"l","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}"#;
        let table = one_file_table(file, fields);
        let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
        let scan = snap.scan(ScanOptions::default()).unwrap();
        let ((seen, nulls), peak, took) = measured(|| {
            let (mut seen, mut nulls) = (0, 0);
            block_on(scan.execute(&mut |b| {
                seen += b.num_rows();
                nulls += b.column(1).null_count();
                Ok(true)
            }))
            .unwrap();
            (seen, nulls)
        });
        println!("{name} hint: {seen} rows in {took:?}, peak {} MB", mb(peak));
        assert_eq!((seen, nulls), (rows, rows / 2), "{name}");
        assert!(peak <= BUDGET, "{name}: peak {} MB", mb(peak));
    }
}

/// A reviewer's finding: each column of a row group keeps its current decompressed page
/// while a batch is decoded, and a page of zeros claiming 32 MiB compresses (LZ4) to about
/// 130 KB: twenty such columns in a 3 MB file held 640 MiB at once. The pages one row
/// group's columns hold are charged before each is decompressed
/// (`limits::MAX_HELD_PAGE_BYTES`, 512 MiB): the read is refused, naming the limit,
/// holding no more than it.
#[test]
fn the_pages_a_row_group_holds_at_once_are_bounded() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    const COLUMNS: usize = 20;
    const ROWS: usize = 4 << 20; // one 32 MiB page of 8-byte zeros per column
    let names: Vec<String> = (0..COLUMNS).map(|i| format!("c{i}")).collect();
    let schema = Arc::new(Schema::new(
        names
            .iter()
            .map(|n| Field::new(n, DataType::Int64, false))
            .collect::<Vec<_>>(),
    ));
    let zeros: ArrayRef = Arc::new(Int64Array::from(vec![0i64; ROWS]));
    let batch = RecordBatch::try_new(schema.clone(), vec![zeros; COLUMNS]).unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::PLAIN)
        .set_compression(Compression::LZ4_RAW)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .set_data_page_size_limit(usize::MAX)
        .set_data_page_row_count_limit(usize::MAX)
        .set_write_batch_size(ROWS)
        .set_max_row_group_row_count(Some(ROWS))
        .build();
    let file = written(schema, props, false, std::iter::once(batch));
    let size = file.len();
    let fields = names
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","type":"long","nullable":false,"metadata":{{}}}}"#))
        .collect::<Vec<_>>()
        .join(",");
    let table = one_file_table(file, &fields);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let (outcome, peak, took) = measured(|| block_on(scan.execute(&mut |_| Ok(true))));
    println!(
        "{size} B file of {COLUMNS} columns of one 32 MiB page each: {took:?}, peak {} MB: {outcome:?}",
        mb(peak)
    );
    let held = deltalens_core::limits::MAX_HELD_PAGE_BYTES as usize;
    match outcome {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "MAX_HELD_PAGE_BYTES"),
        other => panic!("expected the held-pages limit, got {other:?}"),
    }
    assert!(
        peak <= held + (64 << 20),
        "held {} MB at its peak (limit {} MB)",
        mb(peak),
        mb(held)
    );
}

/// A reviewer's finding: skipping rows walks the levels of a repeated column one by one,
/// and run-length encoding makes billions of them a few bytes (a ~30-byte page may claim
/// 2^31: seconds to walk, uncounted): a scan resumed after such a row (the explorer's next
/// page of rows) made the reader walk them all. The levels and values one batch skips within pages are
/// charged before they are walked (`limits::MAX_SKIPPED_LEVELS`, 2^28): the scan is
/// refused, naming the limit. (Lowered to 2^20 here: the writer holds a row's levels in
/// memory, two bytes each.)
#[test]
fn skipping_a_row_of_more_levels_than_the_limit_is_refused() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
        .set_data_page_size_limit(usize::MAX)
        .set_data_page_row_count_limit(usize::MAX)
        .build();
    let file = one_column_file::<parquet::data_type::Int32Type>(
        "message m { optional group l (LIST) { repeated group list { optional int32 element; } } }",
        props,
        |l| {
            // row 0: a list of 2^21 null elements (definition level 2)
            let nulls = vec![2i16; 1 << 21];
            let mut rep = vec![1i16; 1 << 21];
            rep[0] = 0;
            l.write_batch(&[], Some(&nulls), Some(&rep)).unwrap();
            // row 1: [7]
            l.write_batch(&[7], Some(&[3]), Some(&[0])).unwrap();
        },
    );
    let size = file.len();
    let fields = r#"{"name":"l","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}}"#;
    let table = one_file_table(file, fields);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    // the explorer's grid: a first page of one row, then the next, resumed after it
    let options = ScanOptions {
        limit: Some(1),
        ..ScanOptions::default()
    };
    let scan = snap.scan(options).unwrap();
    let mut progress = deltalens_core::scan::ScanProgress::default();
    let (first, _) = block_on(scan.execute_resuming(&mut progress, &mut |_| Ok(true))).unwrap();
    assert_eq!(first.rows_returned, 1);
    let default = deltalens_core::limits::max_skipped_levels();
    assert_eq!(default, deltalens_core::limits::MAX_SKIPPED_LEVELS);
    deltalens_core::limits::set_max_skipped_levels(1 << 20);
    let (outcome, _, took) =
        measured(|| block_on(scan.execute_resuming(&mut progress, &mut |_| Ok(true))));
    deltalens_core::limits::set_max_skipped_levels(default);
    println!("{size} B file, resumed after a row of 2^21 levels: {took:?}: {outcome:?}");
    match outcome {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "MAX_SKIPPED_LEVELS"),
        other => panic!("expected the skipped-levels limit, got {other:?}"),
    }
    // under the default limit the same resumption walks them and returns the next row
    let mut next = Vec::new();
    block_on(scan.execute_resuming(&mut progress, &mut |b| {
        let lists = b.column(0).as_list::<i32>();
        next.extend(
            (0..b.num_rows()).map(|i| lists.value(i).as_primitive::<Int32Type>().values().to_vec()),
        );
        Ok(true)
    }))
    .unwrap();
    assert_eq!(next, [vec![7]]);
}

/// A reviewer's finding: a column's offset index (its page locations) was read into a
/// vector reserved for as many locations as its list header claims: a header claiming
/// 2^31 - 1 asked for 51 GB, an abort nothing catches. The claim is now checked against
/// the bytes left first. A scan with a limit reads the offset index (to fetch only the
/// first pages): it answers or fails with an error, within the budget.
#[test]
fn an_offset_index_claiming_billions_of_pages_is_refused() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..1000));
    let batch = RecordBatch::try_new(schema.clone(), vec![ids]).unwrap();
    let props = WriterProperties::builder()
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .build();
    let mut file = written(schema, props, false, std::iter::once(batch));
    let md = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&bytes::Bytes::from(file.clone()))
        .unwrap();
    let at = md.row_group(0).column(0).offset_index_offset().unwrap() as usize;
    // field 1, a list: its header becomes 2^31 - 1 structs (0xFC, then the size as a varint)
    assert_eq!(
        file[at], 0x19,
        "an offset index starts with its list of page locations"
    );
    file[at + 1..at + 7].copy_from_slice(&[0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0x07]);
    let table = one_file_table(
        file,
        r#"{"name":"id","type":"long","nullable":false,"metadata":{}}"#,
    );
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap
        .scan(ScanOptions {
            limit: Some(10),
            ..ScanOptions::default()
        })
        .unwrap();
    let (outcome, peak, took) = measured(|| block_on(scan.execute(&mut |_| Ok(true))));
    println!(
        "an offset index claiming 2^31 - 1 pages: {took:?}, peak {} MB: {outcome:?}",
        mb(peak)
    );
    let err = outcome.unwrap_err().to_string();
    assert!(err.contains("exceeds remaining input length"), "{err}");
    assert!(peak <= BUDGET, "peak {} MB", mb(peak));
}

/// A reviewer's finding: a FIXED_LEN_BYTE_ARRAY column of width 0 holds any count of values
/// in no bytes (an empty dictionary page claiming 2^31 of them reserved 8 GiB of offsets).
/// No Delta type is zero bytes wide: the file is refused at its footer.
#[test]
fn a_zero_width_fixed_length_column_is_refused_at_the_footer() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let file = one_column_file::<parquet::data_type::FixedLenByteArrayType>(
        "message m { optional fixed_len_byte_array(0) s; }",
        WriterProperties::builder().build(),
        |s| {
            s.write_batch(&[], Some(&[0]), None).unwrap();
        },
    );
    let table = one_file_table(
        file,
        r#"{"name":"s","type":"binary","nullable":true,"metadata":{}}"#,
    );
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let err = block_on(scan.execute(&mut |_| Ok(true))).unwrap_err();
    assert!(err.to_string().contains("zero bytes wide"), "{err}");
}

/// A file of one row group of the one column `message` declares, its values written by
/// `write` (with the low-level writer: levels and values as given).
fn one_column_file<T: parquet::data_type::DataType>(
    message: &str,
    props: WriterProperties,
    write: impl FnOnce(&mut parquet::column::writer::ColumnWriterImpl<'_, T>),
) -> Vec<u8> {
    use parquet::file::writer::SerializedFileWriter;
    let schema = parquet::schema::parser::parse_message_type(message).unwrap();
    let mut file = Vec::new();
    let mut w = SerializedFileWriter::new(&mut file, Arc::new(schema), Arc::new(props)).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut col = rg.next_column().unwrap().unwrap();
    write(col.typed::<T>());
    col.close().unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    file
}

/// A Parquet file of no rows whose schema is written by hand (compact Thrift): under the
/// root, a chain of `depth` nested optional groups, and at its bottom `leaves` optional
/// INT64 columns. Each group costs 8 bytes of footer and each leaf 8.
fn nested_schema_file(depth: usize, leaves: usize) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn list_header(out: &mut Vec<u8>, size: usize) {
        // elements: structs (12)
        if size < 15 {
            out.push(((size as u8) << 4) | 0x0C);
        } else {
            out.push(0xFC);
            varint(out, size as u64);
        }
    }
    // an element's fields: 1 type, 3 repetition_type, 4 name, 5 num_children (i32: 5,
    // zigzag; binary: 8)
    let group = |out: &mut Vec<u8>, children: usize| {
        out.extend([0x35, 0x02, 0x18, 0x01, b'g', 0x15]);
        varint(out, (children as u64) << 1);
        out.push(0);
    };
    let mut meta = vec![0x15, 0x04, 0x19]; // version 2, then the schema list
    list_header(&mut meta, 1 + depth + leaves);
    meta.extend([0x48, 0x01, b'r', 0x15, 0x02, 0x00]); // the root, one child
    for d in 0..depth {
        group(&mut meta, if d + 1 == depth { leaves } else { 1 });
    }
    for _ in 0..leaves {
        meta.extend([0x15, 0x04, 0x25, 0x02, 0x18, 0x01, b'x', 0x00]); // INT64, OPTIONAL
    }
    meta.extend([0x16, 0x00, 0x19, 0x0C, 0x00]); // num_rows 0, no row groups, STOP
    let mut file = b"PAR1".to_vec();
    file.extend(&meta);
    file.extend((meta.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

/// The error a scan of a table whose one data file is `file` ends with, on a thread of
/// 2 MiB of stack (a worker thread's), with its peak memory and duration.
fn scan_error_on_a_small_stack(file: Vec<u8>) -> (String, usize, Duration) {
    let table = one_file_table(
        file,
        r#"{"name":"g","type":"long","nullable":true,"metadata":{}}"#,
    );
    let (outcome, peak, took) = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            measured(|| {
                let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
                let scan = snap.scan(ScanOptions::default()).unwrap();
                block_on(scan.execute(&mut |_| Ok(true)))
            })
        })
        .unwrap()
        .join()
        .unwrap();
    match outcome {
        Err(Error::LimitExceeded { limit, .. }) => (limit.to_string(), peak, took),
        other => panic!("expected a named limit, got {other:?}"),
    }
}

/// A review finding: the Parquet schema is rebuilt from its flat list by recursion, one
/// call per level of nesting, and nothing bounded the depth: an 800 KB footer of 100,000
/// nested groups overflowed a worker thread's stack (an abort nothing catches). The depth
/// is checked, without recursion, before anything is built (`MAX_SCHEMA_DEPTH`).
#[test]
fn a_schema_nested_deeper_than_the_limit_is_refused() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (limit, peak, took) = scan_error_on_a_small_stack(nested_schema_file(100_000, 1));
    println!(
        "a schema 100,000 groups deep: {limit} after {took:?}, peak {} MB",
        mb(peak)
    );
    assert_eq!(limit, "MAX_SCHEMA_DEPTH");
    assert!(peak <= BUDGET, "peak {} MB", mb(peak));
}

/// A review finding: each leaf column's path (every group above it) was copied when the
/// schema was built, before the number of columns was checked: 200,000 leaves under 100
/// groups, a 1.6 MB footer, made 20 million strings. The sum of the leaves' path lengths
/// is checked before any is built (`MAX_SCHEMA_PATH_ELEMENTS`).
#[test]
fn a_schema_of_many_deep_columns_is_refused_before_its_paths_are_built() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (limit, peak, took) = scan_error_on_a_small_stack(nested_schema_file(100, 200_000));
    println!(
        "200,000 leaves under 100 groups: {limit} after {took:?}, peak {} MB",
        mb(peak)
    );
    assert_eq!(limit, "MAX_SCHEMA_PATH_ELEMENTS");
    assert!(peak <= 64 << 20, "peak {} MB", mb(peak));
}

/// A review finding: the skipped-levels ceiling held per batch, so a file of many row
/// groups could make each skip just under it (row groups × seconds). It holds per file:
/// here three row groups each skip a row of 600,000 levels inside a page (the page index
/// of `id` rules the row out; the list column's one page holds both rows), under a limit
/// lowered to 2^20: each skip passes alone, the three together are refused.
#[test]
fn the_levels_skipped_within_pages_are_bounded_per_file() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    use parquet::data_type::Int32Type as I32;
    use parquet::file::writer::SerializedFileWriter;
    const LEVELS: usize = 600_000;
    let message = "message m { required int32 id; optional group l (LIST) { repeated group list { optional int32 element; } } }";
    let schema = Arc::new(parquet::schema::parser::parse_message_type(message).unwrap());
    let props = WriterProperties::builder()
        .set_dictionary_enabled(false)
        .set_column_data_page_row_count_limit(ColumnPath::from("id"), 1)
        .set_data_page_size_limit(usize::MAX)
        .build();
    let mut file = Vec::new();
    let mut w = SerializedFileWriter::new(&mut file, schema, Arc::new(props)).unwrap();
    for _ in 0..3 {
        let mut rg = w.next_row_group().unwrap();
        let mut id = rg.next_column().unwrap().unwrap();
        for v in [0, 1] {
            id.typed::<I32>().write_batch(&[v], None, None).unwrap();
        }
        id.close().unwrap();
        let mut l = rg.next_column().unwrap().unwrap();
        // row 0: a list of LEVELS null elements; row 1: [7]
        let mut rep = vec![1i16; LEVELS];
        rep[0] = 0;
        let l_writer = l.typed::<I32>();
        l_writer
            .write_batch(&[], Some(&vec![2i16; LEVELS]), Some(&rep))
            .unwrap();
        l_writer.write_batch(&[7], Some(&[3]), Some(&[0])).unwrap();
        l.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
    let fields = r#"{"name":"id","type":"integer","nullable":false,"metadata":{}},{"name":"l","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}}"#;
    let table = one_file_table(file, fields);
    let snap = block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let options = || ScanOptions {
        filter: Some(deltalens_core::predicate::Predicate::parse("id = 1").unwrap()),
        ..ScanOptions::default()
    };
    let scan = snap.scan(options()).unwrap();
    // under the default limit: the three [7]s, the three long rows ruled out by the index
    let mut lists = Vec::new();
    let m = block_on(scan.execute(&mut |b| {
        let l = b.column(1).as_list::<i32>();
        lists.extend(
            (0..b.num_rows()).map(|i| l.value(i).as_primitive::<Int32Type>().values().to_vec()),
        );
        Ok(true)
    }))
    .unwrap();
    assert_eq!(lists, [vec![7], vec![7], vec![7]]);
    assert_eq!(m.rows_skipped_by_page_index, 3, "{m:?}");
    let default = deltalens_core::limits::max_skipped_levels();
    deltalens_core::limits::set_max_skipped_levels(1 << 20);
    let outcome = block_on(snap.scan(options()).unwrap().execute(&mut |_| Ok(true)));
    deltalens_core::limits::set_max_skipped_levels(default);
    match outcome {
        Err(Error::LimitExceeded { limit, .. }) => assert_eq!(limit, "MAX_SKIPPED_LEVELS"),
        other => panic!("expected the skipped-levels limit, got {other:?}"),
    }
}

//! Crafted logs and hostile hosts: each case ends in a clear error (or the right answer)
//! after a bounded amount of work — never a panic, an abort, an unbounded allocation or
//! endless requests. Regression tests for the trust audit's findings.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{Error, Table, VersionSpec};
use deltalens_storage::{
    ByteRange, CountingStorage, MemoryStorage, ObjectMeta, Storage, StorageError,
};

const PROTOCOL: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}"#;
const METADATA: &str = r#"{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":0}}"#;

fn add(path: &str, size: i64, rows: i64) -> String {
    format!(
        r#"{{"add":{{"path":"{path}","partitionValues":{{}},"size":{size},"modificationTime":0,"dataChange":true,"stats":"{{\"numRecords\":{rows}}}"}}}}"#
    )
}

fn commit0(adds: &[String]) -> String {
    let mut lines = vec![PROTOCOL.to_string(), METADATA.to_string()];
    lines.extend(adds.iter().cloned());
    lines.join("\n")
}

fn mem_table(files: &[(&str, String)]) -> (Table, Arc<CountingStorage<MemoryStorage>>) {
    let mem = MemoryStorage::new();
    for (p, d) in files {
        mem.put(p, d.clone().into_bytes(), 0);
    }
    let counting = Arc::new(CountingStorage::new(mem));
    (Table::new(counting.clone(), "mem://t"), counting)
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

const C0: &str = "_delta_log/00000000000000000000.json";

#[test]
fn sums_are_checked() {
    // two files with i64::MAX rows showed -2 rows
    let big = i64::MAX;
    let (t, _) = mem_table(&[(
        C0,
        commit0(&[add("a.parquet", big, big), add("b.parquet", big, big)]),
    )]);
    let s = block_on(t.snapshot(VersionSpec::Latest)).unwrap();
    assert!(matches!(s.num_rows(), Err(Error::Overflow { .. })));
    assert!(matches!(s.size_bytes(), Err(Error::Overflow { .. })));
    let doc = deltalens_present::Overview::of("mem://t", &s);
    assert!(
        doc.num_rows.is_none() && doc.size_bytes.is_none(),
        "{doc:?}"
    );
    assert!(
        doc.warnings.iter().any(|w| w.contains("overflow")),
        "{doc:?}"
    );
    // `$partitions` sums the same values: an error naming the overflow, not a panic or a
    // wrapped total
    let e = deltalens_present::partitions(&s).unwrap_err();
    assert!(e.to_string().contains("overflow"), "{e}");
}

#[test]
fn data_paths_cannot_leave_the_table() {
    for path in [
        "../secret.parquet",
        "%2e%2e/secret.parquet",
        "a/../../secret.parquet",
    ] {
        let (t, counting) = mem_table(&[(C0, commit0(&[add(path, 10, 1)]))]);
        let s = block_on(t.snapshot(VersionSpec::Latest)).unwrap();
        let scan = s.scan(ScanOptions::default()).unwrap();
        let e = block_on(scan.execute(&mut |_| Ok(true))).unwrap_err();
        assert!(matches!(e, Error::DataFile { .. }), "{path}: {e}");
        assert!(
            !counting.records().iter().any(|r| r.path.contains("secret")),
            "{path}: a request left the table"
        );
    }
}

#[test]
fn huge_part_counts_are_refused() {
    for parts in [u32::MAX, 100_000] {
        let hint = format!(r#"{{"version":1,"parts":{parts},"size":3}}"#);
        // a store that lists: the hint is not usable, the listing decides
        let (t, counting) = mem_table(&[
            (C0, commit0(&[])),
            ("_delta_log/_last_checkpoint", hint.clone()),
        ]);
        let s = block_on(t.snapshot(VersionSpec::Latest)).unwrap();
        assert_eq!(s.version, 0);
        assert!(counting.stats().requests < 10, "{:?}", counting.stats());
        // without listing the hint is all there is: a clear error naming the limit
        let nolist = NoList::new(vec![
            (C0.into(), commit0(&[])),
            ("_delta_log/_last_checkpoint".into(), hint),
        ]);
        let t = Table::new(nolist.clone(), "mem://t");
        let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::LimitExceeded {
                    limit: "MAX_CHECKPOINT_PARTS",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("_last_checkpoint"), "{e}");
        assert!(nolist.requests() < 40, "{} requests", nolist.requests());
    }
}

#[test]
fn huge_commit_names_are_not_allocated() {
    // an empty commit named 09999999999999999999.json panicked with a capacity overflow:
    // past i64::MAX it is no Delta version at all; below, a gap is a clear error
    let (t, _) = mem_table(&[
        (C0, commit0(&[])),
        ("_delta_log/09999999999999999999.json", String::new()),
    ]);
    assert_eq!(
        block_on(t.snapshot(VersionSpec::Latest)).unwrap().version,
        0
    );
    let (t, _) = mem_table(&[
        (C0, commit0(&[])),
        ("_delta_log/09000000000000000000.json", String::new()),
    ]);
    let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
    assert!(matches!(e, Error::MissingVersion { version: 1, .. }), "{e}");
    let e = block_on(t.snapshot(VersionSpec::Version(9_000_000_000_000_000_000))).unwrap_err();
    assert!(matches!(e, Error::MissingVersion { .. }), "{e}");
}

#[test]
fn a_host_answering_every_path_is_not_probed_forever() {
    // ~20k GETs in 30 s before: now the first answer that is not a commit stops it
    let host = AnswersEverything::new(b"<!DOCTYPE html><title>Welcome</title>".to_vec());
    let t = Table::new(host.clone(), "https://catch-all.example/t");
    let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
    assert!(e.to_string().contains("not a Delta commit"), "{e}");
    assert!(host.requests() < 100, "{} requests", host.requests());

    // even when every answer reads as a commit, probing ends at a named limit
    let host = AnswersEverything::new(br#"{"commitInfo":{}}"#.to_vec());
    let t = Table::new(host.clone(), "https://catch-all.example/t");
    let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::LimitExceeded {
                limit: "MAX_UNLISTED_VERSIONS",
                ..
            }
        ),
        "{e}"
    );
    let n = host.requests();
    assert!(n <= 1_100_000, "{n} requests");
    println!("a host that answers every path with a commit: {n} requests, then {e}");
}

/// A store whose listing reads as empty while it answers every path with a page (the
/// fault proxy's all-200 mode in front of S3): the error says what the server does, not
/// that there is no table — one GET of the first commit tells the two apart.
#[test]
fn an_empty_listing_from_a_host_answering_every_path_is_named() {
    let host = AnswersEverything::listing_nothing(b"<html><body>OK</body></html>".to_vec());
    let t = Table::new(host.clone(), "s3://bucket/t");
    for e in [
        block_on(t.snapshot(VersionSpec::Latest)).unwrap_err(),
        block_on(t.snapshot(VersionSpec::Version(0))).unwrap_err(),
        block_on(t.history(None)).unwrap_err(),
    ] {
        assert!(
            matches!(e, Error::InvalidLog { .. }) && e.to_string().contains("not a Delta commit"),
            "{e}"
        );
    }
    assert!(host.requests() < 20, "{} requests", host.requests());
    // an empty location is still "no table", after the one GET
    let mem = Arc::new(CountingStorage::new(MemoryStorage::new()));
    let t = Table::new(mem.clone(), "mem://empty");
    let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
    assert!(matches!(e, Error::NotATable { .. }), "{e}");
}

#[test]
fn a_footer_cannot_size_a_read() {
    // a 2 GiB data file whose footer claims 1 GiB of metadata: refused before the read
    let size: u64 = 2 << 30;
    let commit = commit0(&[add("big.parquet", size as i64, 1)]);
    let store = Arc::new(VirtualFile {
        log: (C0.to_string(), Bytes::from(commit)),
        size,
        footer_len: 1 << 30,
        largest: AtomicU64::new(0),
    });
    let t = Table::new(store.clone(), "mem://t");
    let s = block_on(t.snapshot(VersionSpec::Latest)).unwrap();
    let scan = s.scan(ScanOptions::default()).unwrap();
    let e = block_on(scan.execute(&mut |_| Ok(true))).unwrap_err();
    assert!(
        matches!(
            e,
            Error::LimitExceeded {
                limit: "MAX_FOOTER_BYTES",
                ..
            }
        ),
        "{e}"
    );
    let largest = store.largest.load(Ordering::Relaxed);
    assert!(largest <= 64 << 10, "a {largest}-byte read was made");
}

/// One commit plus `big.parquet`: `size` bytes of zeros ending in a Parquet tail that
/// claims `footer_len` bytes of metadata. Records the largest read.
#[derive(Debug)]
struct VirtualFile {
    log: (String, Bytes),
    size: u64,
    footer_len: u32,
    largest: AtomicU64,
}

impl VirtualFile {
    fn bytes(&self, r: std::ops::Range<u64>) -> Bytes {
        self.largest.fetch_max(r.end - r.start, Ordering::Relaxed);
        let mut tail = [0u8; 8];
        tail[..4].copy_from_slice(&self.footer_len.to_le_bytes());
        tail[4..].copy_from_slice(b"PAR1");
        let body: Vec<u8> = r
            .map(|i| {
                let from_end = self.size - i;
                if from_end <= 8 {
                    tail[(8 - from_end) as usize]
                } else {
                    0
                }
            })
            .collect();
        Bytes::from(body)
    }
}

#[async_trait::async_trait]
impl Storage for VirtualFile {
    async fn list(&self, prefix: &str, _: Option<&str>) -> Result<Vec<ObjectMeta>, StorageError> {
        Ok(vec![ObjectMeta {
            path: self.log.0.clone(),
            size: self.log.1.len() as u64,
            last_modified_ms: Some(0),
        }]
        .into_iter()
        .filter(|m| m.path.starts_with(prefix))
        .collect())
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        if path == self.log.0 {
            return range.slice(path, &self.log.1);
        }
        let r = range
            .resolve(self.size)
            .ok_or_else(|| StorageError::NotFound { path: path.into() })?;
        Ok(self.bytes(r))
    }
    async fn get(&self, path: &str) -> Result<Bytes, StorageError> {
        if path == self.log.0 {
            return Ok(self.log.1.clone());
        }
        Err(StorageError::NotFound { path: path.into() })
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        Ok(ObjectMeta {
            path: path.into(),
            size: self.size,
            last_modified_ms: None,
        })
    }
}

/// A store without listing that answers from a fixed set of files, counting requests.
#[derive(Debug, Clone)]
struct NoList(Arc<(MemoryStorage, AtomicU64)>);

impl NoList {
    fn new(files: Vec<(String, String)>) -> Arc<Self> {
        let mem = MemoryStorage::new();
        for (p, d) in files {
            mem.put(&p, d.into_bytes(), 0);
        }
        Arc::new(NoList(Arc::new((mem, AtomicU64::new(0)))))
    }
    fn requests(&self) -> u64 {
        self.0.1.load(Ordering::Relaxed)
    }
    fn count(&self) {
        self.0.1.fetch_add(1, Ordering::Relaxed);
    }
}

#[async_trait::async_trait]
impl Storage for NoList {
    async fn list(&self, prefix: &str, _: Option<&str>) -> Result<Vec<ObjectMeta>, StorageError> {
        self.count();
        Err(StorageError::ListingUnsupported {
            path: prefix.into(),
            message: "no listing".into(),
        })
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        self.count();
        self.0.0.get_range(path, range).await
    }
    async fn get(&self, path: &str) -> Result<Bytes, StorageError> {
        self.count();
        self.0.0.get(path).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        self.count();
        self.0.0.head(path).await
    }
    fn can_list(&self) -> bool {
        false
    }
}

/// A host that answers 200 with the same body for every path, and refuses LIST — or,
/// `lists`, answers LIST with nothing (an S3 endpoint answering every path with the same
/// page: the page parses as an empty listing).
#[derive(Debug)]
struct AnswersEverything {
    body: Bytes,
    requests: AtomicU64,
    lists: bool,
}

impl AnswersEverything {
    fn new(body: Vec<u8>) -> Arc<Self> {
        Arc::new(AnswersEverything {
            body: body.into(),
            requests: AtomicU64::new(0),
            lists: false,
        })
    }
    fn listing_nothing(body: Vec<u8>) -> Arc<Self> {
        Arc::new(AnswersEverything {
            body: body.into(),
            requests: AtomicU64::new(0),
            lists: true,
        })
    }
    fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

#[async_trait::async_trait]
impl Storage for AnswersEverything {
    async fn list(&self, prefix: &str, _: Option<&str>) -> Result<Vec<ObjectMeta>, StorageError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if self.lists {
            return Ok(Vec::new());
        }
        Err(StorageError::ListingUnsupported {
            path: prefix.into(),
            message: "no listing".into(),
        })
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        range.slice(path, &self.body)
    }
    async fn get(&self, _: &str) -> Result<Bytes, StorageError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        Ok(self.body.clone())
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        Ok(ObjectMeta {
            path: path.into(),
            size: self.body.len() as u64,
            last_modified_ms: None,
        })
    }
    fn can_list(&self) -> bool {
        self.lists
    }
}

thread_local! {
    /// Panics on this thread since the hook below was installed (caught or not).
    static PANICS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Arrays handed out that are not valid (a string of invalid UTF-8: a release build
    /// builds arrays unchecked, where a debug build's check panics).
    static INVALID: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The Parquet inputs the fuzz targets once crashed on (`fuzz/regressions/`), read as a
/// data file and as a checkpoint: an error or an answer, never a panic — not even one the
/// core catches natively (`parquet_read::guarded`), since on wasm32 (the explorer, the
/// worker) a panic aborts the module. The three parquet panics this used to count are
/// fixed in the patched parquet (vendor/README.md).
#[test]
fn parquet_regressions_from_fuzzing_are_errors() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.with(|p| p.set(p.get() + 1));
        previous(info);
    }));
    let root = deltalens_tests::workspace_root().join("fuzz/regressions");
    let mut seen = 0;
    for target in ["scan_parquet", "checkpoint_parquet", "scan_amplification"] {
        let Ok(dir) = std::fs::read_dir(root.join(target)) else {
            continue;
        };
        for f in dir.flatten() {
            let bytes = Bytes::from(std::fs::read(f.path()).unwrap());
            seen += 1;
            // as a data file
            let mem = MemoryStorage::new();
            let commit = commit0(&[add("x.parquet", bytes.len() as i64, 1)]);
            mem.put(C0, commit.into_bytes(), 0);
            mem.put("x.parquet", bytes.clone(), 0);
            let t = Table::new(Arc::new(mem), "mem://t");
            let s = block_on(t.snapshot(VersionSpec::Latest)).unwrap();
            let scan = s.scan(ScanOptions::default()).unwrap();
            let _ = block_on(scan.execute(&mut |b| {
                check_valid(&b);
                Ok(true)
            }));
            // as a checkpoint
            let mem = MemoryStorage::new();
            mem.put(
                "_delta_log/00000000000000000001.checkpoint.parquet",
                bytes.clone(),
                0,
            );
            mem.put(
                "_delta_log/_last_checkpoint",
                r#"{"version":1,"size":1}"#.as_bytes().to_vec(),
                0,
            );
            let t = Table::new(Arc::new(mem), "mem://t");
            let _ = block_on(t.snapshot(VersionSpec::Latest));
            // every column, by the Parquet reader itself: the table's schema above reads
            // only its own columns, not, say, a fixed-length byte array of the file's
            read_every_column(bytes);
        }
    }
    let panics = PANICS.with(|p| p.get());
    assert_eq!(
        panics, 0,
        "{panics} panics (caught natively, fatal on wasm32)"
    );
    let invalid = INVALID.with(|p| p.get());
    assert_eq!(invalid, 0, "{invalid} arrays handed out that are not valid");
    assert!(seen >= 9, "only {seen} inputs in fuzz/regressions");
    println!("{seen} Parquet inputs from fuzz/regressions read without a panic");
}

/// Counts in INVALID each column of `batch` that is not a valid array (its full check:
/// offsets, and UTF-8 for strings).
fn check_valid(batch: &arrow_array::RecordBatch) {
    for c in batch.columns() {
        if let Err(e) = c.to_data().validate_full() {
            eprintln!("an array that is not valid ({:?}): {e}", c.data_type());
            INVALID.with(|p| p.set(p.get() + 1));
        }
    }
}

/// Reads every column of every row group of `file` (a Parquet file), whatever it holds,
/// one column at a time (an error in one column ends only that column's read). A footer
/// whose column chunks lie outside the file is not read: the core refuses it before
/// decoding (`parquet_read::check_layout`), and this reader's
/// `ColumnChunkMetaData::byte_range` asserts on it.
fn read_every_column(file: Bytes) {
    use parquet::arrow::ProjectionMask;
    use parquet::arrow::arrow_reader::{
        ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    };
    let size = file.len() as i64;
    // the footer is read once; each column's reader starts from it
    let Ok(metadata) = ArrowReaderMetadata::load(&file, ArrowReaderOptions::default()) else {
        return;
    };
    let inside = metadata.metadata().row_groups().iter().all(|rg| {
        rg.columns().iter().all(|c| {
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            let len = c.compressed_size();
            start >= 0 && len >= 0 && c.data_page_offset() >= 0 && start.saturating_add(len) <= size
        })
    });
    if !inside {
        return;
    }
    let leaves = metadata
        .metadata()
        .file_metadata()
        .schema_descr()
        .num_columns();
    for leaf in 0..leaves.min(512) {
        let builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file.clone(), metadata.clone());
        let mask = ProjectionMask::leaves(builder.parquet_schema(), [leaf]);
        let Ok(reader) = builder.with_projection(mask).with_batch_size(2).build() else {
            continue;
        };
        for batch in reader {
            match batch {
                Ok(b) => check_valid(&b),
                Err(_) => break,
            }
        }
    }
}

/// `bytes` (a Parquet file) with unknown fields appended to its `FileMetaData`, each a
/// compact-Thrift list claiming 2^31 - 1 booleans in 7 bytes.
fn with_boolean_lists(bytes: &[u8], lists: i16) -> Vec<u8> {
    let n = bytes.len();
    let meta_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let meta = &bytes[n - 8 - meta_len..n - 8];
    // the struct's closing STOP byte is the metadata's last byte
    assert_eq!(meta.last(), Some(&0));
    let mut m = meta[..meta.len() - 1].to_vec();
    for i in 0..lists {
        // field header, long form: type LIST (9), then the field id as a zigzag varint
        let id = 200 + i;
        let zz = ((id << 1) ^ (id >> 15)) as u16;
        m.extend([0x09, (zz as u8 & 0x7f) | 0x80, (zz >> 7) as u8]);
        // list header: size in a varint (0xF_), elements BOOLEAN_TRUE (1), 2^31 - 1
        m.extend([0xF1, 0xFF, 0xFF, 0xFF, 0xFF, 0x07]);
    }
    m.push(0);
    let mut out = bytes[..n - 8 - meta_len].to_vec();
    out.extend(&m);
    out.extend((m.len() as u32).to_le_bytes());
    out.extend(b"PAR1");
    out
}

/// A footer of a few hundred bytes used to make parquet's Thrift skipper loop 2^31 times
/// per list without reading anything (found by fuzzing `checkpoint_parquet`; fixed in the
/// patched parquet, vendor/README.md): now each boolean element costs a byte, so the
/// lists run out of input at once and the checkpoint is a clear error.
#[test]
fn a_footer_of_boolean_lists_is_rejected_quickly() {
    let dir = deltalens_tests::fixtures_dir().join("checkpointed/_delta_log");
    let name = "00000000000000000009.checkpoint.parquet";
    let hostile = with_boolean_lists(&std::fs::read(dir.join(name)).unwrap(), 16);
    let mem = MemoryStorage::new();
    mem.put(&format!("_delta_log/{name}"), hostile, 0);
    mem.put(
        "_delta_log/_last_checkpoint",
        r#"{"version":9,"size":1}"#.as_bytes().to_vec(),
        0,
    );
    let t = Table::new(Arc::new(mem), "mem://t");
    // bounded: before the fix this took 16 × 2^31 skips (minutes in a debug build)
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(block_on(t.snapshot(VersionSpec::Latest)).map(|s| s.version));
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("reading the footer did not end within 60 s");
    let e = r.unwrap_err();
    assert!(e.to_string().contains(name), "{e}");
}

/// Peak resident memory of this process (Linux `VmHWM`), in bytes.
#[cfg(target_os = "linux")]
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// The latest snapshot of a table whose one column is `column` (the JSON of its name and
/// type, as in METADATA's schema string) and whose one data file, `x.parquet`, is `bytes`.
fn one_file_snapshot(column: &str, bytes: Vec<u8>) -> deltalens_core::Snapshot {
    let metadata = METADATA.replace(r#"\"name\":\"a\",\"type\":\"long\""#, column);
    let commit = [
        PROTOCOL,
        &metadata,
        &add("x.parquet", bytes.len() as i64, 1),
    ]
    .join("\n");
    let mem = MemoryStorage::new();
    mem.put(C0, commit.into_bytes(), 0);
    mem.put("x.parquet", bytes, 0);
    let t = Table::new(Arc::new(mem), "mem://t");
    block_on(t.snapshot(VersionSpec::Latest)).unwrap()
}

/// A data page whose header claims ~2 GiB uncompressed (a 500-byte file found by the
/// `scan_parquet` fuzz target): the claim is refused by the page-size limit before the
/// codec sizes anything by it. The codec used to allocate and zero 2.1 GB first (a worker
/// or a tab runs out of memory), then find the page corrupt.
#[test]
#[cfg(target_os = "linux")]
fn a_page_claiming_2_gib_is_refused_before_it_is_allocated() {
    let bytes = std::fs::read(
        deltalens_tests::workspace_root()
            .join("fuzz/regressions/scan_parquet/page-uncompressed-size-2GB"),
    )
    .unwrap();
    let s = one_file_snapshot(r#"\"name\":\"id\",\"type\":\"long\""#, bytes);
    // read by the page index, as a filtered and pruned scan reads it
    let options = ScanOptions {
        filter: Some(deltalens_core::predicate::Predicate::parse("id > 1").unwrap()),
        prune: true,
        ..ScanOptions::default()
    };
    let scan = s.scan(options).unwrap();
    let before = peak_rss();
    let err = block_on(scan.execute(&mut |_| Ok(true))).unwrap_err();
    let grown = peak_rss().saturating_sub(before);
    match &err {
        Error::LimitExceeded {
            limit,
            value,
            max,
            path,
            ..
        } => {
            assert_eq!(*limit, "MAX_PAGE_BYTES");
            assert!(*value > 2_000_000_000, "{err}");
            assert_eq!(*max, deltalens_core::limits::MAX_PAGE_BYTES);
            assert_eq!(path, "x.parquet");
        }
        other => panic!("expected the page-size limit, got: {other}"),
    }
    assert!(
        grown < 512 << 20,
        "peak memory grew by {} MB reading one 500-byte file",
        grown >> 20
    );
    println!("{err}");
}

/// Pages that claim 1 MiB uncompressed but inflate to 512 MiB (gzip, zstd; made by
/// `tests/hostile/make_page_bombs.py`): decompression stops one byte past the claim and
/// the page is an error, without inflating the rest. Gzip used to inflate all 512 MiB
/// (and a growing buffer doubled it) before the size was found wrong.
#[test]
#[cfg(target_os = "linux")]
fn a_page_inflating_past_its_claimed_size_stops_at_the_claim() {
    for codec in ["gzip", "zstd"] {
        let bytes = std::fs::read(deltalens_tests::workspace_root().join(format!(
            "fuzz/regressions/scan_parquet/page-claims-1MiB-{codec}-inflates-512MiB"
        )))
        .unwrap();
        let s = one_file_snapshot(r#"\"name\":\"b\",\"type\":\"binary\""#, bytes);
        let scan = s.scan(ScanOptions::default()).unwrap();
        let before = peak_rss();
        let err = block_on(scan.execute(&mut |_| Ok(true))).unwrap_err();
        let grown = peak_rss().saturating_sub(before);
        let message = err.to_string();
        assert!(
            matches!(err, Error::Parquet { .. })
                && (message.contains("(1048577 vs 1048576)")
                    || message.contains("Destination buffer is too small")),
            "{codec}: expected a page one byte past its claimed size, got: {message}"
        );
        assert!(
            grown < 256 << 20,
            "{codec}: peak memory grew by {} MB",
            grown >> 20
        );
        println!("{codec}: {message}");
    }
}

/// A partition value is copied into every row of every batch: a log (or a split) with a
/// 1 MB value would make 8 GB of one 8,192-row batch. Values over
/// `MAX_PARTITION_VALUE_BYTES` are refused naming the limit, and the copies count against
/// the scan's decoded-bytes budget before they are made.
#[test]
fn a_huge_partition_value_is_refused_before_it_is_copied() {
    let parquet = std::fs::read(
        deltalens_tests::fixtures_dir()
            .join("demo/event_date=2019-10-03/part-00000-87d90b09-f7b0-4c30-b648-3ac1f77e004b-c000.snappy.parquet"),
    )
    .unwrap();
    let metadata = METADATA
        .replace(
            r#"{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}"#,
            r#"{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}"#,
        )
        .replace(r#""partitionColumns":[]"#, r#""partitionColumns":["p"]"#);
    let scan = |value: &str, budget: Option<u64>| {
        let add = format!(
            r#"{{"add":{{"path":"x.parquet","partitionValues":{{"p":"{value}"}},"size":{},"modificationTime":0,"dataChange":true}}}}"#,
            parquet.len()
        );
        let mem = MemoryStorage::new();
        mem.put(C0, [PROTOCOL, &metadata, &add].join("\n").into_bytes(), 0);
        mem.put("x.parquet", parquet.clone(), 0);
        let t = Table::new(Arc::new(mem), "mem://t");
        let snap = block_on(t.snapshot(VersionSpec::Latest)).unwrap();
        let options = ScanOptions {
            columns: Some(vec!["p".into()]),
            max_decoded_bytes: budget,
            ..Default::default()
        };
        let scan = snap.scan(options).unwrap();
        let mut rows = 0;
        block_on(scan.execute(&mut |b| {
            rows += b.num_rows();
            Ok(true)
        }))
        .map(|_| rows)
    };
    assert!(scan("2019-10-03", None).unwrap() > 0);
    let huge = "x".repeat(1 << 20);
    match scan(&huge, None) {
        Err(Error::LimitExceeded { limit, value, .. }) => {
            assert_eq!((limit, value), ("MAX_PARTITION_VALUE_BYTES", 1 << 20));
        }
        other => panic!("{other:?}"),
    }
    // within the limit, the copies count against the decoded-bytes budget
    let big = "y".repeat(60_000);
    match scan(&big, Some(1_000_000)) {
        Err(Error::DecodedBytesExceeded { max, .. }) => assert_eq!(max, 1_000_000),
        other => panic!("{other:?}"),
    }
}

//! Byte accounting with the counting decorator: a `--limit` preview of a multi-file table
//! reads the log, then only the footer and the projected column chunks (pages) of the
//! first row group of the first file(s) it needs — nothing of any other data file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::sync::Arc;

use deltalens_core::scan::ScanOptions;
use deltalens_core::{Table, VersionSpec};
use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{ByteRange, CountingStorage, RequestKind, Storage};
use deltalens_tests::{fixtures_dir, runtime};
use parquet::file::reader::{FileReader, SerializedFileReader};

fn chunk_ranges(path: &std::path::Path, column: &str) -> Vec<(u64, u64)> {
    let r = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let md = r.metadata();
    let rg = md.row_group(0);
    (0..rg.num_columns())
        .filter(|i| rg.column(*i).column_path().parts()[0] == column)
        .map(|i| {
            let (s, l) = rg.column(i).byte_range();
            (s, s + l)
        })
        .collect()
}

#[test]
fn limit_preview_reads_only_first_row_group_chunks() {
    let rt = runtime();
    let dir = fixtures_dir().join("row_groups");
    let counter = Arc::new(CountingStorage::new(
        ObjectStoreStorage::open(dir.to_str().unwrap(), &[]).unwrap(),
    ));
    let storage: Arc<dyn Storage> = counter.clone();
    let table = Table::new(storage, dir.to_string_lossy());
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    assert_eq!(snap.num_files(), 3);
    counter.reset();
    let opts = ScanOptions {
        columns: Some(vec!["id".into()]),
        limit: Some(10),
        ..Default::default()
    };
    let scan = snap.scan(opts).unwrap();
    let mut rows = 0;
    rt.block_on(scan.execute(&mut |b| {
        rows += b.num_rows();
        Ok(true)
    }))
    .unwrap();
    assert_eq!(rows, 10);
    let records = counter.records();
    let first = &snap.files[0];
    let file_size = first.size as u64;
    let id_chunk = chunk_ranges(&dir.join(&first.path), "id");
    let mut data_bytes = 0;
    for r in &records {
        assert_eq!(
            r.path, first.path,
            "only the first file is touched: {records:?}"
        );
        assert_eq!(r.kind, RequestKind::GetRange);
        let range = match &r.range {
            Some(ByteRange::Bounded(range)) => range.clone(),
            // the footer is fetched by a suffix range
            Some(ByteRange::Suffix(n)) => file_size - n..file_size,
            other => panic!("{other:?}"),
        };
        data_bytes += r.bytes;
        let footer = range.end == file_size;
        let in_chunk = id_chunk
            .iter()
            .any(|(s, e)| *s <= range.start && range.end <= *e);
        assert!(
            footer || in_chunk,
            "{range:?} is neither the footer nor the id chunk {id_chunk:?}"
        );
    }
    let chunk_total: u64 = id_chunk.iter().map(|(s, e)| e - s).sum();
    assert!(data_bytes <= 8 * 1024 + chunk_total, "{data_bytes} bytes");
    assert!(
        data_bytes < file_size / 2,
        "{data_bytes} of {file_size} bytes: more than the preview needs"
    );
    eprintln!(
        "limit 10 of {} files: {} requests, {data_bytes} bytes of a {file_size}-byte file (id chunk {chunk_total} bytes)",
        snap.num_files(),
        records.len()
    );
}

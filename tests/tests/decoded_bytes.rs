//! The decoded-bytes limit of a scan (`ScanOptions::max_decoded_bytes`, the worker's
//! `decoded_bytes` budget): a row group whose projected column chunks would pass it is
//! refused before its bytes are fetched, decoded batches are counted as they come, and a
//! limit that is not reached changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::sync::Arc;

use deltalens_api::ApiError;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{Error, Table, VersionSpec};
use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{ByteRange, CountingStorage, Storage};
use deltalens_tests::{fixtures_dir, runtime};

fn open() -> (Table, Arc<CountingStorage<ObjectStoreStorage>>) {
    let dir = fixtures_dir().join("row_groups");
    let counter = Arc::new(CountingStorage::new(
        ObjectStoreStorage::open(dir.to_str().unwrap(), &[]).unwrap(),
    ));
    let storage: Arc<dyn Storage> = counter.clone();
    (Table::new(storage, dir.to_string_lossy()), counter)
}

/// (rows, decoded bytes of the batches) of a scan, or its error.
fn scan(table: &Table, max: Option<u64>) -> Result<(usize, u64), Error> {
    let rt = runtime();
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let opts = ScanOptions {
        max_decoded_bytes: max,
        ..Default::default()
    };
    let scan = snap.scan(opts).unwrap();
    let (mut rows, mut bytes) = (0, 0);
    rt.block_on(scan.execute(&mut |b| {
        rows += b.num_rows();
        bytes += b.get_array_memory_size() as u64;
        Ok(true)
    }))?;
    Ok((rows, bytes))
}

#[test]
fn a_limit_not_reached_changes_nothing() {
    let (table, _) = open();
    let (rows, decoded) = scan(&table, None).unwrap();
    assert!(rows > 0 && decoded > 0);
    assert_eq!(scan(&table, Some(decoded * 4)).unwrap().0, rows);
    assert_eq!(scan(&table, Some(u64::MAX)).unwrap().0, rows);
}

#[test]
fn a_row_group_that_cannot_fit_is_refused_before_its_chunks_are_fetched() {
    let (table, counter) = open();
    let rt = runtime();
    rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    counter.reset();
    let e = scan(&table, Some(1)).unwrap_err();
    let Error::DecodedBytesExceeded { max, used, path } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(*max, 1);
    assert!(*used > 1 && path.ends_with(".parquet"), "{e}");
    assert!(e.to_string().contains("max_decoded_bytes"), "{e}");
    // only the footer of the first file was read: no column chunk
    for r in counter.records() {
        assert!(
            matches!(r.range, Some(ByteRange::Suffix(_))) || r.path.starts_with("_delta_log/"),
            "fetched a data range before refusing: {r:?}"
        );
    }
}

#[test]
fn the_limit_stops_a_scan_part_way_with_a_413() {
    let (table, _) = open();
    let (_, decoded) = scan(&table, None).unwrap();
    let e = scan(&table, Some(decoded / 2)).unwrap_err();
    assert!(matches!(e, Error::DecodedBytesExceeded { .. }), "{e:?}");
    let q = ApiError::from(e);
    assert_eq!(
        (q.status(), q.code().as_str()),
        (413, "decoded_bytes_budget_exceeded")
    );
}

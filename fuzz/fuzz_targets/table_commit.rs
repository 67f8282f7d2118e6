//! A whole table read through the core's public entry point: a fixed, valid version 0 and
//! the input as the commit of version 1 (`Table::snapshot`, `Table::history`, scan planning).
#![no_main]

use std::collections::HashSet;

use deltalens_core::scan::{ScanOptions, data_file_path};
use deltalens_core::{Table, VersionSpec};
use deltalens_fuzz::{LOCATION, block_on, memory_table};

const V0: &[u8] = br#"{"commitInfo":{"timestamp":1600000000000,"operation":"CREATE TABLE"}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"fuzz","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"part\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["part"],"configuration":{},"createdTime":1600000000000}}
{"add":{"path":"part=a/f0.parquet","partitionValues":{"part":"a"},"size":100,"modificationTime":1600000000000,"dataChange":true,"stats":"{\"numRecords\":3,\"minValues\":{\"id\":1},\"maxValues\":{\"id\":3},\"nullCount\":{\"id\":0}}"}}
"#;

deltalens_fuzz::target!(|data| {
    let (_, storage) = memory_table(&[
        ("_delta_log/00000000000000000000.json", V0),
        ("_delta_log/00000000000000000001.json", data),
    ]);
    let table = Table::new(storage, LOCATION);
    block_on(async {
        if let Ok(snapshot) = table.snapshot(VersionSpec::Latest).await {
            assert!(
                snapshot.files.windows(2).all(|w| w[0].path <= w[1].path),
                "files are not sorted by path"
            );
            let mut keys = HashSet::new();
            for f in &snapshot.files {
                assert!(keys.insert(f.key()), "file {:?} is active twice", f.key());
                let _ = snapshot.partition_values_json(f);
                // a data file the scan would read stays inside the table
                if let Ok(p) = data_file_path(&f.path, LOCATION) {
                    assert!(
                        !p.is_empty() && !p.starts_with('/'),
                        "{p:?} is not relative"
                    );
                    assert!(
                        !p.split('/').any(|s| matches!(s, "" | "." | "..")) && !p.contains('\\'),
                        "{:?} resolves to {p:?}, outside the table",
                        f.path
                    );
                }
            }
            // the schema was validated when the snapshot was made
            snapshot
                .schema
                .to_arrow()
                .expect("a loaded schema converts to Arrow");
            let _ = snapshot.num_rows();
            let _ = snapshot.size_bytes();
            let _ = snapshot.properties();
            if let Ok(scan) = snapshot.scan(ScanOptions::default()) {
                let _ = scan.schema();
                let _ = scan.files().len();
            }
        }
        let _ = table.history(None).await;
        let _ = table.snapshot(VersionSpec::Version(0)).await;
        let _ = table
            .snapshot(VersionSpec::Timestamp(1_600_000_000_000))
            .await;
    });
});

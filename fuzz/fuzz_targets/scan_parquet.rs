//! A data file: the input stored as the one Parquet file of a small table (columns of
//! every type, a nested struct, a partition column) and scanned — every column, a few
//! columns, and with filters read with and without pruning by the file's own row-group
//! statistics and page index (`scan::Scan::execute`, column mapping's `conform`, the
//! Parquet reader). Only "no panic, no hang": the file's statistics may lie.
#![no_main]

use deltalens_core::Table;
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_fuzz::{LOCATION, block_on, memory_table, table};

deltalens_fuzz::target!(|data| {
    let (_, fixed) = table::table();
    let mut snapshot = fixed.clone();
    for f in &mut snapshot.files {
        f.size = data.len() as i64;
        f.stats = None;
    }
    let (_, storage) = memory_table(&[(table::DATA_FILE, data)]);
    // the same version read through a store holding the input as its data file
    let snapshot = snapshot.with_table(Table::new(storage, LOCATION));
    let filters = [
        None,
        Some("id > 1 AND brand <> 'x'"),
        Some("ts < '2021-01-01T00:00:00Z' OR s.a IS NULL"),
        Some("dec >= 1.5 AND d BETWEEN '2020-01-01' AND '2022-01-01'"),
    ];
    for (i, f) in filters.iter().enumerate() {
        let options = ScanOptions {
            filter: f.map(|f| Predicate::parse(f).expect("a fixed filter")),
            prune: i % 2 == 1,
            columns: (i == 3)
                .then(|| vec!["brand".to_string(), "s".to_string(), "part".to_string()]),
            batch_size: 2,
            ..ScanOptions::default()
        };
        let Ok(scan) = snapshot.scan(options) else {
            continue;
        };
        let schema = scan.schema();
        let _ = block_on(scan.execute(&mut |b| {
            assert_eq!(
                b.schema(),
                schema,
                "a batch of another schema than the scan's"
            );
            Ok(true)
        }));
    }
});

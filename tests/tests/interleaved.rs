//! `Scan::execute_interleaved` (several shares on one task, for browsers and workers)
//! returns the same rows as `execute`, in some order, and stops when the sink says so.

use deltalens_core::VersionSpec;
use deltalens_core::scan::ScanOptions;
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{FIXTURES, fixtures_dir, open_local, runtime};

#[test]
fn interleaved_shares_return_the_same_rows() {
    let rt = runtime();
    let mut compared = 0;
    for name in FIXTURES {
        let table = open_local(&fixtures_dir().join(name));
        let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
        let scan = snap.scan(ScanOptions::default()).unwrap();
        let mut one = Vec::new();
        rt.block_on(scan.execute(&mut |b| {
            one.push(b);
            Ok(true)
        }))
        .unwrap();
        for shares in [2, 3, 7] {
            let mut many = Vec::new();
            let m = rt
                .block_on(scan.execute_interleaved(shares, &mut |b| {
                    many.push(b);
                    Ok(true)
                }))
                .unwrap();
            let mut a = canonical_lines(&one, snap.schema.fields());
            let mut b = canonical_lines(&many, snap.schema.fields());
            a.sort();
            b.sort();
            assert_eq!(a, b, "{name} with {shares} shares");
            assert_eq!(m.files_read, snap.files.len(), "{name}");
            compared += 1;
        }
        // the sink stopping after the first batch stops every share
        let mut batches = 0;
        rt.block_on(scan.execute_interleaved(3, &mut |_| {
            batches += 1;
            Ok(false)
        }))
        .unwrap();
        assert!(batches <= 1, "{name}: {batches} batches after stop");
    }
    println!("{compared} interleaved scans equal the sequential scan");
}

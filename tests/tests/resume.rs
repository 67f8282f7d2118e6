//! `Scan::execute_resuming` (the explorer's grid, loading rows as the user scrolls):
//! pages of any size, cut mid-batch and mid-file, return the rows of one whole scan in
//! the same order, each once, and a resumed page reads only the file it stopped in again.

use deltalens_core::VersionSpec;
use deltalens_core::scan::{ScanOptions, ScanProgress};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{FIXTURES, fixtures_dir, open_local, runtime};

#[test]
fn pages_of_a_resumed_scan_equal_one_scan() {
    let rt = runtime();
    let mut pages_read = 0;
    for name in FIXTURES {
        let table = open_local(&fixtures_dir().join(name));
        let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
        let whole = snap
            .scan(ScanOptions {
                batch_size: 7,
                ..Default::default()
            })
            .unwrap();
        let mut one = Vec::new();
        rt.block_on(whole.execute(&mut |b| {
            one.push(b);
            Ok(true)
        }))
        .unwrap();
        let total: usize = one.iter().map(|b| b.num_rows()).sum();
        // pages small enough to cut batches and files, at most ~200 of them per table
        let sizes = [1, 5, 13, 100, 1000];
        for page in sizes.into_iter().filter(|p| total.div_ceil(*p) <= 200) {
            let mut progress = ScanProgress::default();
            let mut got = Vec::new();
            let mut files_read = 0;
            for round in 0.. {
                assert!(round <= total + snap.files.len() + 1, "{name}: no end");
                let scan = snap
                    .scan(ScanOptions {
                        batch_size: 7,
                        limit: Some(page + progress.rows_to_skip()),
                        ..Default::default()
                    })
                    .unwrap();
                let before: usize = got
                    .iter()
                    .map(|b: &arrow_array::RecordBatch| b.num_rows())
                    .sum();
                let (m, done) = rt
                    .block_on(scan.execute_resuming(&mut progress, &mut |b| {
                        got.push(b);
                        Ok(true)
                    }))
                    .unwrap();
                files_read += m.files_read;
                pages_read += 1;
                let after: usize = got.iter().map(|b| b.num_rows()).sum();
                assert!(
                    after - before <= page,
                    "{name}: page of {page} gave {}",
                    after - before
                );
                if done {
                    break;
                }
                assert!(
                    after > before || progress.rows_to_skip() > 0,
                    "{name}: no progress"
                );
            }
            assert_eq!(
                canonical_lines(&got, snap.schema.fields()),
                canonical_lines(&one, snap.schema.fields()),
                "{name} in pages of {page}"
            );
            assert_eq!(progress.files_done(), snap.files.len(), "{name}");
            // each page reads again at most the one file the last page stopped in
            let pages = total.div_ceil(page) + 1;
            assert!(
                files_read <= snap.files.len() + pages,
                "{name}: {files_read} file reads for {} files in {pages} pages",
                snap.files.len()
            );
        }
    }
    println!("{pages_read} resumed pages equal one scan in order");
}

#[test]
fn a_stopping_sink_is_resumed_where_it_stopped() {
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("partitioned"));
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let opts = || ScanOptions {
        batch_size: 3,
        ..Default::default()
    };
    let mut one = Vec::new();
    rt.block_on(snap.scan(opts()).unwrap().execute(&mut |b| {
        one.push(b);
        Ok(true)
    }))
    .unwrap();
    let mut progress = ScanProgress::default();
    let mut got = Vec::new();
    // first the sink takes one batch and stops, then the rest is read
    let (_, done) = rt
        .block_on(
            snap.scan(opts())
                .unwrap()
                .execute_resuming(&mut progress, &mut |b| {
                    got.push(b);
                    Ok(false)
                }),
        )
        .unwrap();
    assert!(!done);
    assert_eq!(got.len(), 1);
    let (_, done) = rt
        .block_on(
            snap.scan(opts())
                .unwrap()
                .execute_resuming(&mut progress, &mut |b| {
                    got.push(b);
                    Ok(true)
                }),
        )
        .unwrap();
    assert!(done);
    assert_eq!(
        canonical_lines(&got, snap.schema.fields()),
        canonical_lines(&one, snap.schema.fields())
    );
}

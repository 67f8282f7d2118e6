//! `Scan::execute_resuming` (the explorer's grid, loading rows as the user scrolls):
//! pages of any size, cut mid-batch and mid-file, return the rows of one whole scan in
//! the same order, each once, and a resumed page reads only the file it stopped in again.

use deltalens_core::VersionSpec;
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::{ScanOptions, ScanProgress};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{FIXTURES, conformance_dir, fixtures_dir, open_local, runtime};

/// Every fixture, and the conformance tables with deletion vectors (rows left out by
/// position must skip the deleted ones), without and with a filter.
fn tables() -> Vec<(String, std::path::PathBuf, Option<&'static str>)> {
    let mut out: Vec<_> = FIXTURES
        .iter()
        .map(|n| (n.to_string(), fixtures_dir().join(n), None))
        .collect();
    out.push((
        "demo filtered".into(),
        fixtures_dir().join("demo"),
        Some("price > 300"),
    ));
    if let Some(c) = conformance_dir() {
        for n in [
            "dk_basic-dv-with-checkpoint",
            "golden_dv-partitioned-with-checkpoint",
            "golden_dv-with-columnmapping",
            "kr_cdf-table-with-dv",
            "kr_table-with-dv-small",
        ] {
            out.push((n.to_string(), c.join("tables").join(n), None));
        }
    }
    out
}

#[test]
fn pages_of_a_resumed_scan_equal_one_scan() {
    let rt = runtime();
    let mut pages_read = 0;
    let mut tables_read = 0;
    for (name, dir, filter) in tables() {
        let table = open_local(&dir);
        let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
        let opts = |limit| ScanOptions {
            batch_size: 7,
            limit,
            filter: filter.map(|f| Predicate::parse(f).unwrap()),
            ..Default::default()
        };
        let whole = snap.scan(opts(None)).unwrap();
        let mut one = Vec::new();
        rt.block_on(whole.execute(&mut |b| {
            one.push(b);
            Ok(true)
        }))
        .unwrap();
        let total: usize = one.iter().map(|b| b.num_rows()).sum();
        let deleted = snap.files.iter().any(|f| f.deletion_vector.is_some());
        assert!(
            !name.starts_with("kr_table-with-dv") || deleted,
            "{name} has deletion vectors"
        );
        tables_read += 1;
        // pages small enough to cut batches and files, at most ~200 of them per table
        let sizes = [1, 5, 13, 100, 1000];
        for page in sizes.into_iter().filter(|p| total.div_ceil(*p) <= 200) {
            let mut progress = ScanProgress::default();
            let mut got = Vec::new();
            let mut files_read = 0;
            for round in 0.. {
                assert!(round <= total + snap.files.len() + 1, "{name}: no end");
                let scan = snap
                    .scan(opts(Some(page + progress.rows_to_skip())))
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
            // the same rows in the same order (canonical_lines sorts: one row at a time)
            let lines = |b: &[arrow_array::RecordBatch]| {
                let mut v = Vec::new();
                for x in b {
                    for i in 0..x.num_rows() {
                        v.extend(canonical_lines(&[x.slice(i, 1)], snap.schema.fields()));
                    }
                }
                v
            };
            let (a, b) = (lines(&got), lines(&one));
            let first_diff = a.iter().zip(&b).position(|(x, y)| x != y);
            assert!(
                a.len() == b.len() && first_diff.is_none(),
                "{name} in pages of {page}: {} rows for {}, first difference at row {first_diff:?}: {:?} for {:?}",
                a.len(),
                b.len(),
                first_diff.and_then(|i| a.get(i)),
                first_diff.and_then(|i| b.get(i)),
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
    println!("{pages_read} resumed pages over {tables_read} tables equal one scan in order");
}

/// Without a filter, the rows a page returned are not decoded again: the rows decoded
/// over all pages stay near the table's rows (a page re-reading its file's start would
/// decode about pages x rows per file).
#[test]
fn resumed_pages_do_not_decode_returned_rows_again() {
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("demo"));
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let mut progress = ScanProgress::default();
    let mut rows = 0usize;
    let mut decoded = 0usize;
    loop {
        let scan = snap
            .scan(ScanOptions {
                batch_size: 10,
                limit: Some(10 + progress.rows_to_skip()),
                ..Default::default()
            })
            .unwrap();
        let (m, done) = rt
            .block_on(scan.execute_resuming(&mut progress, &mut |b| {
                rows += b.num_rows();
                Ok(true)
            }))
            .unwrap();
        decoded += m.rows_returned + m.rows_deleted;
        if done {
            break;
        }
    }
    assert!(rows > 100, "{rows}");
    assert!(
        decoded <= rows + 10 * snap.files.len(),
        "{decoded} rows decoded for {rows}"
    );
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

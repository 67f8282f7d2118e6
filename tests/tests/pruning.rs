//! Pruning never changes results: for every table of the conformance corpus and our
//! fixtures, many filters built from the table's own values return the same rows with
//! pruning on and off — and pruning does skip files and row groups.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::PathBuf;

use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::{ScanMetrics, ScanOptions};
use deltalens_core::schema::DataType;
use deltalens_core::{Table, VersionSpec};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{FIXTURES, conformance_dir, fixtures_dir, open_local, runtime};

async fn run(
    table: &Table,
    filter: Option<Predicate>,
    prune: bool,
) -> Result<(Vec<String>, ScanMetrics), deltalens_core::Error> {
    let snap = table.snapshot(VersionSpec::Latest).await?;
    let opts = ScanOptions {
        filter,
        prune,
        ..Default::default()
    };
    let scan = snap.scan(opts)?;
    let mut batches: Vec<RecordBatch> = Vec::new();
    let m = scan
        .execute(&mut |b| {
            batches.push(b);
            Ok(true)
        })
        .await?;
    Ok((canonical_lines(&batches, snap.schema.fields()), m))
}

/// The same scan over the files chosen while they stream (`snapshot_for_scan`).
async fn run_streamed(
    table: &Table,
    filter: Option<Predicate>,
    limit: Option<usize>,
) -> Result<Vec<String>, deltalens_core::Error> {
    let info = table.version_info(VersionSpec::Latest).await?;
    let opts = ScanOptions {
        filter,
        limit,
        ..Default::default()
    };
    let snap = info.snapshot_for_scan(&opts).await?;
    let mut batches: Vec<RecordBatch> = Vec::new();
    snap.scan(opts)?
        .execute(&mut |b| {
            batches.push(b);
            Ok(true)
        })
        .await?;
    Ok(canonical_lines(&batches, snap.schema.fields()))
}

fn literal(b: &RecordBatch, col: usize, row: usize, ty: &str) -> Option<String> {
    let a = b.column(col);
    if a.is_null(row) || ty == "binary" {
        return None;
    }
    let f = ArrayFormatter::try_new(a.as_ref(), &FormatOptions::default()).ok()?;
    let text = f.value(row).to_string();
    Some(match ty {
        "string" | "date" | "timestamp" | "timestamp_ntz" => {
            format!("'{}'", text.replace('\'', "''"))
        }
        _ => text,
    })
}

fn tables() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = conformance_dir() {
        let tables: serde_json::Value =
            deltalens_json::from_str(&std::fs::read_to_string(dir.join("tables.json")).unwrap())
                .unwrap();
        for t in tables.as_array().unwrap() {
            if !t["expect_error"].as_bool().unwrap_or(false) {
                out.push(dir.join("tables").join(t["name"].as_str().unwrap()));
            }
        }
    } else {
        eprintln!("conformance corpus not found: pruning checked on fixtures only");
    }
    for f in FIXTURES {
        out.push(fixtures_dir().join(f));
    }
    out
}

#[test]
fn pruning_never_changes_results() {
    let rt = runtime();
    let (mut checks, mut files_skipped, mut rgs_skipped, mut page_rows_skipped) = (0, 0, 0, 0);
    let mut streamed_checks = 0;
    let mut problems = Vec::new();
    for path in tables() {
        let table = open_local(&path);
        let Ok(snap) = rt.block_on(table.snapshot(VersionSpec::Latest)) else {
            continue;
        };
        // some rows to take values from
        let mut sample: Vec<RecordBatch> = Vec::new();
        let scan = snap
            .scan(ScanOptions {
                limit: Some(64),
                ..Default::default()
            })
            .unwrap();
        if rt
            .block_on(scan.execute(&mut |b| {
                sample.push(b);
                Ok(true)
            }))
            .is_err()
        {
            continue; // unreadable data (vacuumed files): covered by the conformance test
        }
        // a limit over files chosen while they stream: as many rows as asked (or all)
        let all = rt.block_on(run(&table, None, true)).map(|r| r.0.len());
        for limit in [1, 3, 100] {
            match (rt.block_on(run_streamed(&table, None, Some(limit))), &all) {
                (Ok(rows), Ok(n)) if rows.len() == limit.min(*n) => streamed_checks += 1,
                (got, _) => problems.push(format!(
                    "{}: LIMIT {limit} over streamed files: {:?} rows of {all:?}",
                    path.display(),
                    got.map(|r| r.len())
                )),
            }
        }
        let mut filters = Vec::new();
        for (ci, f) in snap.schema.fields().iter().enumerate() {
            let DataType::Primitive(ty) = &f.data_type else {
                continue;
            };
            if ty == "binary" || ty == "variant" {
                continue;
            }
            let name = format!("`{}`", f.name);
            let name = if f
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                f.name.clone()
            } else {
                name
            };
            filters.push(format!("{name} IS NULL"));
            filters.push(format!("{name} IS NOT NULL"));
            if let Some(b) = sample.first() {
                for row in [0, b.num_rows() / 2] {
                    if row >= b.num_rows() {
                        continue;
                    }
                    let Some(v) = literal(b, ci, row, ty) else {
                        continue;
                    };
                    for op in ["=", "<>", "<", "<=", ">", ">="] {
                        filters.push(format!("{name} {op} {v}"));
                    }
                    filters.push(format!("NOT ({name} >= {v})"));
                    filters.push(format!("{name} IN ({v}) OR {name} IS NULL"));
                    filters.push(format!("{name} BETWEEN {v} AND {v}"));
                }
            }
        }
        for sql in filters {
            let p = match Predicate::parse(&sql) {
                Ok(p) => p,
                Err(e) => {
                    problems.push(format!("{}: {sql}: {e}", path.display()));
                    continue;
                }
            };
            let on = rt.block_on(run(&table, Some(p.clone()), true));
            let streamed = rt.block_on(run_streamed(&table, Some(p.clone()), None));
            let off = rt.block_on(run(&table, Some(p), false));
            checks += 1;
            match (on, off) {
                (Ok((a, m)), Ok((b, _))) => {
                    // files chosen while they stream: the same rows
                    match &streamed {
                        Ok(c) if *c == b => streamed_checks += 1,
                        other => problems.push(format!(
                            "{}: {sql}: streamed files give {:?} rows, {} unpruned",
                            path.display(),
                            other.as_ref().map(Vec::len),
                            b.len()
                        )),
                    }
                    files_skipped += m.files_skipped;
                    rgs_skipped += m.row_groups_skipped;
                    page_rows_skipped += m.rows_skipped_by_page_index;
                    if a != b {
                        problems.push(format!(
                            "{}: {sql}: {} rows pruned vs {} unpruned",
                            path.display(),
                            a.len(),
                            b.len()
                        ));
                    }
                }
                (a, b) => problems.push(format!(
                    "{}: {sql}: {:?} / {:?}",
                    path.display(),
                    a.err(),
                    b.err()
                )),
            }
        }
    }
    eprintln!(
        "pruning: {checks} filters, same rows with and without pruning ({streamed_checks} also over files chosen while they stream); {files_skipped} files, {rgs_skipped} row groups and {page_rows_skipped} rows of pages skipped"
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(files_skipped > 0 && rgs_skipped > 0 && page_rows_skipped > 0);
}

#[test]
fn partition_filter_reads_only_matching_files() {
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("partitioned"));
    let p = Predicate::parse("event_date = '2024-01-03'").unwrap();
    let (rows, m) = rt.block_on(run(&table, Some(p), true)).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(m.files_read, 2);
    assert_eq!(m.files_skipped, 5);
    let p = Predicate::parse("id > 100").unwrap();
    let (rows, m) = rt.block_on(run(&table, Some(p), true)).unwrap();
    assert!(rows.is_empty());
    assert_eq!(m.files_read, 0, "file statistics skip every file");
}

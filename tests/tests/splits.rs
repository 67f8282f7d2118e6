//! Split planning (`VersionInfo::plan`, `Split::execute`): the splits of a plan, each
//! written as JSON, read back and executed on its own through a freshly opened table
//! (nothing read from the log), together return exactly the rows the corpus expects, at
//! every expected version, cut one way and another; a filter prunes files from the plan
//! without changing the filtered rows; hostile splits are refused with clear errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::Path;

use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{PlanOptions, ScanPlan, Split, VersionSpec};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{conformance_dir, fixtures_dir, open_local, runtime};
use serde_json::Value;

fn read_json(p: &Path) -> Value {
    deltalens_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The rows of every split of `plan`, each split round-tripped through JSON and run
/// against a table opened anew at `dir`, as sorted canonical lines.
fn rows_of_splits(dir: &Path, plan: &ScanPlan, options: &ScanOptions) -> Vec<String> {
    let rt = runtime();
    let mut lines = Vec::new();
    for split in &plan.splits {
        let text = serde_json::to_string(split).unwrap();
        let split: Split = deltalens_json::from_str(&text).unwrap();
        let fresh = open_local(dir);
        let fields = split
            .snapshot(fresh.clone())
            .unwrap()
            .schema
            .fields()
            .to_vec();
        let mut batches = Vec::new();
        rt.block_on(split.execute(fresh, options.clone(), &mut |b| {
            batches.push(b);
            Ok(true)
        }))
        .unwrap();
        lines.extend(canonical_lines(&batches, &fields));
    }
    lines.sort();
    lines
}

fn plan(dir: &Path, v: u64, options: &ScanOptions, target_bytes: u64) -> ScanPlan {
    let rt = runtime();
    let table = open_local(dir);
    let info = rt
        .block_on(table.version_info(VersionSpec::Version(v)))
        .unwrap();
    let p = PlanOptions {
        target_bytes,
        ..Default::default()
    };
    rt.block_on(info.plan(options, &p)).unwrap()
}

#[test]
fn the_splits_of_a_plan_return_the_corpus_rows() {
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let tables = read_json(&dir.join("tables.json"));
    let (mut versions, mut splits, mut rows, mut names) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for t in tables.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        if t["expect_error"].as_bool().unwrap_or(false) {
            continue;
        }
        let exp = dir.join("expected").join(name);
        let table_dir = dir.join("tables").join(name);
        let expected = read_json(&exp.join("versions.json"));
        names += 1;
        for (v, e) in expected["versions"].as_object().unwrap() {
            let (Ok(v), Some(file)) = (v.parse::<u64>(), e["data_file"].as_str()) else {
                continue;
            };
            if e["error"].as_bool().unwrap_or(false) {
                continue;
            }
            let mut want: Vec<String> = std::fs::read_to_string(exp.join(file))
                .unwrap()
                .lines()
                .map(|l| format!("{l}\n"))
                .collect();
            want.sort();
            versions += 1;
            let whole = plan(&table_dir, v, &ScanOptions::default(), u64::MAX);
            // one split; about three; one split per file (target 1 byte)
            for target in [u64::MAX, whole.bytes.div_ceil(3).max(1), 1] {
                let p = plan(&table_dir, v, &ScanOptions::default(), target);
                assert_eq!(
                    p.files, whole.files,
                    "{name} v{v}: the files do not depend on the cut"
                );
                assert!(p.splits.len() <= p.files.max(1));
                if target == 1 {
                    assert_eq!(p.splits.len(), p.files, "{name} v{v}: a split per file");
                }
                let got = rows_of_splits(&table_dir, &p, &ScanOptions::default());
                if got != want {
                    problems.push(format!(
                        "{name} v{v} ({} splits): {} rows, {} expected",
                        p.splits.len(),
                        got.len(),
                        want.len()
                    ));
                }
                splits += p.splits.len();
                rows += got.len();
            }
        }
    }
    println!(
        "splits: {versions} versions of {names} corpus tables, {splits} splits executed alone, {rows} rows equal to the expected rows"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(versions >= 100, "only {versions} versions planned");
}

#[test]
fn a_filter_prunes_the_plan_and_keeps_the_filtered_rows() {
    let rt = runtime();
    let dir = fixtures_dir().join("demo");
    let table = open_local(&dir);
    let info = rt
        .block_on(table.version_info(VersionSpec::Latest))
        .unwrap();
    let all = rt
        .block_on(info.plan(&ScanOptions::default(), &PlanOptions::default()))
        .unwrap();
    let filtered = ScanOptions {
        filter: Some(Predicate::parse("event_date = '2019-10-01'").unwrap()),
        ..Default::default()
    };
    let some = rt
        .block_on(info.plan(
            &filtered,
            &PlanOptions {
                target_bytes: 1,
                ..Default::default()
            },
        ))
        .unwrap();
    assert!(
        some.files < all.files,
        "{} of {} files kept",
        some.files,
        all.files
    );
    assert!(some.files > 0);
    // the same rows as the whole version read with the filter
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let mut batches = Vec::new();
    rt.block_on(snap.scan(filtered.clone()).unwrap().execute(&mut |b| {
        batches.push(b);
        Ok(true)
    }))
    .unwrap();
    let mut want = canonical_lines(&batches, snap.schema.fields());
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(rows_of_splits(&dir, &some, &filtered), want);
    // an unknown column or a filter on one is refused when planning, naming it
    let bad = ScanOptions {
        columns: Some(vec!["nope".into()]),
        ..Default::default()
    };
    let e = rt
        .block_on(info.plan(&bad, &PlanOptions::default()))
        .unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn hostile_splits_are_refused() {
    let rt = runtime();
    let dir = fixtures_dir().join("demo");
    let table = open_local(&dir);
    let info = rt
        .block_on(table.version_info(VersionSpec::Latest))
        .unwrap();
    let p = rt
        .block_on(info.plan(&ScanOptions::default(), &PlanOptions::default()))
        .unwrap();
    let good = p.splits[0].clone();
    let run = |s: &Split| {
        rt.block_on(s.execute(open_local(&dir), ScanOptions::default(), &mut |_| Ok(true)))
            .map(|_| ())
    };
    // a path that leaves the table
    let mut escape = good.clone();
    escape.files[0].path = "../../../etc/passwd".into();
    let e = run(&escape).unwrap_err().to_string();
    assert!(e.contains("etc/passwd"), "{e}");
    // a protocol this reader does not read
    let mut future = good.clone();
    future.protocol.min_reader_version = 99;
    assert!(run(&future).is_err());
    // a schema that does not parse
    let mut broken = good.clone();
    broken.metadata.schema_string = "{\"type\":".into();
    assert!(run(&broken).is_err());
    // a file that is not there: the storage's error, not a panic
    let mut missing = good;
    missing.files[0].path = "no-such-file.parquet".into();
    assert!(run(&missing).is_err());
}

/// Plans as Arrow IPC (`deltalens_api::plan_ipc`): a row per file, read back to the same
/// plan, for every expected version of the corpus cut 3 ways; the typed columns agree
/// with the files.
#[test]
fn plans_round_trip_through_arrow_ipc() {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use deltalens_api::plan_ipc::{plan_from_ipc, plan_to_ipc};
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let tables = read_json(&dir.join("tables.json"));
    let (mut plans, mut files) = (0, 0);
    for t in tables.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        if t["expect_error"].as_bool().unwrap_or(false) {
            continue;
        }
        let table_dir = dir.join("tables").join(name);
        let expected = read_json(&dir.join("expected").join(name).join("versions.json"));
        for (v, e) in expected["versions"].as_object().unwrap() {
            let Ok(v) = v.parse::<u64>() else { continue };
            if e["error"].as_bool().unwrap_or(false) || e["data_file"].as_str().is_none() {
                continue;
            }
            for target in [u64::MAX, 1000, 1] {
                let p = plan(&table_dir, v, &ScanOptions::default(), target);
                let bytes = plan_to_ipc(&p).unwrap();
                let back = plan_from_ipc(&bytes, 1_000_000).unwrap();
                assert_eq!(
                    serde_json::to_value(&back).unwrap(),
                    serde_json::to_value(&p).unwrap(),
                    "{name} v{v}"
                );
                // typed columns: one row per file, the paths and sizes of the splits' files
                let reader = arrow_ipc::reader::StreamReader::try_new(&bytes[..], None).unwrap();
                let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
                let paths: Vec<String> = batches
                    .iter()
                    .flat_map(|b| {
                        let c = b.column_by_name("path").unwrap().as_string::<i32>();
                        (0..c.len())
                            .map(|i| c.value(i).to_string())
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let want: Vec<String> = p
                    .splits
                    .iter()
                    .flat_map(|s| s.files.iter().map(|f| f.path.clone()))
                    .collect();
                assert_eq!(paths, want, "{name} v{v}");
                plans += 1;
                files += want.len();
            }
        }
    }
    println!("plans as Arrow IPC: {plans} plans, {files} file rows, read back equal");
    assert!(plans >= 300);
    // refused: not IPC, over the file limit
    assert!(plan_from_ipc(b"nope", 10).is_err());
    let demo = plan(&fixtures_dir().join("demo"), 6, &ScanOptions::default(), 1);
    let e = plan_from_ipc(&plan_to_ipc(&demo).unwrap(), 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("limit") || e.contains("at most"), "{e}");
}

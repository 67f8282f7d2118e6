//! Conformance over ../shared/conformance: latest version, every version's active file
//! count and rows from statistics, earliest version, schema per version, history
//! versions/operations/timestamps, and refusal exactly where `expect_error` says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::collections::BTreeMap;
use std::path::Path;

use deltalens_core::{Table, VersionSpec};
use deltalens_tests::{conformance_dir, open_local, runtime};
use serde_json::Value;

fn read_json(p: &Path) -> Value {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    deltalens_json::from_str(&s).unwrap()
}

fn fields_of(s: &deltalens_core::Snapshot) -> Vec<(String, String, bool)> {
    s.schema
        .fields()
        .iter()
        .map(|f| (f.name.clone(), f.data_type.type_string(), f.nullable))
        .collect()
}

fn expected_fields(v: &Value) -> Vec<(String, String, bool)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                f["type"].as_str().unwrap().to_string(),
                f["nullable"].as_bool().unwrap(),
            )
        })
        .collect()
}

async fn check_table(
    table: &Table,
    expected: &Path,
    problems: &mut Vec<String>,
    checks: &mut usize,
) {
    let versions = read_json(&expected.join("versions.json"));
    let schema = read_json(&expected.join("schema.json"));
    let name = table.location().to_string();
    let mut fail = |m: String| problems.push(format!("{name}: {m}"));

    // latest
    let latest = match table.snapshot(VersionSpec::Latest).await {
        Ok(s) => s,
        Err(e) => return fail(format!("latest snapshot failed: {e}")),
    };
    *checks += 1;
    if Some(latest.version) != versions["latest_version"].as_u64() {
        fail(format!(
            "latest version {} != {}",
            latest.version, versions["latest_version"]
        ));
    }
    *checks += 1;
    if fields_of(&latest) != expected_fields(&schema["fields"]) {
        fail(format!(
            "schema {:?} != {}",
            fields_of(&latest),
            schema["fields"]
        ));
    }
    *checks += 1;
    let parts: Vec<String> = schema["partition_columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    if latest.partition_columns() != parts.as_slice() {
        fail(format!(
            "partition columns {:?} != {parts:?}",
            latest.partition_columns()
        ));
    }

    // every expected version
    let by_version = schema.get("schema_by_version");
    for (v, exp) in versions["versions"].as_object().unwrap() {
        let v: u64 = v.parse().unwrap();
        let snap = match table.snapshot(VersionSpec::Version(v)).await {
            Ok(s) => s,
            Err(e) => {
                fail(format!("version {v} failed: {e}"));
                continue;
            }
        };
        *checks += 1;
        if Some(snap.num_files() as u64) != exp["files"].as_u64() {
            fail(format!(
                "v{v}: {} files != {}",
                snap.num_files(),
                exp["files"]
            ));
        }
        if let (Some(rows), Some(expected_rows)) = (snap.num_rows().unwrap(), exp["rows"].as_i64())
        {
            *checks += 1;
            if rows != expected_rows {
                fail(format!("v{v}: {rows} rows from stats != {expected_rows}"));
            }
        }
        if let Some(fields) = by_version.and_then(|b| b.get(v.to_string())) {
            *checks += 1;
            if fields_of(&snap) != expected_fields(fields) {
                fail(format!("v{v}: schema {:?} != {fields}", fields_of(&snap)));
            }
        }
    }

    // earliest reconstructable version
    let earliest = versions["earliest_reconstructable_version"]
        .as_u64()
        .unwrap();
    if earliest > 0 {
        *checks += 1;
        match table.snapshot(VersionSpec::Version(earliest - 1)).await {
            Err(deltalens_core::Error::VersionOutOfRange { earliest: e, .. }) if e == earliest => {}
            other => fail(format!(
                "version {} before earliest {earliest} gave {:?}",
                earliest - 1,
                other.map(|s| s.version)
            )),
        }
    }

    // history: versions, operations, timestamps, in-commit timestamps
    let history_path = expected.join("history.json");
    if history_path.exists() {
        let raw = read_json(&history_path);
        let expected: BTreeMap<u64, &Value> = raw["raw_commit_info"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.parse().unwrap(), v))
            .collect();
        match table.history(None).await {
            Err(e) => fail(format!("history failed: {e}")),
            Ok(h) => {
                *checks += 1;
                let got: Vec<u64> = h.iter().map(|e| e.version).collect();
                let want: Vec<u64> = expected.keys().rev().copied().collect();
                if got != want {
                    fail(format!("history versions {got:?} != {want:?}"));
                }
                for e in &h {
                    let Some(x) = expected.get(&e.version) else {
                        continue;
                    };
                    *checks += 1;
                    let ts_ok = x["timestamp"].is_null() || x["timestamp"].as_i64() == e.timestamp;
                    if e.operation.as_deref() != x["operation"].as_str()
                        || !ts_ok
                        || e.in_commit_timestamp != x["inCommitTimestamp"].as_i64()
                    {
                        fail(format!("history v{}: {e:?} != {x}", e.version));
                    }
                }
            }
        }
    }
}

#[test]
fn conformance_corpus() {
    let Some(dir) = conformance_dir() else {
        eprintln!(
            "SKIPPED: conformance corpus not found (set DELTALENS_CONFORMANCE or provide ../shared/conformance)"
        );
        return;
    };
    let tables = read_json(&dir.join("tables.json"));
    let rt = runtime();
    let mut problems = Vec::new();
    let (mut checks, mut n_ok, mut n_refused) = (0usize, 0usize, 0usize);
    for t in tables.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let table = open_local(&dir.join("tables").join(name));
        let before = problems.len();
        if t["expect_error"].as_bool().unwrap_or(false) {
            let err = rt.block_on(table.snapshot(VersionSpec::Latest));
            checks += 1;
            match err {
                Err(e) => {
                    eprintln!("{name}: refused as expected: {e}");
                    n_refused += 1;
                }
                Ok(s) => problems.push(format!(
                    "{name}: expected refusal, read version {}",
                    s.version
                )),
            }
            continue;
        }
        rt.block_on(check_table(
            &table,
            &dir.join("expected").join(name),
            &mut problems,
            &mut checks,
        ));
        if problems.len() == before {
            n_ok += 1;
        }
    }
    eprintln!(
        "conformance: {n_ok} tables read correctly, {n_refused} refused as expected, {} problems, {checks} checks",
        problems.len()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// `TIMESTAMP AS OF` on the corpus table with in-commit timestamps (file modification
/// times of the corpus are not preserved, so only ICT tables have expected answers).
#[test]
fn in_commit_timestamp_time_travel() {
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let rt = runtime();
    let table = open_local(&dir.join("tables/dr_cdc_ict_table"));
    let raw = read_json(&dir.join("expected/dr_cdc_ict_table/history.json"));
    let ict = |v: &str| {
        raw["raw_commit_info"][v]["inCommitTimestamp"]
            .as_i64()
            .unwrap()
    };
    for v in ["2", "3"] {
        let got = rt.block_on(table.version_at_timestamp(ict(v))).unwrap();
        assert_eq!(got.to_string(), v);
    }
    assert_eq!(
        rt.block_on(table.version_at_timestamp(ict("3") - 1))
            .unwrap(),
        2
    );
    let s = rt
        .block_on(table.snapshot(VersionSpec::Timestamp(ict("2"))))
        .unwrap();
    assert_eq!(s.version, 2);
    let after = rt
        .block_on(table.version_at_timestamp(ict("3") + 1))
        .unwrap_err();
    assert!(
        after.to_string().contains("after the latest commit"),
        "{after}"
    );
    let before = rt
        .block_on(table.version_at_timestamp(ict("0") - 1))
        .unwrap_err();
    assert!(
        before.to_string().contains("before the earliest"),
        "{before}"
    );
}

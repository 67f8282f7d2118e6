//! Conformance of scanned rows: every expected version's rows equal `data_v<N>.jsonl`
//! in the canonical format; versions no reader could read must fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::Path;

use deltalens_core::scan::ScanOptions;
use deltalens_core::{Table, VersionSpec};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{conformance_dir, open_local, runtime};
use serde_json::Value;

/// The first differing line of two canonical documents, for messages.
fn first_difference(got: &str, want: &str) -> String {
    got.lines()
        .zip(want.lines())
        .find(|(a, b)| a != b)
        .map(|(a, b)| format!("got  {a}\nwant {b}"))
        .unwrap_or_default()
}

fn read_json(p: &Path) -> Value {
    deltalens_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

async fn scan_lines(table: &Table, v: u64) -> Result<Vec<String>, deltalens_core::Error> {
    let snap = table.snapshot(VersionSpec::Version(v)).await?;
    let scan = snap.scan(ScanOptions::default())?;
    let mut batches = Vec::new();
    scan.execute(&mut |b| {
        batches.push(b);
        Ok(true)
    })
    .await?;
    Ok(canonical_lines(&batches, snap.schema.fields()))
}

#[test]
fn conformance_rows() {
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let only = std::env::var("DELTALENS_ONLY").ok();
    let tables = read_json(&dir.join("tables.json"));
    let rt = runtime();
    let (mut matched, mut total, mut refused) = (0, 0, 0);
    let mut problems = Vec::new();
    for t in tables.as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        if only.as_deref().is_some_and(|o| o != name)
            || t["expect_error"].as_bool().unwrap_or(false)
        {
            continue;
        }
        let exp = dir.join("expected").join(name);
        let versions = read_json(&exp.join("versions.json"));
        let table = open_local(&dir.join("tables").join(name));
        for (v, e) in versions["versions"].as_object().unwrap() {
            let v: u64 = v.parse().unwrap();
            if e["error"].as_bool().unwrap_or(false) {
                total += 1;
                match rt.block_on(scan_lines(&table, v)) {
                    Err(_) => refused += 1,
                    Ok(l) => problems.push(format!(
                        "{name} v{v}: read {} rows where no reader could",
                        l.len()
                    )),
                }
                continue;
            }
            let Some(file) = e["data_file"].as_str() else {
                continue;
            };
            total += 1;
            let want = std::fs::read_to_string(exp.join(file)).unwrap();
            match rt.block_on(scan_lines(&table, v)) {
                Err(err) => problems.push(format!("{name} v{v}: {err}")),
                Ok(lines) => {
                    let got: String = lines.concat();
                    if got == want {
                        matched += 1;
                    } else {
                        let first_diff = first_difference(&got, &want);
                        problems.push(format!(
                            "{name} v{v}: {} rows != {} expected\n{first_diff}",
                            lines.len(),
                            want.lines().count()
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "conformance rows: {matched} versions matched, {refused} unreadable versions refused, of {total}; {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Change data feed: every `cdf.jsonl` (columns = schema + `_change_type` +
/// `_commit_version`) and the commit timestamps by version.
#[test]
fn conformance_cdf() {
    use deltalens_core::changes::Changes;
    use deltalens_core::schema::{DataType, StructField};
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let rt = runtime();
    let (mut matched, mut total) = (0, 0);
    let mut problems = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(dir.join("expected"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| dir.join("expected").join(n).join("cdf.json").exists())
        .collect();
    names.sort();
    for name in names {
        let exp = dir.join("expected").join(&name);
        let cdf = read_json(&exp.join("cdf.json"));
        let (from, to) = (
            cdf["start_version"].as_u64().unwrap(),
            cdf["end_version"].as_u64().unwrap(),
        );
        total += 1;
        let table = open_local(&dir.join("tables").join(&name));
        let res = rt.block_on(async {
            let changes = Changes::new(&table, from, Some(to), ScanOptions::default()).await?;
            let mut batches = Vec::new();
            changes
                .execute(&mut |b| {
                    batches.push(b);
                    Ok(true)
                })
                .await?;
            Ok::<_, deltalens_core::Error>((changes.snapshot.schema.fields().to_vec(), batches))
        });
        let (mut fields, batches) = match res {
            Ok(x) => x,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        for (n, t) in [("_change_type", "string"), ("_commit_version", "long")] {
            fields.push(StructField {
                name: n.into(),
                data_type: DataType::Primitive(t.into()),
                nullable: true,
                metadata: Default::default(),
            });
        }
        let got = canonical_lines(&batches, &fields).concat();
        let want = std::fs::read_to_string(exp.join(cdf["rows_file"].as_str().unwrap())).unwrap();
        // commit timestamps per version (where the commit has a commitInfo timestamp: without
        // one the timestamp is the file's modification time, which the corpus does not keep)
        let raw = read_json(&exp.join("history.json"));
        let mut ts_ok = true;
        for b in &batches {
            use arrow_array::cast::AsArray;
            let n = b.num_columns();
            let vers = b
                .column(n - 2)
                .as_primitive::<arrow_array::types::Int64Type>();
            let ts = b
                .column(n - 1)
                .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
            for i in 0..b.num_rows() {
                let v = vers.value(i).to_string();
                let want = cdf["commit_timestamp_us_by_version"][&v].as_i64();
                let has_info = raw["raw_commit_info"][&v]["timestamp"].is_i64();
                if has_info && want.is_some() && want != Some(ts.value(i)) {
                    ts_ok = false;
                }
            }
        }
        if got == want && ts_ok {
            matched += 1;
        } else {
            let diff = first_difference(&got, &want);
            problems.push(format!(
                "{name}: {} rows vs {} expected (timestamps ok: {ts_ok})\n{diff}",
                got.lines().count(),
                want.lines().count()
            ));
        }
    }
    eprintln!(
        "conformance cdf: {matched} of {total} change feeds matched; {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

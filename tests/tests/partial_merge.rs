//! Partial aggregation over splits (`execute_partial`, `combine_partials`,
//! `merge_partials`): for every readable corpus table, queries built from its columns —
//! COUNT/SUM/MIN/MAX/AVG, the same per group, ORDER BY … LIMIT — are answered per split
//! (a split per file), the splits' states are dealt at random to 1–4 workers, combined per
//! worker, then merged; the answer equals the single-process answer (`execute_limited`)
//! for every random assignment. Float sums may differ in the last bits with the order of
//! the additions: those compare within 1e-9, everything else exactly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use deltalens_api::{
    Limits, Partial, combine_partials, execute_limited, execute_partial, merge_partials, parse_sql,
};
use deltalens_core::scan::ScanOptions;
use deltalens_core::{PlanOptions, VersionSpec};
use deltalens_tests::{conformance_dir, fixtures_dir, groupable, numeric, open_local, runtime};

/// A small deterministic generator (xorshift): the same assignments every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Queries over the table's columns (quoted as Spark SQL quotes names: backticks),
/// `FROM 'url'`.
fn queries(url: &str, schema: &arrow_schema::Schema) -> Vec<String> {
    let cols: Vec<(String, DataType)> = schema
        .fields()
        .iter()
        .filter(|f| !f.name().contains('`'))
        .map(|f| (format!("`{}`", f.name()), f.data_type().clone()))
        .collect();
    let mut q = vec![format!("SELECT COUNT(*) FROM '{url}'")];
    let nums: Vec<&String> = cols
        .iter()
        .filter(|c| numeric(&c.1))
        .map(|c| &c.0)
        .take(2)
        .collect();
    let keys: Vec<&String> = cols
        .iter()
        .filter(|c| groupable(&c.1))
        .map(|c| &c.0)
        .take(2)
        .collect();
    for n in &nums {
        q.push(format!(
            "SELECT COUNT({n}), SUM({n}), MIN({n}), MAX({n}), AVG({n}) FROM '{url}'"
        ));
        for k in &keys {
            q.push(format!(
                "SELECT {k}, COUNT(*), SUM({n}), MIN({n}), MAX({n}), AVG({n}) FROM '{url}' GROUP BY {k} ORDER BY {k}"
            ));
        }
    }
    for k in &keys {
        q.push(format!(
            "SELECT {k}, COUNT(*) FROM '{url}' GROUP BY {k} ORDER BY 2 DESC, {k} LIMIT 3"
        ));
        q.push(format!(
            "SELECT MIN({k}), MAX({k}), COUNT({k}) FROM '{url}'"
        ));
    }
    // a top-N of rows: ordered by every selected column, so ties cannot pick other rows
    let sel: Vec<&String> = cols
        .iter()
        .filter(|c| groupable(&c.1) || numeric(&c.1))
        .map(|c| &c.0)
        .take(3)
        .collect();
    if !sel.is_empty() {
        let list = sel
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        q.push(format!(
            "SELECT {list} FROM '{url}' ORDER BY {list} LIMIT 7"
        ));
        q.push(format!(
            "SELECT {list} FROM '{url}' WHERE {} IS NOT NULL ORDER BY {list} DESC LIMIT 4",
            sel[0]
        ));
    }
    q
}

/// Equal batches: floats within 1e-9 (relative), everything else exactly.
fn same(a: &RecordBatch, b: &RecordBatch) -> Result<(), String> {
    if a.num_rows() != b.num_rows() || a.num_columns() != b.num_columns() {
        return Err(format!(
            "{}x{} vs {}x{}",
            a.num_rows(),
            a.num_columns(),
            b.num_rows(),
            b.num_columns()
        ));
    }
    for (i, (x, y)) in a.columns().iter().zip(b.columns()).enumerate() {
        if x.data_type() != y.data_type() {
            return Err(format!(
                "column {i}: {} vs {}",
                x.data_type(),
                y.data_type()
            ));
        }
        if *x.data_type() == DataType::Float64 {
            let (x, y) = (
                x.as_primitive::<Float64Type>(),
                y.as_primitive::<Float64Type>(),
            );
            for r in 0..x.len() {
                let ok = match (x.is_valid(r), y.is_valid(r)) {
                    (false, false) => true,
                    (true, true) => {
                        let (p, q) = (x.value(r), y.value(r));
                        (p.is_nan() && q.is_nan())
                            || p == q
                            || (p - q).abs() <= 1e-9 * p.abs().max(q.abs())
                    }
                    _ => false,
                };
                if !ok {
                    return Err(format!(
                        "column {i} row {r}: {:?} vs {:?}",
                        x.slice(r, 1),
                        y.slice(r, 1)
                    ));
                }
            }
        } else if x.as_ref() != y.as_ref() {
            return Err(format!("column {i}: {x:?} vs {y:?}"));
        }
    }
    Ok(())
}

fn tables() -> Vec<(String, std::path::PathBuf)> {
    let mut out = vec![
        ("demo".to_string(), fixtures_dir().join("demo")),
        (
            "checkpointed".to_string(),
            fixtures_dir().join("checkpointed"),
        ),
    ];
    if let Some(dir) = conformance_dir() {
        let list: serde_json::Value =
            deltalens_json::from_str(&std::fs::read_to_string(dir.join("tables.json")).unwrap())
                .unwrap();
        for t in list.as_array().unwrap() {
            if !t["expect_error"].as_bool().unwrap_or(false) {
                let name = t["name"].as_str().unwrap().to_string();
                out.push((name.clone(), dir.join("tables").join(name)));
            }
        }
    }
    out
}

#[test]
fn merges_of_any_assignment_of_splits_equal_the_single_process_answer() {
    let rt = runtime();
    let mut rng = Rng(0x5eed_d017_a1e5);
    let (mut n_tables, mut n_queries, mut n_merges, mut n_splits) = (0, 0, 0, 0);
    let mut problems = Vec::new();
    for (name, dir) in tables() {
        let table = open_local(&dir);
        let Ok(info) = rt.block_on(table.version_info(VersionSpec::Latest)) else {
            continue;
        };
        let Ok(snap) = rt.block_on(info.snapshot_for_scan(&ScanOptions::default())) else {
            continue;
        };
        let Ok(scan) = snap.scan(ScanOptions::default()) else {
            continue;
        };
        let schema = scan.schema();
        let url = dir.to_string_lossy().replace('\'', "''");
        let one_per_file = PlanOptions {
            target_bytes: 1,
            ..Default::default()
        };
        let plan = rt
            .block_on(info.plan(&ScanOptions::default(), &one_per_file))
            .unwrap();
        if plan.splits.is_empty() {
            continue;
        }
        n_tables += 1;
        n_splits += plan.splits.len();
        for sql in queries(&url, &schema) {
            let q = parse_sql(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let whole = match rt.block_on(execute_limited(&q, &table, Limits::default())) {
                Ok(o) => o.batches.into_iter().next().unwrap(),
                // a query the single process refuses (SUM overflow…): the splits must too
                Err(e) => {
                    let parts: Result<Vec<Partial>, _> = plan
                        .splits
                        .iter()
                        .map(|s| rt.block_on(execute_partial(&q, s, &table, Limits::default())))
                        .collect();
                    let merged = parts.and_then(|p| merge_partials(&q, &p, plan.version, None));
                    if merged.is_ok() {
                        problems.push(format!(
                            "{name}: {sql}: refused whole ({e}), answered merged"
                        ));
                    }
                    continue;
                }
            };
            n_queries += 1;
            let parts: Vec<Partial> = plan
                .splits
                .iter()
                .map(|s| {
                    rt.block_on(execute_partial(&q, s, &table, Limits::default()))
                        .unwrap()
                })
                .collect();
            for _ in 0..4 {
                // deal the splits to 1-4 workers at random; each combines its own, then
                // the coordinator merges the workers' states
                let workers = 1 + rng.next(4);
                let mut dealt: Vec<Vec<Partial>> = vec![Vec::new(); workers];
                for p in &parts {
                    dealt[rng.next(workers)].push(p.clone());
                }
                let combined: Vec<Partial> = dealt
                    .iter()
                    .filter(|d| !d.is_empty())
                    .map(|d| combine_partials(&q, d).unwrap())
                    .collect();
                let merged = merge_partials(&q, &combined, plan.version, None).unwrap();
                n_merges += 1;
                if let Err(e) = same(&merged.batches[0], &whole) {
                    problems.push(format!("{name}: {sql} ({workers} workers): {e}"));
                    break;
                }
            }
        }
    }
    println!(
        "partial merge: {n_queries} queries on {n_tables} tables ({n_splits} splits), {n_merges} random assignments merged, each equal to the single-process answer"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        n_tables >= 20 && n_queries >= 150,
        "{n_tables} tables, {n_queries} queries"
    );
}

//! deltalens in DataFusion (`deltalens-datafusion`): the conformance corpus through
//! DataFusion SQL equals the corpus' expected rows at every expected version (time travel
//! by table option, several splits per scan); aggregate queries over the corpus equal
//! deltalens' own SQL answers; filters prune the plan's files without changing answers;
//! `table_changes` equals the corpus' change feeds; joins and window functions agree
//! with answers computed another way; plans shipped through the physical extension codec
//! (as to Ballista executors) give the same answers and carry no credentials.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use deltalens_api::{Limits, execute_limited, parse_sql};
use deltalens_core::VersionSpec;
use deltalens_core::schema::{DataType, StructField};
use deltalens_datafusion::codec::{DeltaCodec, DeltaLogicalCodec};
use deltalens_datafusion::datafusion::datasource::physical_plan::{
    FileScanConfig, FileScanConfigBuilder,
};
use deltalens_datafusion::datafusion::datasource::source::DataSourceExec;
use deltalens_datafusion::datafusion::physical_plan::{
    ExecutionPlan, ExecutionPlanProperties, collect, displayable,
};
use deltalens_datafusion::datafusion::prelude::{SessionConfig, SessionContext};
use deltalens_datafusion::datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use deltalens_datafusion::{bridge, context, delta_scan};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{conformance_dir, fixtures_dir, groupable, numeric, open_local};
use serde_json::Value;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn ctx(partitions: usize) -> SessionContext {
    context(SessionConfig::new().with_target_partitions(partitions), &[])
}

async fn sql(ctx: &SessionContext, q: &str) -> Result<Vec<RecordBatch>, String> {
    let df = ctx.sql(q).await.map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    batches
        .iter()
        .map(|b| bridge::batch_from_datafusion(b).map_err(|e| e.to_string()))
        .collect()
}

fn read_json(p: &Path) -> Value {
    deltalens_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn corpus_tables() -> Vec<(String, PathBuf)> {
    let Some(dir) = conformance_dir() else {
        return Vec::new();
    };
    read_json(&dir.join("tables.json"))
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| !t["expect_error"].as_bool().unwrap_or(false))
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_string();
            let path = dir.join("tables").join(&name);
            (name, path)
        })
        .collect()
}

fn quote(s: &str) -> String {
    s.replace('\'', "''")
}

#[test]
fn the_corpus_through_datafusion_sql_equals_the_expected_rows() {
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let rt = rt();
    let (mut versions, mut rows, mut n) = (0, 0, 0);
    let mut problems = Vec::new();
    for (name, table_dir) in corpus_tables() {
        let exp = dir.join("expected").join(&name);
        let expected = read_json(&exp.join("versions.json"));
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
            n += 1;
            let ctx = ctx(3);
            let got = rt.block_on(async {
                let create = format!(
                    "CREATE EXTERNAL TABLE t{n} STORED AS DELTA LOCATION '{}' OPTIONS ('version' '{v}')",
                    quote(&table_dir.to_string_lossy())
                );
                sql(&ctx, &create).await?;
                sql(&ctx, &format!("SELECT * FROM t{n}")).await
            });
            let info = rt
                .block_on(open_local(&table_dir).version_info(VersionSpec::Version(v)))
                .unwrap();
            match got {
                Ok(batches) => {
                    let mut got = canonical_lines(&batches, info.schema.fields());
                    got.sort();
                    if got != want {
                        problems.push(format!(
                            "{name} v{v}: {} rows, {} expected",
                            got.len(),
                            want.len()
                        ));
                    }
                    rows += got.len();
                }
                Err(e) => problems.push(format!("{name} v{v}: {e}")),
            }
            versions += 1;
        }
    }
    println!(
        "datafusion: {versions} versions of the corpus through DataFusion SQL (3 target partitions), {rows} rows equal to the expected rows"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(versions >= 100, "only {versions} versions read");
}

/// Every cell of `batches` as text, a row per line.
fn cells(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let options = FormatOptions::default().with_null("NULL");
    for b in batches {
        let f: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            out.push(f.iter().map(|f| f.value(r).to_string()).collect());
        }
    }
    out
}

/// Equal rows: numbers within 1e-9 relative (a DataFusion decimal AVG has more scale
/// than deltalens'; float sums depend on the order of the additions), the rest exactly.
fn same_rows(a: &[Vec<String>], b: &[Vec<String>]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} rows vs {}", a.len(), b.len()));
    }
    for (r, (x, y)) in a.iter().zip(b).enumerate() {
        if x.len() != y.len() {
            return Err(format!("row {r}: {} columns vs {}", x.len(), y.len()));
        }
        for (p, q) in x.iter().zip(y) {
            let ok = p == q
                || match (p.parse::<f64>(), q.parse::<f64>()) {
                    (Ok(p), Ok(q)) => p == q || (p - q).abs() <= 1e-9 * p.abs().max(q.abs()),
                    _ => false,
                };
            if !ok {
                return Err(format!("row {r}: {x:?} vs {y:?}"));
            }
        }
    }
    Ok(())
}

/// Aggregate queries over a table's columns, with `{c}` quoting a column name.
fn queries(schema: &arrow_schema::Schema, q: &dyn Fn(&str) -> String) -> Vec<String> {
    let cols: Vec<(String, arrow_schema::DataType)> = schema
        .fields()
        .iter()
        .filter(|f| !f.name().contains(['`', '"']))
        .map(|f| (q(f.name()), f.data_type().clone()))
        .collect();
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
    let mut out = vec!["SELECT COUNT(*) FROM {t}".to_string()];
    for n in &nums {
        out.push(format!(
            "SELECT COUNT({n}), SUM({n}), MIN({n}), MAX({n}), AVG({n}) FROM {{t}}"
        ));
        for k in &keys {
            out.push(format!(
                "SELECT {k}, COUNT(*), SUM({n}), MIN({n}), MAX({n}) FROM {{t}} GROUP BY {k}"
            ));
        }
    }
    for k in &keys {
        out.push(format!(
            "SELECT {k}, COUNT(*) FROM {{t}} WHERE {k} IS NOT NULL GROUP BY {k}"
        ));
    }
    out
}

#[test]
fn aggregates_through_datafusion_equal_deltalens_sql_answers() {
    let rt = rt();
    let mut tables = vec![
        ("demo".to_string(), fixtures_dir().join("demo")),
        (
            "partitioned".to_string(),
            fixtures_dir().join("partitioned"),
        ),
    ];
    tables.extend(corpus_tables());
    let (mut n_tables, mut n_queries) = (0, 0);
    let mut problems = Vec::new();
    for (name, dir) in tables {
        let table = open_local(&dir);
        let Ok(info) = rt.block_on(table.version_info(VersionSpec::Latest)) else {
            continue;
        };
        let Ok(snap) = rt.block_on(info.snapshot()) else {
            continue;
        };
        let Ok(scan) = snap.scan(Default::default()) else {
            continue;
        };
        let schema = scan.schema();
        n_tables += 1;
        let url = quote(&dir.to_string_lossy());
        let ours = queries(&schema, &|c| format!("`{c}`"));
        let theirs = queries(&schema, &|c| format!("\"{c}\""));
        let ctx = ctx(4);
        for (a, d) in ours.iter().zip(&theirs) {
            let a = a.replace("{t}", &format!("'{url}'"));
            let d = d.replace("{t}", &format!("'{url}'"));
            let Ok(query) = parse_sql(&a) else { continue };
            let Ok(want) = rt.block_on(execute_limited(&query, &table, Limits::default())) else {
                continue;
            };
            n_queries += 1;
            match rt.block_on(sql(&ctx, &d)) {
                Ok(got) => {
                    let (mut g, mut w) = (cells(&got), cells(&want.batches));
                    g.sort();
                    w.sort();
                    if let Err(e) = same_rows(&g, &w) {
                        problems.push(format!("{name}: {d}: {e}"));
                    }
                }
                Err(e) => problems.push(format!("{name}: {d}: {e}")),
            }
        }
    }
    println!(
        "datafusion: {n_queries} aggregate queries over {n_tables} tables equal to deltalens' own SQL answers"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(n_queries >= 20, "only {n_queries} queries compared");
}

fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    if delta_scan(plan.as_ref()).is_some() {
        return Some(Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

/// The Delta scans in a physical plan.
fn scans(plan: &Arc<dyn ExecutionPlan>) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    if let Some(s) = delta_scan(plan.as_ref()) {
        let files = s.splits().iter().map(|s| s.files.len()).sum();
        let line = displayable(plan.as_ref()).one_line().to_string();
        out.push((s.splits().len(), files, line));
    }
    for c in plan.children() {
        out.extend(scans(c));
    }
    out
}

#[test]
fn filters_prune_files_and_keep_the_answer() {
    let rt = rt();
    let demo = fixtures_dir().join("demo");
    let url = quote(&demo.to_string_lossy());
    let ctx = ctx(4);
    let plan_of = |q: &str| {
        rt.block_on(async {
            ctx.sql(q)
                .await
                .unwrap()
                .create_physical_plan()
                .await
                .unwrap()
        })
    };
    let all = scans(&plan_of(&format!("SELECT brand, price FROM '{url}'")));
    let pruned = scans(&plan_of(&format!(
        "SELECT brand, price FROM '{url}' WHERE event_date = '2019-10-01'"
    )));
    assert_eq!(all.len(), 1);
    assert!(
        pruned[0].1 < all[0].1,
        "partition pruning: {pruned:?} vs {all:?}"
    );
    assert!(all[0].0 > 1, "several splits: {all:?}");
    // the answer with the filter pushed equals deltalens' own
    let table = open_local(&demo);
    for (ours, theirs) in [
        (
            "SELECT brand, COUNT(*) FROM '{u}' WHERE event_date = '2019-10-01' AND price > 5 GROUP BY brand",
            "SELECT brand, COUNT(*) FROM '{u}' WHERE event_date = '2019-10-01' AND price > 5 GROUP BY brand",
        ),
        (
            "SELECT COUNT(*) FROM '{u}' WHERE brand IN ('nars', 'runail') OR price BETWEEN 1 AND 2",
            "SELECT COUNT(*) FROM '{u}' WHERE brand IN ('nars', 'runail') OR price BETWEEN 1 AND 2",
        ),
        (
            "SELECT COUNT(*) FROM '{u}' WHERE NOT (brand LIKE 'n%') AND brand IS NOT NULL",
            "SELECT COUNT(*) FROM '{u}' WHERE NOT (brand LIKE 'n%') AND brand IS NOT NULL",
        ),
    ] {
        let want = rt
            .block_on(execute_limited(
                &parse_sql(&ours.replace("{u}", &url)).unwrap(),
                &table,
                Limits::default(),
            ))
            .unwrap();
        let got = rt
            .block_on(sql(&ctx, &theirs.replace("{u}", &url)))
            .unwrap();
        let (mut g, mut w) = (cells(&got), cells(&want.batches));
        g.sort();
        w.sort();
        same_rows(&g, &w).unwrap_or_else(|e| panic!("{theirs}: {e}"));
        assert!(!g.is_empty());
    }
    // LIMIT without a filter reaches the scan; with a filter it stays above it
    let got = rt
        .block_on(sql(&ctx, &format!("SELECT * FROM '{url}' LIMIT 7")))
        .unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
}

#[test]
fn table_changes_equals_the_corpus_change_feeds() {
    let Some(dir) = conformance_dir() else {
        eprintln!("SKIPPED: conformance corpus not found");
        return;
    };
    let rt = rt();
    let mut checked = 0;
    let mut names: Vec<_> = std::fs::read_dir(dir.join("expected"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| dir.join("expected").join(n).join("cdf.json").exists())
        .collect();
    names.sort();
    let mut problems = Vec::new();
    for name in names {
        let exp = dir.join("expected").join(&name);
        let cdf = read_json(&exp.join("cdf.json"));
        let (from, to) = (
            cdf["start_version"].as_u64().unwrap(),
            cdf["end_version"].as_u64().unwrap(),
        );
        let table_dir = dir.join("tables").join(&name);
        let info = rt
            .block_on(open_local(&table_dir).version_info(VersionSpec::Version(to)))
            .unwrap();
        let mut fields = info.schema.fields().to_vec();
        for (n, t) in [("_change_type", "string"), ("_commit_version", "long")] {
            fields.push(StructField {
                name: n.into(),
                data_type: DataType::Primitive(t.into()),
                nullable: true,
                metadata: Default::default(),
            });
        }
        let list = fields
            .iter()
            .map(|f| format!("\"{}\"", f.name))
            .collect::<Vec<_>>()
            .join(", ");
        let q = format!(
            "SELECT {list} FROM table_changes('{}', {from}, {to})",
            quote(&table_dir.to_string_lossy())
        );
        match rt.block_on(sql(&ctx(2), &q)) {
            Ok(batches) => {
                let mut got = canonical_lines(&batches, &fields);
                got.sort();
                let mut want: Vec<String> =
                    std::fs::read_to_string(exp.join(cdf["rows_file"].as_str().unwrap()))
                        .unwrap()
                        .lines()
                        .map(|l| format!("{l}\n"))
                        .collect();
                want.sort();
                if got != want {
                    problems.push(format!("{name}: {} rows vs {}", got.len(), want.len()));
                }
                checked += 1;
            }
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    println!("datafusion: table_changes equal to {checked} corpus change feeds");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 3);
    // clear errors for bad ranges and arguments
    let demo = quote(&fixtures_dir().join("demo").to_string_lossy());
    for (q, says) in [
        (
            format!("SELECT * FROM table_changes('{demo}', 5, 2)"),
            "after the end version",
        ),
        (
            format!("SELECT * FROM table_changes('{demo}', -1)"),
            "version number",
        ),
        (
            format!("SELECT * FROM table_changes('{demo}')"),
            "arguments",
        ),
        ("SELECT * FROM table_changes(1, 2)".to_string(), "location"),
    ] {
        let e = rt.block_on(sql(&ctx(2), &q)).unwrap_err();
        assert!(e.contains(says), "{q}: {e}");
    }
}

#[test]
fn joins_and_window_functions_agree_with_answers_computed_another_way() {
    let rt = rt();
    let url = quote(&fixtures_dir().join("demo").to_string_lossy());
    let table = open_local(&fixtures_dir().join("demo"));
    let ctx = ctx(4);
    let counts = rt
        .block_on(execute_limited(
            &parse_sql(&format!(
                "SELECT brand, COUNT(*) FROM '{url}' WHERE brand IS NOT NULL GROUP BY brand"
            ))
            .unwrap(),
            &table,
            Limits::default(),
        ))
        .unwrap();
    let mut per_brand: Vec<(String, i64)> = cells(&counts.batches)
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    // a self-join on brand: the sum of squares of the counts
    let want: i64 = per_brand.iter().map(|(_, c)| c * c).sum();
    let got = rt
        .block_on(sql(
            &ctx,
            &format!("SELECT COUNT(*) FROM '{url}' a JOIN '{url}' b ON a.brand = b.brand"),
        ))
        .unwrap();
    assert_eq!(cells(&got)[0][0], want.to_string());
    // a window: each brand's rank by count (ties share a rank, as RANK does)
    per_brand.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let got = rt
        .block_on(sql(
            &ctx,
            &format!(
                "SELECT brand, n, RANK() OVER (ORDER BY n DESC) FROM \
                 (SELECT brand, COUNT(*) AS n FROM '{url}' WHERE brand IS NOT NULL GROUP BY brand) \
                 ORDER BY n DESC, brand"
            ),
        ))
        .unwrap();
    let rows = cells(&got);
    assert_eq!(rows.len(), per_brand.len());
    for (i, (row, (brand, n))) in rows.iter().zip(&per_brand).enumerate() {
        let rank = per_brand.iter().position(|(_, c)| c == n).unwrap() + 1;
        assert_eq!(
            row,
            &vec![brand.clone(), n.to_string(), rank.to_string()],
            "row {i}"
        );
    }
    // time travel: a version as a table option and as Spark's @v suffix agree
    let v1 = rt
        .block_on(sql(&ctx, &format!("SELECT COUNT(*) FROM '{url}@v1'")))
        .unwrap();
    rt.block_on(sql(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE demo1 STORED AS DELTA LOCATION '{url}' OPTIONS ('version' '1')"
        ),
    ))
    .unwrap();
    let opt = rt
        .block_on(sql(&ctx, "SELECT COUNT(*) FROM demo1"))
        .unwrap();
    assert_eq!(cells(&v1), cells(&opt));
    let latest = rt
        .block_on(sql(&ctx, &format!("SELECT COUNT(*) FROM '{url}'")))
        .unwrap();
    assert_ne!(cells(&v1), cells(&latest), "version 1 is not the latest");
}

#[test]
fn plans_shipped_through_the_codec_give_the_same_answers_without_credentials() {
    let rt = rt();
    let url = quote(&fixtures_dir().join("demo").to_string_lossy());
    let secret = "deltalens-test-secret-not-to-ship";
    let ctx = context(
        SessionConfig::new().with_target_partitions(3),
        &[("aws_secret_access_key".to_string(), secret.to_string())],
    );
    for q in [
        format!("SELECT brand, COUNT(*), SUM(price) FROM '{url}' GROUP BY brand ORDER BY brand"),
        format!(
            "SELECT * FROM '{url}' WHERE event_date = DATE '2019-10-02' ORDER BY event_time, product_id LIMIT 20"
        ),
        format!(
            "SELECT _change_type, COUNT(*) FROM table_changes('{url}', 0) GROUP BY _change_type ORDER BY 1"
        ),
    ] {
        let (here, shipped, bytes) = rt.block_on(async {
            let plan = ctx
                .sql(&q)
                .await
                .unwrap()
                .create_physical_plan()
                .await
                .unwrap();
            let here = collect(Arc::clone(&plan), ctx.task_ctx()).await.unwrap();
            let bytes = physical_plan_to_bytes_with_extension_codec(plan, &DeltaCodec).unwrap();
            // another session, as an executor: it opens the table from the location
            let executor = SessionContext::new();
            let back = physical_plan_from_bytes_with_extension_codec(
                &bytes,
                &executor.task_ctx(),
                &DeltaCodec,
            )
            .unwrap();
            let shipped = collect(back, executor.task_ctx()).await.unwrap();
            (here, shipped, bytes)
        });
        assert_eq!(here, shipped, "{q}");
        assert!(here.iter().map(|b| b.num_rows()).sum::<usize>() > 0, "{q}");
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(secret), "the plan carries a credential");
        assert!(
            text.contains("\"location\""),
            "the plan carries the table's location"
        );
    }
    // logical plans too (what a Ballista client sends its scheduler): tables travel as
    // their location and version, change feeds as their range, opened where scanned
    for q in [
        format!(
            "SELECT brand, COUNT(*) FROM '{url}@v2' WHERE price > 3 GROUP BY brand ORDER BY brand"
        ),
        format!("SELECT COUNT(*) FROM table_changes('{url}', 1, 3)"),
        format!(
            "SELECT a.brand, COUNT(*) FROM '{url}' a JOIN '{url}@v1' b ON a.product_id = b.product_id GROUP BY 1 ORDER BY 1"
        ),
    ] {
        let (here, shipped, bytes) = rt.block_on(async {
            let df = ctx.sql(&q).await.unwrap();
            let plan = df.logical_plan().clone();
            let here = df.collect().await.unwrap();
            let bytes =
                logical_plan_to_bytes_with_extension_codec(&plan, &DeltaLogicalCodec).unwrap();
            let scheduler = SessionContext::new();
            let back = logical_plan_from_bytes_with_extension_codec(
                &bytes,
                &scheduler.task_ctx(),
                &DeltaLogicalCodec,
            )
            .unwrap();
            let shipped = scheduler
                .execute_logical_plan(back)
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            (here, shipped, bytes)
        });
        assert_eq!(here, shipped, "{q}");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "the plan carries a credential"
        );
    }
    // a hostile encoded node is refused with a clear error, not a panic
    let executor = SessionContext::new();
    use deltalens_datafusion::datafusion_proto::physical_plan::{
        DefaultPhysicalProtoConverter, PhysicalExtensionCodec,
    };
    // a scan node whose location points this process' credentials at another host, a
    // schema that is not one, too many splits: refused, naming what
    let plan = rt.block_on(async {
        ctx.sql(&format!("SELECT brand FROM '{url}'"))
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap()
    });
    let scan = find_scan(&plan).unwrap();
    let mut buf = Vec::new();
    DeltaCodec
        .try_encode(scan, &mut buf, &DefaultPhysicalProtoConverter {})
        .unwrap();
    let good: Value = deltalens_json::from_slice(&buf).unwrap();
    let tampered = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        let bytes = serde_json::to_vec(&v).unwrap();
        DeltaCodec
            .try_decode(
                &bytes,
                &[],
                &executor.task_ctx(),
                &DefaultPhysicalProtoConverter {},
            )
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = tampered(&|v| {
        v["Scan"]["location"]["options"] =
            serde_json::json!([["uc_endpoint", "https://evil.example"]])
    });
    assert!(e.contains("uc_endpoint"), "{e}");
    let e = tampered(&|v| v["Scan"]["schema"] = Value::from("ffffffff0100000000"));
    assert!(e.contains("schema"), "{e}");
    let e = tampered(&|v| {
        let one = v["Scan"]["groups"][0].clone();
        v["Scan"]["groups"] = Value::Array(vec![one; 4097]);
    });
    assert!(e.contains("4096"), "{e}");
    // a change feed is one unit of one partition, over a closed range: a plan of many
    // (each replaying the log on a thread of its own) is refused
    let feed = serde_json::json!({"Changes": {"from": 0, "to": 1}});
    let e = tampered(&|v| v["Scan"]["groups"] = serde_json::json!([[feed], [feed]]));
    assert!(e.contains("change feed"), "{e}");
    let e = tampered(&|v| {
        v["Scan"]["groups"] = serde_json::json!([[{"Changes": {"from": 0, "to": null}}]])
    });
    assert!(e.contains("change feed"), "{e}");
    for bad in [&b"{}"[..], b"not json", b"{\"Scan\":{\"location\":1}}"] {
        let e = DeltaCodec
            .try_decode(
                bad,
                &[],
                &executor.task_ctx(),
                &DefaultPhysicalProtoConverter {},
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("Delta scan"), "{e}");
    }
}

#[test]
fn partitioned_execution_equals_one_partition() {
    // DataFusion's own partitioned execution (target_partitions), the fallback for a
    // Ballista cluster: the same GROUP BY with 1 and 4 partitions
    let rt = rt();
    let url = quote(&fixtures_dir().join("demo").to_string_lossy());
    let q = format!(
        "SELECT brand, COUNT(*), SUM(price), MIN(event_time), MAX(event_time) FROM '{url}' GROUP BY brand ORDER BY brand"
    );
    let one = rt.block_on(sql(&ctx(1), &q)).unwrap();
    let four = rt.block_on(sql(&ctx(4), &q)).unwrap();
    same_rows(&cells(&one), &cells(&four)).unwrap();
    assert!(cells(&one).len() > 3);
}

#[test]
fn a_join_finishes_with_few_blocking_threads() {
    // the CLI's runtime: 2 workers, at most 4 blocking threads. A hash join holds both
    // sides' scans open while the local store reads files on blocking threads: scans
    // that held blocking threads themselves deadlocked there (found by the CLI test).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(4)
            .enable_all()
            .build()
            .unwrap();
        let url = quote(&fixtures_dir().join("demo").to_string_lossy());
        let r = rt.block_on(sql(
            &ctx(4),
            &format!(
                "SELECT COUNT(*) FROM '{url}@v1' a JOIN '{url}' b USING (product_id, event_time, user_session)"
            ),
        ));
        let _ = tx.send(r);
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the join did not finish in 120 s")
        .unwrap();
    assert!(cells(&got)[0][0].parse::<i64>().unwrap() > 0);
}

/// The Delta scan in `plan` as DataFusion's file scan, whose file groups are the splits.
fn file_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<FileScanConfig> {
    if let Some(d) = plan.downcast_ref::<DataSourceExec>() {
        let source: &dyn std::any::Any = d.data_source().as_ref();
        return source.downcast_ref::<FileScanConfig>().cloned();
    }
    plan.children().into_iter().find_map(file_scan)
}

#[test]
fn a_scan_restricted_to_some_splits_reads_only_those() {
    // a Ballista scheduler gives each task a slice of a stage's partitions and narrows
    // the stage's file scans to that slice's file groups (`restrict_plan_to_partitions`):
    // a Delta scan is such a file scan, one file group per split, so that each task reads
    // its own splits, also after the plan has travelled through the codec
    let rt = rt();
    let url = quote(&fixtures_dir().join("partitioned").to_string_lossy());
    let c = ctx(4);
    let plan = rt
        .block_on(async {
            c.sql(&format!("SELECT * FROM '{url}'"))
                .await?
                .create_physical_plan()
                .await
        })
        .unwrap();
    let config =
        file_scan(&plan).expect("the Delta scan is a DataSourceExec over a FileScanConfig");
    let groups = config.file_groups.clone();
    assert!(groups.len() > 1, "{} file groups", groups.len());
    let count = |plan: Arc<dyn ExecutionPlan>| -> usize {
        let batches = rt.block_on(collect(plan, c.task_ctx())).unwrap();
        batches.iter().map(|b| b.num_rows()).sum()
    };
    let total = count(Arc::clone(&plan));
    // a partition of the scan run on its own reads its split only (an engine may run
    // each partition of a plan in another process: none may take its siblings' splits)
    let scan = find_scan(&plan).unwrap();
    let alone = |p: usize| -> usize {
        let stream = scan.execute(p, c.task_ctx()).unwrap();
        let batches: Vec<_> = rt
            .block_on(futures::TryStreamExt::try_collect(stream))
            .unwrap();
        batches
            .iter()
            .map(|b: &deltalens_datafusion::datafusion::arrow::array::RecordBatch| b.num_rows())
            .sum()
    };
    let each: Vec<usize> = (0..groups.len()).map(alone).collect();
    assert_eq!(
        each.iter().sum::<usize>(),
        total,
        "partitions run alone: {each:?}"
    );
    let mut slices = 0;
    for (i, g) in groups.iter().enumerate() {
        let restricted: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(
            FileScanConfigBuilder::from(config.clone())
                .with_file_groups(vec![g.clone()])
                .build(),
        );
        assert_eq!(restricted.output_partitioning().partition_count(), 1);
        let bytes =
            physical_plan_to_bytes_with_extension_codec(Arc::clone(&restricted), &DeltaCodec)
                .unwrap();
        let shipped =
            physical_plan_from_bytes_with_extension_codec(&bytes, &c.task_ctx(), &DeltaCodec)
                .unwrap();
        let (here, there) = (count(restricted), count(shipped));
        assert_eq!(here, there, "split {i} here and shipped");
        assert_eq!(here, each[i], "split {i} restricted and run alone");
        slices += here;
    }
    assert_eq!(slices, total, "the splits' rows, read one split at a time");
    assert!(total > 0);
    println!(
        "datafusion: {} splits restricted one at a time read {slices} rows, as the whole scan",
        groups.len()
    );
}

//! A Ballista scheduler and two executors (Ballista 55, in this process, on localhost)
//! answer queries over Delta tables as one DataFusion process does: the client plans
//! against deltalens' tables, its logical plan reaches the scheduler through
//! `DeltaLogicalCodec`, the scheduler plans the splits, and each task's Delta scan reaches
//! an executor through `DeltaCodec`, which opens the table from its location.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ballista::prelude::SessionConfigExt;
use ballista_core::extension::SessionStateExt;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::{SessionConfig, SessionContext};
use deltalens_ballista_tests::{LogicalCodec, PhysicalCodec};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The tables and their GROUP BY: the demo fixture always, and the bench table
/// `DELTALENS_BALLISTA_TABLE` names (scripts/ballista-test: scan5m, 5,000,000 rows).
fn cases() -> Vec<(String, String)> {
    let demo = root().join("tests/fixtures/demo");
    let mut out = vec![(
        "demo".to_string(),
        format!(
            "SELECT brand, COUNT(*), SUM(price), MIN(event_time), MAX(event_time) FROM '{}' GROUP BY brand ORDER BY brand NULLS FIRST",
            demo.display()
        ),
    )];
    if let Ok(t) = std::env::var("DELTALENS_BALLISTA_TABLE") {
        out.push((
            t.clone(),
            format!(
                "SELECT category, COUNT(*), SUM(qty), AVG(price), MIN(ts), MAX(ts) FROM '{t}' GROUP BY category ORDER BY category"
            ),
        ));
    }
    out
}

fn cells(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
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

/// Equal rows; doubles within 1e-9 relative (their sums depend on the order of the
/// additions, which differs between partitions and executors).
fn same(a: &[Vec<String>], b: &[Vec<String>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| {
                    p == q
                        || matches!((p.parse::<f64>(), q.parse::<f64>()),
                            (Ok(p), Ok(q)) if (p - q).abs() <= 1e-9 * p.abs().max(q.abs()))
                })
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduler_and_two_executors_answer_as_one_process() {
    let partitions: usize = std::env::var("DELTALENS_BALLISTA_PARTITIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(partitions)
        .with_ballista_logical_extension_codec(Arc::new(LogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(PhysicalCodec::default()));
    let state = deltalens_datafusion::context(config, &[]).state();
    let addr = ballista_scheduler::standalone::new_standalone_scheduler_from_state(&state)
        .await
        .unwrap();
    let url = format!("http://localhost:{}", addr.port());
    let executors: usize = std::env::var("DELTALENS_BALLISTA_EXECUTORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    for _ in 0..executors {
        let deadline = Instant::now() + Duration::from_secs(30);
        let scheduler = loop {
            match SchedulerGrpcClient::connect(url.clone()).await {
                Ok(s) => break s,
                Err(e) if Instant::now() < deadline => {
                    eprintln!("waiting for the scheduler: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("the scheduler at {url} did not answer in 30 s: {e}"),
            }
        };
        ballista_executor::new_standalone_executor_from_state(scheduler, 2, &state)
            .await
            .unwrap();
    }
    let cluster = SessionContext::new_with_state(state.clone().upgrade_for_ballista(url).unwrap());
    let local = deltalens_datafusion::context(SessionConfig::new().with_target_partitions(4), &[]);
    for (name, sql) in cases() {
        let plan = cluster
            .sql(&sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        assert_eq!(
            plan.name(),
            "DistributedQueryExec",
            "{name}: not planned for the cluster"
        );
        let t = Instant::now();
        let on_cluster = cluster.sql(&sql).await.unwrap().collect().await.unwrap();
        let cluster_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let here = local.sql(&sql).await.unwrap().collect().await.unwrap();
        let local_s = t.elapsed().as_secs_f64();
        let (c, h) = (cells(&on_cluster), cells(&here));
        assert!(
            same(&c, &h),
            "{name}: the cluster's answer\n{c:?}\ndiffers from one process'\n{h:?}"
        );
        assert!(!c.is_empty());
        println!(
            "ballista: {name}: {} groups equal on a scheduler + {executors} executors at {partitions} partitions ({cluster_s:.2} s) and in one process ({local_s:.2} s)",
            c.len()
        );
    }
}

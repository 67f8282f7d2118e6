//! Fan-out (`deltalens_api::fan_out`) through a wire like a worker's: each split goes out
//! as JSON, is answered by `execute_partial` against a freshly opened table, and comes
//! back as Arrow IPC (`Partial::to_ipc` / `from_ipc`). Answers equal the single-process
//! answer; transient failures of a split are retried; a split that keeps failing fails
//! the query naming it (502), a budget inside a split is not retried (413); the
//! fan-out's sub-request budget is named and holds, retries included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use deltalens_api::{
    ApiError, FanOutOptions, Limits, Partial, execute_limited, execute_partial, fan_out, parse_sql,
};
use deltalens_core::scan::ScanOptions;
use deltalens_core::{PlanOptions, ScanPlan, Split, VersionSpec};
use deltalens_storage::StorageError;
use deltalens_tests::{fixtures_dir, open_local, runtime};

fn plan(dir: &Path, target_bytes: u64) -> ScanPlan {
    let rt = runtime();
    let info = rt
        .block_on(open_local(dir).version_info(VersionSpec::Latest))
        .unwrap();
    rt.block_on(info.plan(
        &ScanOptions::default(),
        &PlanOptions {
            target_bytes,
            ..Default::default()
        },
    ))
    .unwrap()
}

/// One split answered over the "wire": JSON in, IPC out.
async fn answer(dir: &Path, sql: &str, split: &Split, limits: Limits) -> Result<Partial, ApiError> {
    let body = serde_json::to_vec(split).unwrap();
    let split: Split = deltalens_json::from_slice(&body).unwrap();
    let q = parse_sql(sql)?;
    let p = execute_partial(&q, &split, &open_local(dir), limits).await?;
    Partial::from_ipc(&p.to_ipc()?, 1_000_000)
}

fn flaky() -> ApiError {
    ApiError::Core(deltalens_core::Error::Storage(StorageError::Unreachable {
        path: "worker".into(),
        operation: "get",
        message: "connection reset (injected)".into(),
    }))
}

const QUERIES: &[&str] = &[
    "SELECT COUNT(*) FROM 't'",
    "SELECT event_type, COUNT(*), SUM(price), AVG(price), MIN(event_time), MAX(brand) FROM 't' GROUP BY event_type ORDER BY event_type",
    "SELECT brand, SUM(product_id) FROM 't' WHERE price > 100 GROUP BY brand ORDER BY 2 DESC, brand LIMIT 3",
    "SELECT event_time, price, product_id FROM 't' ORDER BY price DESC, event_time, product_id LIMIT 5",
];

#[test]
fn fanned_out_answers_equal_one_process_with_retries() {
    let rt = runtime();
    let dir = fixtures_dir().join("demo");
    let p = plan(&dir, 1);
    assert!(p.splits.len() >= 4, "{} splits", p.splits.len());
    let mut retried = 0;
    for sql in QUERIES {
        let q = parse_sql(sql).unwrap();
        let whole = rt
            .block_on(execute_limited(&q, &open_local(&dir), Limits::default()))
            .unwrap();
        // every other split fails its first attempt; each call is told the plan's size
        // (a coordinator shares its budgets over it)
        let tries: Mutex<HashMap<usize, u32>> = Mutex::default();
        let call = |s: &Split, splits: usize| {
            assert_eq!(splits, p.splits.len());
            let n = {
                let mut t = tries.lock().unwrap();
                let n = t.entry(s.id).or_default();
                *n += 1;
                *n
            };
            let (dir, s) = (dir.clone(), s.clone());
            async move {
                if s.id % 2 == 0 && n == 1 {
                    return Err(flaky());
                }
                answer(&dir, sql, &s, Limits::default()).await
            }
        };
        let out = rt
            .block_on(fan_out(&q, &p, &FanOutOptions::default(), None, call))
            .unwrap();
        assert_eq!(out.batches[0], whole.batches[0], "{sql}");
        assert_eq!(out.version, whole.version);
        retried += tries.lock().unwrap().values().filter(|n| **n > 1).count();
    }
    assert!(retried >= QUERIES.len() * 2, "{retried} retried splits");
    println!(
        "fan-out: {} queries over {} splits each, {retried} splits answered on their second attempt, every answer equal to one process",
        QUERIES.len(),
        p.splits.len()
    );
}

#[test]
fn a_split_that_keeps_failing_fails_the_query_naming_it() {
    let rt = runtime();
    let dir = fixtures_dir().join("demo");
    let p = plan(&dir, 1);
    let q = parse_sql(QUERIES[1]).unwrap();
    let calls = Mutex::new(0u32);
    let call = |s: &Split, _splits: usize| {
        *calls.lock().unwrap() += 1;
        let (dir, s) = (dir.clone(), s.clone());
        async move {
            if s.id == 2 {
                return Err(flaky());
            }
            answer(&dir, QUERIES[1], &s, Limits::default()).await
        }
    };
    let options = FanOutOptions {
        attempts: 3,
        ..Default::default()
    };
    let e = rt
        .block_on(fan_out(&q, &p, &options, None, call))
        .unwrap_err();
    assert_eq!(e.status(), 502);
    assert_eq!(e.code(), "split_failed");
    let m = e.to_string();
    assert!(
        m.contains(&format!("split 2 of {}", p.splits.len())) && m.contains("3 attempt"),
        "{m}"
    );
    assert!(m.contains("connection reset"), "{m}");

    // a budget inside a split: not retried, 413 with the budget's code (a group per row:
    // more than 5 groups in any split)
    let tight = Limits {
        max_rows_buffered: Some(5),
        ..Default::default()
    };
    let many = "SELECT event_time, COUNT(*) FROM 't' GROUP BY event_time";
    let q = parse_sql(many).unwrap();
    let tries = Mutex::new(0u32);
    let call = |s: &Split, _splits: usize| {
        *tries.lock().unwrap() += 1;
        let (dir, s) = (dir.clone(), s.clone());
        async move { answer(&dir, many, &s, tight).await }
    };
    let one = FanOutOptions {
        concurrency: 1,
        ..Default::default()
    };
    let e = rt.block_on(fan_out(&q, &p, &one, None, call)).unwrap_err();
    assert_eq!(e.status(), 413, "{e}");
    assert!(e.code().ends_with("_budget_exceeded"), "{}", e.code());
    assert_eq!(
        *tries.lock().unwrap(),
        1,
        "a budget is not retried, and the fan-out stops"
    );

    // more splits than one query may send: refused before any is sent
    let few = FanOutOptions {
        max_requests: 2,
        ..Default::default()
    };
    let sent = Mutex::new(0u32);
    let call = |_: &Split, _splits: usize| {
        *sent.lock().unwrap() += 1;
        async { Err::<Partial, _>(flaky()) }
    };
    let e = rt.block_on(fan_out(&q, &p, &few, None, call)).unwrap_err();
    assert!(e.to_string().contains("more than the 2"), "{e}");
    assert_eq!(*sent.lock().unwrap(), 0);

    // retries stop when the fan-out's sub-requests are spent: every split fails its
    // first attempt, and 5 splits + 5 retries do not fit in 7
    let budget = FanOutOptions {
        max_requests: 7,
        concurrency: 1,
        ..Default::default()
    };
    let tries: Mutex<HashMap<usize, u32>> = Mutex::default();
    let call = |s: &Split, _splits: usize| {
        let first = {
            let mut t = tries.lock().unwrap();
            let n = t.entry(s.id).or_default();
            *n += 1;
            *n == 1
        };
        let (dir, s) = (dir.clone(), s.clone());
        async move {
            if first {
                return Err(flaky());
            }
            answer(&dir, QUERIES[1], &s, Limits::default()).await
        }
    };
    let e = rt
        .block_on(fan_out(&q, &p, &budget, None, call))
        .unwrap_err();
    assert_eq!(e.status(), 413, "{e}");
    assert_eq!(e.code(), "subrequests_budget_exceeded");
    assert!(e.to_string().contains("split 3"), "{e}");
    assert_eq!(tries.lock().unwrap().values().sum::<u32>(), 7);

    // the rows budget holds for the merged answer
    let q = parse_sql(QUERIES[3].trim_end_matches(" LIMIT 5")).unwrap();
    let call = |s: &Split, _splits: usize| {
        let (dir, s) = (dir.clone(), s.clone());
        async move {
            let sql = QUERIES[3].trim_end_matches(" LIMIT 5");
            answer(&dir, sql, &s, Limits::default()).await
        }
    };
    let e = rt
        .block_on(fan_out(&q, &p, &FanOutOptions::default(), Some(10), call))
        .unwrap_err();
    assert_eq!(e.status(), 413);
}

#[test]
fn partial_answers_from_the_wire_are_checked() {
    let rt = runtime();
    let dir = fixtures_dir().join("demo");
    let p = plan(&dir, 1);
    let q = parse_sql("SELECT event_time, price FROM 't'").unwrap();
    let part = rt
        .block_on(execute_partial(
            &q,
            &p.splits[0],
            &open_local(&dir),
            Limits::default(),
        ))
        .unwrap();
    let bytes = part.to_ipc().unwrap();
    let rows = part.batch().num_rows();
    assert!(rows > 1);
    assert_eq!(
        Partial::from_ipc(&bytes, rows).unwrap().batch(),
        part.batch()
    );
    let e = Partial::from_ipc(&bytes, rows - 1).unwrap_err().to_string();
    assert!(e.contains(&format!("more than {}", rows - 1)), "{e}");
    assert!(Partial::from_ipc(&bytes[..bytes.len() / 2], rows).is_err());
    assert!(Partial::from_ipc(b"not arrow", rows).is_err());
    // a stream without the kind is no partial state
    let mut plain = Vec::new();
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(&mut plain, &part.batch().schema()).unwrap();
    w.write(part.batch()).unwrap();
    w.finish().unwrap();
    drop(w);
    assert!(
        Partial::from_ipc(&plain, rows)
            .unwrap_err()
            .to_string()
            .contains("not a partial")
    );
}

/// The worker's protocol end to end, without the worker: the coordinator decides with
/// `respond_fanned_out`, each split goes out as `POST /v1/partial`'s body, is parsed by
/// `parse_partial` and answered by `respond` (Arrow IPC), and the merged answer's bytes
/// equal the unfanned answer's.
#[test]
fn the_partial_route_and_the_fan_out_decision() {
    use deltalens_api::{
        ApiRequest, FanOutPolicy, PARTIAL_CONTENT_TYPE, parse_partial, respond, respond_fanned_out,
    };
    use deltalens_present::Format;
    let rt = runtime();
    let dir = fixtures_dir().join("demo");
    let table = open_local(&dir);
    let policy = FanOutPolicy {
        min_bytes: 1,
        width: 3,
        options: FanOutOptions::default(),
    };
    let calls = Mutex::new(0u32);
    for sql in QUERIES {
        let q = parse_sql(sql).unwrap();
        let call = |s: &Split, _splits: usize| {
            *calls.lock().unwrap() += 1;
            let body = serde_json::to_vec(&serde_json::json!({ "sql": sql, "split": s })).unwrap();
            let dir = dir.clone();
            async move {
                let req = parse_partial(&body)?;
                let a = respond(req, &open_local(&dir), Limits::default(), 0).await?;
                assert_eq!(a.content_type, PARTIAL_CONTENT_TYPE);
                Partial::from_ipc(&a.body, 1_000_000)
            }
        };
        let fanned = rt
            .block_on(respond_fanned_out(
                &q,
                Format::Jsonl,
                &table,
                Limits::default(),
                &policy,
                call,
            ))
            .unwrap()
            .expect("fanned out");
        let (fanned, splits) = fanned;
        assert_eq!(splits, 3);
        let whole = rt
            .block_on(respond(
                ApiRequest::Rows {
                    query: Box::new(q.clone()),
                    format: Format::Jsonl,
                },
                &table,
                Limits::default(),
                0,
            ))
            .unwrap();
        assert_eq!(
            String::from_utf8(fanned.body).unwrap(),
            String::from_utf8(whole.body).unwrap(),
            "{sql}"
        );
        assert_eq!((fanned.version, fanned.rows), (whole.version, whole.rows));
    }
    assert_eq!(*calls.lock().unwrap(), 3 * QUERIES.len() as u32);
    // a small table is not fanned out
    let big = FanOutPolicy {
        min_bytes: u64::MAX,
        ..policy
    };
    let q = parse_sql(QUERIES[0]).unwrap();
    let none = rt
        .block_on(respond_fanned_out(
            &q,
            Format::Jsonl,
            &table,
            Limits::default(),
            &big,
            |_: &Split, _: usize| async { Err::<Partial, _>(flaky()) },
        ))
        .unwrap();
    assert!(none.is_none());
    // hostile bodies: not JSON, unknown fields, a change feed, a split escaping the table
    assert!(parse_partial(b"nope").is_err());
    assert!(parse_partial(br#"{"sql": "SELECT 1", "split": {}, "x": 1}"#).is_err());
    let p = plan(&dir, 1);
    // a scan's parameters instead of SQL; neither or both refused
    let scan = serde_json::json!({
        "scan": [["table", "t"], ["columns", "brand"], ["filter", "price > 5"], ["limit", "3"]],
        "split": &p.splits[0],
    });
    let req = parse_partial(&serde_json::to_vec(&scan).unwrap()).unwrap();
    assert!(matches!(req, deltalens_api::ApiRequest::Partial { .. }));
    let both = serde_json::json!({"sql": "SELECT 1", "scan": [], "split": &p.splits[0]});
    assert!(parse_partial(&serde_json::to_vec(&both).unwrap()).is_err());
    let neither = serde_json::json!({"split": &p.splits[0]});
    assert!(parse_partial(&serde_json::to_vec(&neither).unwrap()).is_err());
    let body = |sql: &str, split: &Split| {
        serde_json::to_vec(&serde_json::json!({ "sql": sql, "split": split })).unwrap()
    };
    let e = parse_partial(&body("SELECT * FROM table_changes('t', 0)", &p.splits[0])).unwrap_err();
    assert_eq!(e.status(), 400, "{e}");
    let mut evil = p.splits[0].clone();
    evil.files[0].path = "../../secret.parquet".into();
    let req = parse_partial(&body("SELECT COUNT(*) FROM 't'", &evil)).unwrap();
    let e = rt
        .block_on(respond(req, &table, Limits::default(), 0))
        .unwrap_err();
    assert!(e.to_string().contains("secret.parquet"), "{e}");
}

use std::path::Path;
use std::sync::Arc;

use deltalens_storage::MemoryStorage;
use futures::executor::block_on;

use super::*;

/// tests/fixtures/demo (361 rows over 7 versions) in memory, as `memory://demo`.
fn demo() -> Table {
    fn load(m: &MemoryStorage, root: &Path, dir: &Path) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                load(m, root, &p);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                m.put(&rel, std::fs::read(&p).unwrap(), 0);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/demo");
    let m = MemoryStorage::new();
    load(&m, &root, &root);
    Table::new(Arc::new(m), "memory://demo")
}

fn ask(sql: &str, shown: Option<u64>, budgets: &Budgets) -> Result<(Query, Output), String> {
    let q = prepare(sql, "memory://demo/", shown)?;
    let out = block_on(run(&demo(), &q, budgets))?;
    Ok((q, out))
}

/// The SQL must name the open table: a link's query cannot point this table's
/// credentials (or the relay's) at another table or host.
#[test]
fn only_the_open_table_is_queried() {
    for sql in [
        "SELECT * FROM 's3://elsewhere/t'",
        "SELECT COUNT(*) FROM 'memory://demo2'",
        "SELECT * FROM table_changes('https://evil.example/t', 0)",
    ] {
        let e = prepare(sql, "memory://demo", None).unwrap_err();
        assert!(
            e.contains("the Query tab reads the open table only"),
            "{sql}: {e}"
        );
    }
    assert!(
        prepare(
            "SELECT * FROM 'memory://demo/' LIMIT 1",
            "memory://demo",
            None
        )
        .is_ok()
    );
    let e = prepare("DROP TABLE x", "memory://demo", None).unwrap_err();
    assert!(!e.is_empty());
}

/// Without VERSION AS OF the version on screen is read; with it, the SQL's.
#[test]
fn the_version_on_screen_unless_the_sql_names_one() {
    let b = Budgets::default();
    let (_, latest) = ask("SELECT COUNT(*) AS n FROM 'memory://demo'", None, &b).unwrap();
    let (_, at_2) = ask("SELECT COUNT(*) AS n FROM 'memory://demo'", Some(2), &b).unwrap();
    let (_, named) = ask(
        "SELECT COUNT(*) AS n FROM 'memory://demo' VERSION AS OF 1",
        Some(2),
        &b,
    )
    .unwrap();
    assert_eq!((latest.version, at_2.version, named.version), (6, 2, 1));
    let count =
        |o: &Output| answer(&prepare_any(), o, Progress::default()).unwrap().rows[0][0].clone();
    assert_ne!(count(&at_2), count(&latest));
}

fn prepare_any() -> Query {
    prepare("SELECT * FROM 'memory://demo'", "memory://demo", None).unwrap()
}

/// A grouped result: text cells as every front end formats them, numbers for the chart,
/// the whole result as a file.
#[test]
fn a_grouped_answer_with_numbers_and_files() {
    let (q, out) = ask(
        "SELECT event_type, COUNT(*) AS n, SUM(price) AS total FROM 'memory://demo' \
         GROUP BY event_type ORDER BY event_type",
        None,
        &Budgets::default(),
    )
    .unwrap();
    let a = answer(
        &q,
        &out,
        Progress {
            requests: 3,
            bytes: 10,
        },
    )
    .unwrap();
    assert!(a.grouped);
    assert_eq!(a.columns.len(), 3);
    assert_eq!(a.columns[0].numbers, None, "a string column has no numbers");
    let n = a.columns[1].numbers.as_ref().unwrap();
    assert_eq!(n.len(), a.rows.len());
    assert_eq!(a.total_rows as usize, a.rows.len());
    let total: f64 = n.iter().map(|v| v.unwrap()).sum();
    let (_, all) = ask(
        "SELECT COUNT(*) FROM 'memory://demo'",
        None,
        &Budgets::default(),
    )
    .unwrap();
    let all = answer(&prepare_any(), &all, Progress::default()).unwrap();
    assert_eq!(
        total.to_string(),
        all.rows[0][0],
        "group counts add up to the count"
    );
    for (row, v) in a.rows.iter().zip(n) {
        assert_eq!(row[1], v.unwrap().to_string());
    }
    assert_eq!((a.requests, a.bytes), (3, 10));
    let csv = String::from_utf8(file(&out, "csv").unwrap()).unwrap();
    assert!(csv.starts_with("event_type,n,total\n"), "{csv}");
    assert_eq!(csv.lines().count(), a.rows.len() + 1);
    assert!(
        file(&out, "arrow")
            .unwrap()
            .starts_with(&[0xff, 0xff, 0xff, 0xff])
    );
    let e = file(&out, "table").unwrap_err();
    assert!(e.contains("not a download format"), "{e}");
}

/// Budgets stop the query with an error that names them.
#[test]
fn budgets_stop_with_their_names() {
    let rows = Budgets {
        max_rows: 5,
        ..Budgets::default()
    };
    let e = ask("SELECT * FROM 'memory://demo'", None, &rows).unwrap_err();
    assert!(e.contains('5') && e.to_lowercase().contains("row"), "{e}");
    let buffered = Budgets {
        max_rows_buffered: 10,
        ..Budgets::default()
    };
    let e = ask(
        "SELECT * FROM 'memory://demo' ORDER BY price DESC LIMIT 3",
        None,
        &buffered,
    )
    .unwrap_err();
    assert!(e.contains("10"), "{e}");
    let decoded = Budgets {
        max_decoded_bytes: 100,
        ..Budgets::default()
    };
    let e = ask("SELECT * FROM 'memory://demo'", None, &decoded).unwrap_err();
    assert!(e.contains("100"), "{e}");
}

/// At most SHOWN_ROWS rows are shown; the total says how many there are.
#[test]
fn shown_rows_are_capped_and_counted() {
    let (q, out) = ask("SELECT * FROM 'memory://demo'", None, &Budgets::default()).unwrap();
    let a = answer(&q, &out, Progress::default()).unwrap();
    assert!(!a.grouped);
    assert_eq!(a.total_rows as usize, out.num_rows());
    assert_eq!(a.rows.len(), out.num_rows().min(SHOWN_ROWS));
    assert!(a.rows.iter().all(|r| r.len() == a.columns.len()));
}

/// The request and the answer travel as JSON; options print without their secrets.
#[test]
fn the_protocol_round_trips_and_hides_secrets() {
    let r = protocol::Request {
        url: "s3://b/t".into(),
        storage: protocol::StorageOptions {
            s3_secret_access_key: Some("SECRET-KEY".into()),
            relay_token: Some("RELAY-TOKEN".into()),
            ..Default::default()
        },
        sql: "SELECT 1".into(),
        version: Some(3),
        budgets: Budgets::default(),
        workers: 2,
    };
    let json = serde_json::to_string(&r).unwrap();
    let back: protocol::Request = deltalens_json::from_str(&json).unwrap();
    assert_eq!(back, r);
    let shown = format!("{r:?}");
    assert!(
        !shown.contains("SECRET-KEY") && !shown.contains("RELAY-TOKEN"),
        "{shown}"
    );
    assert!(deltalens_json::from_str::<protocol::Request>("[1]").is_err());
}

/// Every split read in process, as a worker of the pool would read it (its own storage,
/// the split's share of the budgets).
fn pooled(sql: &str, width: usize) -> Result<(Answer, usize), String> {
    let q = prepare(sql, "memory://demo", None)?;
    let b = Budgets::default();
    let out = block_on(run_pooled(&demo(), &q, &b, width, 0, |split, n| {
        let (q, split, share) = (q.clone(), split.clone(), split_budgets(&b, n));
        async move { run_split(&demo(), &q, &split, &share).await }
    }))?;
    Ok((answer(&q, &out.output, Progress::default())?, out.splits))
}

/// A pool's answer is the one worker's answer: aggregates, groups, averages, ordering
/// and limits merged by the fan-out's code.
#[test]
fn a_pool_answers_as_one_worker_does() {
    for sql in [
        "SELECT COUNT(*) AS n, SUM(price) AS s, MIN(price) AS lo, MAX(price) AS hi, AVG(price) AS a FROM 'memory://demo'",
        "SELECT event_type, COUNT(*) AS n, AVG(price) AS a FROM 'memory://demo' GROUP BY event_type ORDER BY event_type",
        "SELECT brand, SUM(price) AS s FROM 'memory://demo' WHERE price > 5 GROUP BY brand ORDER BY s DESC, brand LIMIT 4",
        "SELECT product_id, price FROM 'memory://demo' ORDER BY price DESC, product_id LIMIT 10",
        "SELECT COUNT(*) FROM 'memory://demo' VERSION AS OF 3",
    ] {
        let one = ask(sql, None, &Budgets::default()).unwrap();
        let one = answer(&one.0, &one.1, Progress::default()).unwrap();
        for width in [2, 3, 8] {
            let (many, splits) = pooled(sql, width).unwrap();
            assert!(
                splits >= 2 && splits <= width,
                "{sql}: {splits} splits for {width}"
            );
            assert_eq!(many.rows, one.rows, "{sql} in {splits} splits");
            assert_eq!(many.version, one.version, "{sql}");
        }
    }
}

/// Queries a pool would not speed up are read by one worker: a plain LIMIT (it stops
/// early), a change feed, a pool of one, a table under the size threshold.
#[test]
fn some_queries_are_read_alone() {
    for sql in [
        "SELECT * FROM 'memory://demo' LIMIT 5",
        "SELECT COUNT(*) FROM table_changes('memory://demo', 0)",
    ] {
        assert_eq!(pooled(sql, 4).unwrap().1, 1, "{sql}");
    }
    assert_eq!(
        pooled("SELECT COUNT(*) FROM 'memory://demo'", 1).unwrap().1,
        1
    );
    let q = prepare(
        "SELECT COUNT(*) FROM 'memory://demo'",
        "memory://demo",
        None,
    )
    .unwrap();
    let b = Budgets::default();
    let out = block_on(run_pooled(
        &demo(),
        &q,
        &b,
        4,
        MIN_POOL_BYTES,
        |_, _| async { Err::<Vec<u8>, String>("no worker should be asked".into()) },
    ))
    .unwrap();
    assert_eq!(out.splits, 1, "the demo table is far under MIN_POOL_BYTES");
}

/// A worker that fails fails the query, naming the split and the worker's message.
#[test]
fn a_failed_split_names_itself() {
    let q = prepare(
        "SELECT COUNT(*) FROM 'memory://demo'",
        "memory://demo",
        None,
    )
    .unwrap();
    let b = Budgets::default();
    let e = block_on(run_pooled(&demo(), &q, &b, 2, 0, |split, _| {
        let id = split.id;
        async move { Err::<Vec<u8>, String>(format!("worker of split {id} stopped")) }
    }))
    .unwrap_err();
    assert!(e.contains("split") && e.contains("stopped"), "{e}");
}

/// Each split gets a share of the bytes, requests and decoded bytes, never nothing.
#[test]
fn split_budgets_share_what_is_spent() {
    let b = Budgets {
        max_bytes: 10,
        max_requests: 7,
        max_decoded_bytes: 1,
        ..Budgets::default()
    };
    let s = split_budgets(&b, 3);
    assert_eq!(
        (s.max_bytes, s.max_requests, s.max_decoded_bytes),
        (4, 3, 1)
    );
    assert_eq!(
        (s.max_rows, s.max_rows_buffered, s.max_millis),
        (b.max_rows, b.max_rows_buffered, b.max_millis)
    );
    assert_eq!(split_budgets(&b, 0), split_budgets(&b, 1));
}

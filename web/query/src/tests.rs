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

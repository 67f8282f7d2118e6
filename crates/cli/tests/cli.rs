//! The `deltalens` binary on the generated fixtures: output formats, exit codes, errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_deltalens"))
        .args(args)
        .output()
        .expect("run deltalens")
}

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // exactly one JSON document on stdout
    deltalens_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn info_json() {
    let t = fixture("checkpointed");
    let v = json(&["info", &t, "--json"]);
    for key in [
        "version",
        "num_files",
        "size_bytes",
        "num_rows",
        "protocol",
        "properties",
        "partition_columns",
        "created_time",
        "name",
        "description",
        "id",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["version"], 23);
    assert_eq!(v["num_files"], 21);
    assert_eq!(v["num_rows"], 42);
    assert_eq!(v["protocol"]["min_reader_version"], 1);
    assert_eq!(v["checkpoint_version"], 20);
    let v = json(&["info", &t, "--json", "--version", "3"]);
    assert_eq!(v["version"], 3);
    assert_eq!(v["num_files"], 4);
    // without counting the files: the same document, file fields null, read from the
    // checkpoint's metaData/protocol columns and the newer commits only
    let full = json(&["info", &t, "--json"]);
    let mut lean = json(&["info", &t, "--json", "--no-files"]);
    for key in ["num_files", "size_bytes", "num_rows"] {
        assert!(lean[key].is_null(), "{key}: {lean}");
        lean[key] = full[key].clone();
    }
    assert_eq!(lean, full);
    let text = String::from_utf8(run(&["info", &t, "--no-files"]).stdout).unwrap();
    assert!(text.contains("files              not counted"), "{text}");
}

#[test]
fn files_are_paged_in_log_order() {
    let t = fixture("checkpointed");
    let all = json(&["files", &t, "--json", "--offset", "0"]);
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 21);
    let page = json(&["files", &t, "--json", "--offset", "5", "--limit", "3"]);
    assert_eq!(page.as_array().unwrap()[..], all[5..8]);
    let past = json(&["files", &t, "--json", "--offset", "21", "--limit", "3"]);
    assert_eq!(past.as_array().unwrap().len(), 0);
    // the whole listing, streamed: the same files in the same (log) order
    let whole = json(&["files", &t, "--json"]);
    assert_eq!(whole.as_array().unwrap(), all);
    let rest = json(&["files", &t, "--json", "--offset", "19"]);
    assert_eq!(rest.as_array().unwrap()[..], all[19..]);
    let none = json(&["files", &t, "--json", "--offset", "30"]);
    assert_eq!(none.as_array().unwrap().len(), 0);
    let text = String::from_utf8(run(&["files", &t]).stdout).unwrap();
    assert!(text.starts_with("path"), "{text}");
    assert!(
        text.ends_with("21 files, 15.5 KiB at version 23 (log order)\n"),
        "{text}"
    );
    let text = String::from_utf8(run(&["files", &t, "--limit", "2"]).stdout).unwrap();
    assert!(
        text.contains("files 1 to 2 (log order) at version 23"),
        "{text}"
    );
}

#[test]
fn human_output_is_a_table() {
    let out = run(&["info", &fixture("partitioned")]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("partition columns  event_date, city"),
        "{text}"
    );
    let out = run(&["files", &fixture("partitioned")]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("path"), "{text}");
    assert!(text.contains("city=Zürich"), "{text}");
}

#[test]
fn schema_json_is_the_delta_schema() {
    let v = json(&["schema", &fixture("column_mapping"), "--json"]);
    assert_eq!(v["type"], "struct");
    assert_eq!(v["fields"][0]["name"], "Customer Id");
    assert!(v["fields"][0]["metadata"]["delta.columnMapping.physicalName"].is_string());
    let keys: Vec<&String> = v["fields"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name", "type", "nullable", "metadata"]);
}

#[test]
fn history_limit() {
    let v = json(&[
        "history",
        &fixture("checkpointed"),
        "--limit",
        "2",
        "--json",
    ]);
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["version"], 23);
    assert_eq!(a[1]["version"], 22);
    for key in [
        "timestamp",
        "user_id",
        "user_name",
        "operation",
        "operation_parameters",
        "cluster_id",
        "read_version",
        "isolation_level",
        "is_blind_append",
        "operation_metrics",
        "in_commit_timestamp",
    ] {
        assert!(a[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(a[0]["operation"], "WRITE");
}

#[test]
fn files_json() {
    let v = json(&["files", &fixture("partitioned"), "--json", "--version", "0"]);
    let files = v.as_array().unwrap();
    assert_eq!(files.len(), 3);
    for f in files {
        assert!(f["path"].is_string());
        assert!(f["size"].as_i64().unwrap() > 0);
        assert!(f["modification_time"].is_i64());
        assert!(f["stats"]["numRecords"].is_i64(), "{f}");
        assert!(f["deletion_vector"].is_null());
        assert!(f["partition_values"]["event_date"].is_string());
    }
}

#[test]
fn errors_exit_by_class_on_stderr() {
    let out = run(&["info", "/no/such/table"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("error: cannot open table location /no/such/table"),
        "{err}"
    );

    let out = run(&[
        "info",
        &fixture("overwrite_vacuum"),
        "--version",
        "2",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty());
    // under --json, one JSON object: the worker's shape
    let err: Value = deltalens_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "version_not_found");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("versions 5 to 6")
    );

    let out = run(&["info", &fixture("cdf"), "--timestamp", "next tuesday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read timestamp"));

    let out = run(&["info", &fixture("cdf"), "--timestamp", "1990-01-01"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is before the earliest available commit"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["info"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate", "x"]).status.code(), Some(2));
    let t = fixture("cdf");
    assert_eq!(
        run(&["info", &t, "--version", "1", "--timestamp", "2024-01-01"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run(&["history", &t, "--limit", "x"]).status.code(), Some(2));
}

#[test]
fn io_stats_go_to_stderr() {
    let out = run(&["info", &fixture("checkpointed"), "--json", "--io-stats"]);
    assert!(out.status.success());
    deltalens_json::from_slice::<Value>(&out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("io: "), "{err}");
    // _last_checkpoint, one list, the checkpoint and the three commits after it
    assert!(err.contains("1 list"), "{err}");
}

fn oracles() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pyarrow, polars, duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || std::env::var("DELTALENS_REQUIRE_ORACLES").is_err(),
        "python3 with pyarrow, polars and duckdb is required (scripts/setup installs them)"
    );
    ok
}

#[test]
fn every_output_format_reads_in_pyarrow_polars_and_duckdb() {
    if !oracles() {
        eprintln!("SKIPPED: pyarrow/polars/duckdb not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("deltalens-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = fixture("partitioned");
    for f in ["csv", "json", "jsonl", "arrow", "parquet"] {
        let out = dir.join(format!("out.{f}"));
        let o = run(&[
            "scan",
            &t,
            "--format",
            f,
            "--output",
            out.to_str().unwrap(),
            "--batch-size",
            "2",
        ]);
        assert!(
            o.status.success(),
            "{f}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout.is_empty());
    }
    let script = r#"
import sys, json, os
import pyarrow as pa, pyarrow.csv, pyarrow.json, pyarrow.ipc, pyarrow.parquet as pq
import polars as pl, duckdb
d = sys.argv[1]
p = lambda f: os.path.join(d, 'out.' + f)
res = {}
res['pyarrow'] = {
  'csv': pa.csv.read_csv(p('csv')),
  'json': pa.Table.from_pylist(json.load(open(p('json')))),
  'jsonl': pa.json.read_json(p('jsonl')),
  'arrow': pa.ipc.open_stream(p('arrow')).read_all(),
  'parquet': pq.read_table(p('parquet')),
}
res['polars'] = {
  'csv': pl.read_csv(p('csv')), 'json': pl.read_json(p('json')), 'jsonl': pl.read_ndjson(p('jsonl')),
  'arrow': pl.read_ipc_stream(p('arrow')), 'parquet': pl.read_parquet(p('parquet')),
}
con = duckdb.connect()
arrow_tbl = pa.ipc.open_stream(p('arrow')).read_all()
res['duckdb'] = {
  'csv': con.execute(f"SELECT count(*), sum(id) FROM read_csv('{p('csv')}')").fetchone(),
  'json': con.execute(f"SELECT count(*), sum(id) FROM read_json('{p('json')}')").fetchone(),
  'jsonl': con.execute(f"SELECT count(*), sum(id) FROM read_json('{p('jsonl')}')").fetchone(),
  'arrow': con.execute("SELECT count(*), sum(id) FROM arrow_tbl").fetchone(),
  'parquet': con.execute(f"SELECT count(*), sum(id) FROM read_parquet('{p('parquet')}')").fetchone(),
}
out = {}
for reader, tables in res.items():
  for fmt, t in tables.items():
    if reader == 'duckdb':
      out[f'{reader}/{fmt}'] = [t[0], int(t[1])]
    elif reader == 'polars':
      out[f'{reader}/{fmt}'] = [t.height, int(t['id'].sum())]
    else:
      out[f'{reader}/{fmt}'] = [t.num_rows, sum(t.column('id').to_pylist())]
print(json.dumps(out))
"#;
    let o = Command::new("python3")
        .args(["-c", script, dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = deltalens_json::from_slice(&o.stdout).unwrap();
    let m = v.as_object().unwrap();
    assert_eq!(m.len(), 15);
    // 7 rows: ids 0,1,2,10,12,20,21
    for (k, counts) in m {
        assert_eq!(counts, &serde_json::json!([7, 66]), "{k}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn scan_with_columns_filter_limit_and_time_travel() {
    let t = fixture("partitioned");
    let v = json(&[
        "scan",
        &t,
        "--format",
        "json",
        "--columns",
        "city,id",
        "--filter",
        "event_date >= '2024-01-03'",
    ]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["city", "id"]
    );
    let v = json(&["scan", &t, "--format", "json", "--limit", "2"]);
    assert_eq!(v.as_array().unwrap().len(), 2);
    let v = json(&["scan", &t, "--format", "json", "--version", "0"]);
    assert_eq!(v.as_array().unwrap().len(), 3);
    let out = run(&["scan", &t, "--filter", "prize > 1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown column \"prize\""));
    let out = run(&["scan", &t, "--format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn changes_and_diff() {
    let t = fixture("cdf");
    let out = run(&[
        "changes", &t, "--from", "1", "--to", "2", "--format", "jsonl",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| deltalens_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = rows
        .iter()
        .map(|r| r["_change_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["update_preimage", "update_postimage", "delete"]);
    assert!(rows.iter().all(|r| r["_commit_timestamp"].is_string()));
    let out = run(&["changes", &fixture("partitioned"), "--from", "0"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not enabled at version 0"));

    let d = json(&["diff", &fixture("schema_evolution"), "0", "2", "--json"]);
    assert_eq!(d["schema_changes"].as_array().unwrap().len(), 2);
    assert_eq!(d["rows_inserted"], 2);
    assert_eq!(d["rows"].as_array().unwrap().len(), 2);
    let d = json(&["diff", &fixture("cdf"), "0", "2", "--json"]);
    assert_eq!(d["files_added"].as_array().unwrap().len(), 1);
    assert_eq!(d["files_removed"].as_array().unwrap().len(), 1);
    let kinds: Vec<&str> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["_change_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "delete").count(), 4);
    assert_eq!(kinds.iter().filter(|k| **k == "insert").count(), 3);
}

#[test]
fn parallel_scan_returns_the_same_rows() {
    let t = fixture("checkpointed");
    let lines = |threads: &str| {
        let out = run(&["scan", &t, "--format", "jsonl", "--threads", threads]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut l: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        l.sort();
        l
    };
    let one = lines("1");
    assert_eq!(one.len(), 42);
    assert_eq!(lines("3"), one);
}

#[test]
fn plan_and_scan_each_split_alone() {
    let t = fixture("demo");
    let sorted = |out: Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut l: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        l.sort();
        l
    };
    let whole = sorted(run(&["scan", &t, "--format", "jsonl"]));
    let plan = json(&["plan", &t, "--target-bytes", "8000", "--json"]);
    let splits = plan["splits"].as_array().unwrap();
    assert!(splits.len() >= 2, "{plan}");
    assert_eq!(
        plan["files"].as_u64().unwrap(),
        splits
            .iter()
            .map(|s| s["files"].as_array().unwrap().len() as u64)
            .sum::<u64>()
    );
    let dir = std::env::temp_dir().join(format!("deltalens-splits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // the same plan as an Arrow IPC stream beside the JSON
    let ipc = dir.join("plan.arrows");
    let again = json(&[
        "plan",
        &t,
        "--target-bytes",
        "8000",
        "--json",
        "--ipc",
        ipc.to_str().unwrap(),
    ]);
    assert_eq!(again, plan);
    let bytes = std::fs::read(&ipc).unwrap();
    assert!(
        bytes.len() > 200 && bytes[..4] == [0xff; 4],
        "an Arrow IPC stream"
    );
    let mut rows = Vec::new();
    for s in splits {
        let f = dir.join(format!("{}.json", s["id"]));
        std::fs::write(&f, serde_json::to_vec(s).unwrap()).unwrap();
        rows.extend(sorted(run(&[
            "scan",
            &t,
            "--split",
            f.to_str().unwrap(),
            "--format",
            "jsonl",
        ])));
    }
    rows.sort();
    assert_eq!(rows, whole);
    // text: a line per split and the totals
    let text = String::from_utf8(run(&["plan", &t, "--target-bytes", "8000"]).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "{} splits of {} files",
            splits.len(),
            plan["files"]
        )),
        "{text}"
    );
    // a file that is not a split, and one that does not exist: usage errors naming it
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}").unwrap();
    for f in [bad.clone(), dir.join("missing.json")] {
        let out = run(&["scan", &t, "--split", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the split"));
    }
    let out = run(&["plan", &t, "--target-bytes", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run `deltalens args` and give up after `secs` (a hang is a failure, not a stuck suite).
fn run_bounded(args: &[&str], secs: u64) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_deltalens"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run deltalens");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed().as_secs() >= secs {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "deltalens {args:?} hung for {secs} s; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Every command over a keep-alive HTTP server with default options (the scan used to
/// hang forever with the default --threads: pooled connections belonged to a runtime
/// the scan threads blocked), equal to the same command on the local directory.
#[test]
fn every_command_over_keep_alive_http_with_defaults() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut server = Command::new(env!("CARGO_BIN_EXE_deltalens"))
        .args(["serve", "--port", "0", "--stop-after", "120"])
        .args([fixture("checkpointed"), fixture("cdf")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("serve printed its address")
            .expect("line");
        if let Some(rest) = line.split("serving the explorer at ").nth(1) {
            break rest.trim().trim_end_matches('/').to_string();
        }
    };
    let http = ["-o", "allow_http=true"];
    let commands: Vec<(&str, Vec<&str>)> = vec![
        ("checkpointed", vec!["info", "--json"]),
        ("checkpointed", vec!["schema", "--json"]),
        ("checkpointed", vec!["history", "--json"]),
        ("checkpointed", vec!["files", "--json"]),
        ("checkpointed", vec!["scan", "--format", "jsonl"]),
        (
            "checkpointed",
            vec!["scan", "--format", "jsonl", "--filter", "id > 3"],
        ),
        ("checkpointed", vec!["diff", "1", "5", "--json"]),
        ("cdf", vec!["changes", "--from", "0", "--format", "jsonl"]),
        ("cdf", vec!["scan", "--format", "csv"]),
    ];
    for (table, cmd) in &commands {
        let (url, dir) = (format!("{base}/tables/{table}"), fixture(table));
        let (name, rest) = cmd.split_first().expect("command");
        let remote: Vec<&str> = [*name, url.as_str()]
            .into_iter()
            .chain(rest.iter().copied())
            .chain(http)
            .collect();
        let local: Vec<&str> = [*name, dir.as_str()]
            .into_iter()
            .chain(rest.iter().copied())
            .collect();
        let (r, l) = (run_bounded(&remote, 60), run_bounded(&local, 60));
        assert_eq!(
            r.status.success(),
            l.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let norm = |o: &Output| {
            let text = String::from_utf8_lossy(&o.stdout)
                .replace(&url, "T")
                .replace(&dir, "T");
            let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
            lines.sort(); // parallel scans return rows in file-completion order
            lines
        };
        let (rl, ll) = (norm(&r), norm(&l));
        if *name == "info" || *name == "files" || *name == "history" {
            // modification times differ between a listing (HTTP has none) and the disk
            assert_eq!(rl.len(), ll.len(), "{cmd:?}");
        } else {
            assert_eq!(rl, ll, "{cmd:?}");
        }
        assert!(
            l.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&l.stderr)
        );
        assert!(!rl.is_empty(), "{cmd:?} printed nothing");
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// `deltalens files T | head`: the reader closes the pipe; deltalens ends quietly (exit
/// 0, nothing on stderr), as `ls | head` does. It panicked (exit 101) on a closed stdout.
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    for args in [
        vec!["files", "checkpointed"],
        vec!["scan", "demo", "--format", "csv"],
        vec!["history", "checkpointed"],
    ] {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        args[1] = fixture(&args[1]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_deltalens"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // read one byte, then close the pipe
        let mut one = [0u8; 1];
        child.stdout.take().unwrap().read_exact(&mut one).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `--json` on `scan` and `changes` means JSON lines (it was accepted and ignored); with
/// another `--format` it is refused before the table is opened.
#[test]
fn json_rows_are_json_lines() {
    let t = fixture("cdf");
    for args in [
        vec!["scan", t.as_str(), "--json", "--limit", "2"],
        vec!["changes", t.as_str(), "--from", "1", "--json"],
    ] {
        let out = run(&args);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.is_empty(), "{args:?}");
        for line in text.lines() {
            let row: Value = deltalens_json::from_str(line).unwrap();
            assert!(row.is_object(), "{args:?}: {line}");
        }
    }
    let out = run(&["scan", &t, "--json", "--format", "csv"]);
    assert_eq!(out.status.code(), Some(2));
    let err: Value = deltalens_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["error"]["code"], "invalid_argument");
    let out = run(&["scan", "/no/such/table", "--json", "--format", "csv"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "the format is checked before the table"
    );
}

/// Shell completions and the man page are generated from the same command definitions.
#[test]
fn completions_and_man_page() {
    for (shell, marker) in [
        ("bash", "_deltalens()"),
        ("zsh", "#compdef deltalens"),
        ("fish", "complete -c deltalens"),
    ] {
        let out = run(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}");
        assert!(text.contains("health"), "{shell}: subcommands completed");
    }
    let out = run(&["man"]);
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains(".TH deltalens 1"),
        "{}",
        &page[..page.len().min(200)]
    );
    assert!(page.contains("commit "), "the version names the commit");
    assert_eq!(run(&["completions", "tcsh"]).status.code(), Some(2));
}

/// `-v` prints the requests and bytes read; `-vv` also one line per request with its
/// outcome, bytes and milliseconds (object paths only: no credentials); stdout is
/// unchanged.
#[test]
fn verbose_traces_requests_on_stderr() {
    let t = fixture("checkpointed");
    let plain = run(&["info", &t, "--json"]);
    let v = run(&["info", &t, "--json", "-v"]);
    let vv = run(&["info", &t, "--json", "-vv", "--quiet"]);
    assert_eq!(plain.stdout, v.stdout);
    assert_eq!(plain.stdout, vv.stdout);
    assert!(plain.stderr.is_empty());
    let v = String::from_utf8(v.stderr).unwrap();
    assert_eq!(v.lines().count(), 1, "{v}");
    let summary = v.lines().next().unwrap();
    let requests: usize = summary
        .strip_prefix("io: ")
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let vv = String::from_utf8(vv.stderr).unwrap();
    let lines: Vec<&str> = vv.lines().collect();
    assert_eq!(lines.len(), requests + 1, "{vv}");
    for l in &lines[..requests] {
        assert!(
            l.starts_with("io: ") && l.ends_with(" ms") && l.contains("-> ok"),
            "{l}"
        );
    }
    assert_eq!(lines[requests], summary);
}

/// On a terminal (a pty from util-linux `script`), `scan` draws a progress bar on stderr
/// (files, rows, bytes of the total, rate, ETA; indicatif); `--quiet` draws none. Piped
/// output never gets one (the other tests check that stderr stays empty).
#[test]
fn progress_is_drawn_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_deltalens");
    let t = fixture("demo");
    let on_pty = |extra: &str| {
        let cmd = format!("{bin} scan {t} --format csv --batch-size 16 {extra}");
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let drawn = on_pty("");
    assert!(
        drawn.contains(" files, ") && drawn.contains("B/"),
        "no progress bar on a terminal"
    );
    assert!(
        !on_pty("--quiet").contains(" files, "),
        "--quiet drew a progress bar"
    );
}

#[test]
fn sql_runs_datafusion_over_delta_tables() {
    let t = fixture("demo");
    // `query` (deltalens' own SQL) and `sql` (DataFusion) give the same counts per brand
    let ours = run(&[
        "query",
        &format!("SELECT brand, COUNT(*) FROM '{t}' GROUP BY brand ORDER BY brand"),
        "--format",
        "csv",
    ]);
    let theirs = run(&[
        "sql",
        &format!(
            "SELECT brand, COUNT(*) AS n FROM '{t}' GROUP BY brand ORDER BY brand NULLS FIRST"
        ),
        "--format",
        "csv",
        "--partitions",
        "3",
    ]);
    assert!(
        theirs.status.success(),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let rows = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect()
    };
    assert_eq!(rows(&ours), rows(&theirs));
    assert!(rows(&theirs).len() > 3);
    // several statements: a table at a version, then a join and a window over it
    let out = json_lines(&run(&[
        "sql",
        &format!(
            "CREATE EXTERNAL TABLE v1 STORED AS DELTA LOCATION '{t}' OPTIONS ('version' '1'); \
             SELECT COUNT(*) AS n, MAX(r) AS top FROM (SELECT RANK() OVER (ORDER BY a.price DESC) AS r \
             FROM v1 a JOIN '{t}' b USING (product_id, event_time, user_session))"
        ),
        "--format",
        "jsonl",
    ]));
    assert_eq!(out.len(), 1);
    assert!(out[0]["n"].as_i64().unwrap() > 0, "{out:?}");
    // errors name what went wrong, with the usual exit codes
    let bad = run(&["sql", "SELEC 1"]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "a syntax error is a usage error"
    );
    let missing = run(&["sql", "SELECT * FROM '/nonexistent/deltalens/table'"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/deltalens/table"));
    // read-only and within its limits: no COPY (a write), no SET (it could lift them)
    let dir = std::env::temp_dir().join(format!("deltalens-sql-copy-{}", std::process::id()));
    for sql in [
        format!(
            "COPY (SELECT * FROM '{t}') TO '{}' STORED AS CSV",
            dir.display()
        ),
        "SET datafusion.execution.target_partitions = 100000".to_string(),
    ] {
        let out = run(&["sql", &sql]);
        assert!(!out.status.success(), "{sql} was run");
        assert!(!dir.exists(), "COPY wrote {}", dir.display());
    }
    let changes = run(&["sql", &format!("SELECT * FROM table_changes('{t}', 9, 2)")]);
    assert_eq!(
        changes.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&changes.stderr)
    );
}

fn json_lines(o: &Output) -> Vec<Value> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| deltalens_json::from_str(l).unwrap())
        .collect()
}

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
    serde_json::from_slice(&out.stdout).expect("one JSON document")
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
fn errors_exit_1_on_stderr() {
    let out = run(&["info", "/no/such/table"]);
    assert_eq!(out.status.code(), Some(1));
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
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("versions 5 to 6"));

    let out = run(&["info", &fixture("cdf"), "--timestamp", "next tuesday"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read timestamp"));

    let out = run(&["info", &fixture("cdf"), "--timestamp", "1990-01-01"]);
    assert_eq!(out.status.code(), Some(1));
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
    serde_json::from_slice::<Value>(&out.stdout).unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("io: "), "{err}");
    // _last_checkpoint, one list, the checkpoint and the three commits after it
    assert!(err.contains("1 list"), "{err}");
}

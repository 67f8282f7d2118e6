//! `deltalens health` on tables written by real writers: its figures against an
//! independent oracle (deltalake Python: `get_add_actions` for sizes, rows and partitions,
//! a DataFusion `count(*)` for the rows deletion vectors hide, `history()` for OPTIMIZE and
//! VACUUM, and the raw log read with pyarrow for tombstones: `health_oracle.py`), its
//! `--json` shape, and `GET /v1/health` answering the same document.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use deltalens_api::execute::Limits;
use deltalens_core::Table;
use deltalens_storage::MemoryStorage;
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

fn health_json(table: &str, extra: &[&str]) -> Value {
    let mut args = vec!["health", table, "--json"];
    args.extend(extra);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    deltalens_json::from_slice(&out.stdout).expect("one JSON document")
}

const FINDINGS: [&str; 7] = [
    "small_files",
    "partition_skew",
    "deletion_vectors",
    "files_without_stats",
    "checkpoint",
    "maintenance",
    "tombstones",
];

#[test]
fn health_json_has_a_stable_shape() {
    let v = health_json(&fixture("partitioned"), &["--now", "2030-01-01"]);
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "checkpoint",
            "files",
            "findings",
            "location",
            "maintenance",
            "now_ms",
            "partitions",
            "size_histogram",
            "tombstones",
            "version",
            "warnings"
        ]
    );
    assert_eq!(v["now_ms"], 1_893_456_000_000i64);
    let ids: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, FINDINGS);
    for f in v["findings"].as_array().unwrap() {
        for k in ["title", "summary", "meaning", "remedy"] {
            assert!(f[k].as_str().is_some_and(|s| !s.is_empty()), "{k}: {f}");
        }
        assert!(["ok", "info", "warn"].contains(&f["severity"].as_str().unwrap()));
        assert!(f["figures"].is_array());
    }
    let labels: Vec<&str> = v["size_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "<1 MiB",
            "1–8 MiB",
            "8–32 MiB",
            "32–128 MiB",
            "128–512 MiB",
            "512 MiB–1 GiB",
            "≥1 GiB"
        ]
    );
    for k in [
        "columns",
        "partitions",
        "largest_bytes",
        "median_bytes",
        "top",
        "other",
    ] {
        assert!(v["partitions"].get(k).is_some(), "{k}");
    }
    // an unpartitioned table has no partition section; --version travels in time
    let v = health_json(
        &fixture("checkpointed"),
        &["--version", "3", "--now", "2030-01-01"],
    );
    assert!(v["partitions"].is_null());
    assert_eq!(v["version"], 3);
    assert_eq!(v["files"]["files"], 4);
    assert_eq!(
        v["checkpoint"]["commits_since"], 4,
        "no checkpoint before version 20"
    );
}

#[test]
fn health_text_shows_each_finding_with_its_meaning_and_remedy() {
    let out = run(&["health", &fixture("checkpointed"), "--now", "2030-01-01"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "at version 23 (as of 2030-01-01T00:00:00.000Z)",
        "OK    checkpoint                3 commits since the checkpoint at version 20",
        "what it means",
        "usual remedy",
        "OPTIMIZE: not in the last 24 commits",
        "file sizes:",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    let out = run(&["health", &fixture("checkpointed"), "--now", "soon"]);
    assert_eq!(out.status.code(), Some(2), "a bad --now is a usage error");
}

/// `GET /v1/health` answered on the fixture at `path` (the server's clock at 0).
fn answer_of(api: deltalens_api::ApiRequest, path: &str) -> deltalens_api::ApiResponse {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(deltalens_api::respond(
            api,
            &in_memory(Path::new(path), path),
            Limits::default(),
            0,
        ))
        .unwrap()
}

/// The table at `dir` in memory, as `location` (the worker reads through its own stores).
fn in_memory(dir: &Path, location: &str) -> Table {
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
    let m = MemoryStorage::new();
    load(&m, dir, dir);
    Table::new(Arc::new(m), location)
}

#[test]
fn the_api_route_answers_the_cli_document() {
    for name in ["partitioned", "checkpointed", "overwrite_vacuum"] {
        let path = fixture(name);
        let cli = health_json(&path, &["--now", "2030-01-01"]);
        let params: Vec<(String, String)> = [("table", path.as_str()), ("now", "2030-01-01")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let api = deltalens_api::request::parse_get("/v1/health", &params).unwrap();
        // the server's clock (0 here) is not used when `now` is given
        let answer = answer_of(api, &path);
        assert_eq!(answer.content_type, "application/json");
        let api: Value = deltalens_json::from_slice(&answer.body).unwrap();
        assert_eq!(api, cli, "{name}");
        assert_eq!(answer.version, cli["version"].as_u64().unwrap());
        // `&series=4`: the document of `health --series 4 --json`
        let cli = health_json(&path, &["--now", "2030-01-01", "--series", "4"]);
        let mut with_series = params.clone();
        with_series.push(("series".into(), "4".into()));
        let api = deltalens_api::request::parse_get("/v1/health", &with_series).unwrap();
        let answer = answer_of(api, &path);
        let api: Value = deltalens_json::from_slice(&answer.body).unwrap();
        assert!(!cli["points"].as_array().unwrap().is_empty(), "{name}");
        assert_eq!(api, cli, "{name} series");
    }
}

fn oracle_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pyarrow, deltalake"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || std::env::var("DELTALENS_REQUIRE_ORACLES").is_err(),
        "python3 with pyarrow and deltalake is required (scripts/setup installs them)"
    );
    ok
}

fn conformance_table(name: &str) -> Option<String> {
    let dir = std::env::var("DELTALENS_CONFORMANCE")
        // beside the repository, as every other test and script finds it (not a fixed
        // /work/shared: a clone may live anywhere)
        .unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/conformance").into()
        });
    let p = Path::new(&dir).join("tables").join(name);
    p.is_dir().then(|| p.to_string_lossy().into_owned())
}

#[test]
fn health_figures_match_deltalake() {
    if !oracle_available() {
        eprintln!("SKIPPED: deltalake (Python) not installed");
        return;
    }
    let mut tables: Vec<String> = ["partitioned", "checkpointed", "overwrite_vacuum"]
        .iter()
        .map(|n| fixture(n))
        .collect();
    // deletion vectors, checkpoint tombstones, OPTIMIZE in the history
    let corpus = [
        "dk_basic-dv-with-checkpoint",
        "golden_dv-partitioned-with-checkpoint",
        "kr_cdf-table-with-cdc-and-dvs",
    ];
    let found: Vec<String> = corpus.iter().filter_map(|n| conformance_table(n)).collect();
    if found.len() < corpus.len() {
        eprintln!("SKIPPED (partly): the conformance corpus is not at DELTALENS_CONFORMANCE");
    }
    tables.extend(found);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/health_oracle.py");
    let mut checked_within = 0;
    for t in &tables {
        let o = Command::new("python3")
            .arg(&script)
            .arg(t)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{t}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let want: Value = deltalens_json::from_slice(&o.stdout).unwrap();
        // `now` three days after the newest tombstone: the week's window holds them all
        let h = health_json(t, &["--now", want["now"].as_str().unwrap()]);
        let eq = |got: &Value, key: &str| assert_eq!(got, &want[key], "{t}: {key}");
        assert_eq!(h["now_ms"], want["now_ms"], "{t}");
        eq(&h["version"], "version");
        eq(&h["checkpoint"]["version"], "checkpoint");
        eq(&h["files"]["files"], "files");
        eq(&h["files"]["bytes"], "bytes");
        eq(&h["files"]["records"], "records");
        eq(&h["files"]["rows_hidden_by_deletion_vectors"], "hidden");
        eq(&h["files"]["files_under_32_mib"], "under_32");
        eq(&h["size_histogram"][0]["files"], "under_1");
        eq(&h["partitions"]["partitions"], "partitions");
        eq(&h["partitions"]["largest_bytes"], "largest_partition_bytes");
        eq(
            &h["maintenance"]["last_optimize"]["version"],
            "last_optimize",
        );
        eq(
            &h["maintenance"]["last_vacuum_end"]["version"],
            "last_vacuum_end",
        );
        eq(&h["maintenance"]["commits_read"], "commits");
        eq(&h["tombstones"]["tombstones"], "tombstones");
        eq(&h["tombstones"]["bytes"], "tombstone_bytes");
        eq(&h["tombstones"]["within_retention"], "within");
        eq(&h["tombstones"]["within_retention_bytes"], "within_bytes");
        checked_within += want["within"].as_u64().unwrap();
        // a year later every tombstone is past the week's retention
        let later = health_json(t, &["--now", "2100-01-01"]);
        assert_eq!(later["tombstones"]["within_retention"], 0, "{t}");
        assert_eq!(later["tombstones"]["tombstones"], want["tombstones"], "{t}");
    }
    assert!(checked_within > 0, "some tombstone was inside the window");
}

/// `health --series N`: N versions spread over the history, each point's figures equal to
/// deltalake's add actions at that version; the limit is named before anything is read.
#[test]
fn health_series_matches_deltalake_at_each_version() {
    let t = fixture("checkpointed");
    let s = health_json(&t, &["--series", "5", "--now", "2030-01-01"]);
    let points = s["points"].as_array().unwrap();
    let versions: Vec<u64> = points
        .iter()
        .map(|p| p["version"].as_u64().unwrap())
        .collect();
    let newest = health_json(&t, &["--now", "2030-01-01"])["version"]
        .as_u64()
        .unwrap();
    assert_eq!(versions.len(), 5, "{versions:?}");
    assert_eq!((versions[0], versions[4]), (0, newest));
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert_eq!(s["unavailable"], serde_json::json!([]));
    // the newest point is the single-version report's figures
    let single = health_json(&t, &["--now", "2030-01-01"]);
    assert_eq!(points[4]["files"], single["files"]["files"]);
    assert_eq!(points[4]["tombstones"], single["tombstones"]["tombstones"]);
    let text = run(&["health", &t, "--series", "5", "--now", "2030-01-01"]);
    let text = String::from_utf8(text.stdout).unwrap();
    // the title, the header and its rule (the one aligned-text writer's), 5 points
    assert_eq!(text.lines().count(), 3 + 5, "{text}");
    let refused = run(&["health", &t, "--series", "33"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("MAX_SERIES_POINTS"), "{err}");
    if !oracle_available() {
        eprintln!("SKIPPED (partly): deltalake (Python) not installed");
        return;
    }
    let script = "import sys, json, pyarrow as pa\n\
        from deltalake import DeltaTable\n\
        out = []\n\
        for v in sys.argv[2:]:\n\
        \x20   a = pa.table(DeltaTable(sys.argv[1], version=int(v)).get_add_actions(flatten=True)).to_pylist()\n\
        \x20   out.append({'files': len(a), 'bytes': sum(r['size_bytes'] for r in a),\n\
        \x20       'records': sum(r['num_records'] or 0 for r in a),\n\
        \x20       'small': sum(1 for r in a if r['size_bytes'] < 32 << 20)})\n\
        print(json.dumps(out))";
    let mut cmd = Command::new("python3");
    cmd.args(["-c", script, &t]);
    cmd.args(versions.iter().map(u64::to_string));
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want: Vec<Value> = deltalens_json::from_slice(&o.stdout).unwrap();
    for (p, w) in points.iter().zip(&want) {
        let v = &p["version"];
        assert_eq!(p["files"], w["files"], "version {v}");
        assert_eq!(p["bytes"], w["bytes"], "version {v}");
        assert_eq!(p["records"], w["records"], "version {v}");
        let files = w["files"].as_f64().unwrap();
        let small = w["small"].as_f64().unwrap() / files;
        assert_eq!(p["small_file_share"].as_f64(), Some(small), "version {v}");
    }
    let grew = want.first().unwrap()["files"].as_u64() < want.last().unwrap()["files"].as_u64();
    assert!(
        grew,
        "the fixture's file count changes over its history: {want:?}"
    );
}

//! `history --follow` and `changes --follow` on copies of the generated fixtures whose
//! newest commits (written by deltalake) land while deltalens follows: each new commit is
//! printed as the one-shot command prints it, Ctrl-C and a closed pipe stop cleanly, a
//! commit that changes the columns ends with an error naming it.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_deltalens"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run deltalens")
}

/// A copy of fixture `name` in a fresh directory holding every data file but only the
/// log's commits up to `upto` (no checkpoint or `_last_checkpoint` newer than it).
fn copy_upto(name: &str, upto: u64) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!(
        "deltalens-follow-{}-{n}/{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(&fixture(name), &dir, &|rel: &Path| {
        let Ok(log) = rel.strip_prefix("_delta_log") else {
            return true; // data and change-data files
        };
        let file = log.to_string_lossy();
        match log_version(&file) {
            Some(v) => v <= upto,
            None => hint_version(name).is_some_and(|v| v <= upto), // _last_checkpoint
        }
    });
    std::fs::create_dir_all(dir.join("_delta_log")).unwrap();
    dir
}

/// The version the fixture's `_last_checkpoint` names.
fn hint_version(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(fixture(name).join("_delta_log/_last_checkpoint")).ok()?;
    deltalens_json::from_str::<Value>(&text).ok()?["version"].as_u64()
}

/// The version a log file name starts with.
fn log_version(file: &str) -> Option<u64> {
    file.get(..20)?.parse().ok()
}

fn copy_tree(from: &Path, to: &Path, keep: &dyn Fn(&Path) -> bool) {
    fn walk(root: &Path, dir: &Path, to: &Path, keep: &dyn Fn(&Path) -> bool) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap();
            if p.is_dir() {
                walk(root, &p, to, keep);
            } else if keep(rel) {
                let dest = to.join(rel);
                std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
                std::fs::copy(&p, &dest).unwrap();
            }
        }
    }
    walk(from, from, to, keep);
}

/// Land version `v` of fixture `name` in the copy `dir` as a writer does: the commit
/// (whole: written aside, then renamed), then its checkpoint files, then
/// `_last_checkpoint` when the fixture's names this version.
fn land(name: &str, dir: &Path, v: u64) {
    let log = fixture(name).join("_delta_log");
    let mut files: Vec<String> = std::fs::read_dir(&log)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| log_version(f) == Some(v))
        .collect();
    files.sort_by_key(|f| !f.ends_with(".json")); // the commit first
    if hint_version(name) == Some(v) {
        files.push("_last_checkpoint".into());
    }
    for f in files {
        let aside = dir.join(format!(".landing-{f}"));
        std::fs::copy(log.join(&f), &aside).unwrap();
        std::fs::rename(&aside, dir.join("_delta_log").join(&f)).unwrap();
    }
}

/// A running `deltalens … --follow` and its stdout as it comes.
struct Following {
    child: Child,
    chunks: Receiver<Vec<u8>>,
    /// Bytes received and not taken as lines yet.
    buf: Vec<u8>,
}

impl Following {
    fn start(args: &[&str]) -> Following {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run deltalens");
        let (tx, chunks) = channel();
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut b = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut b) {
                if n == 0 || tx.send(b[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Following {
            child,
            chunks,
            buf: Vec::new(),
        }
    }

    /// Receive until `done(bytes so far)`, within 20 s.
    fn until(&mut self, what: &str, done: impl Fn(&[u8]) -> bool) {
        let end = Instant::now() + Duration::from_secs(20);
        while !done(&self.buf) {
            let left = end.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(c) => self.buf.extend(c),
                Err(_) => panic!(
                    "{what} did not come; got {:?}",
                    String::from_utf8_lossy(&self.buf)
                ),
            }
        }
    }

    /// The next `n` lines, within 20 s.
    fn next(&mut self, n: usize) -> Vec<String> {
        let lines = |b: &[u8]| b.iter().filter(|c| **c == b'\n').count();
        self.until(&format!("{n} lines"), |b| lines(b) >= n);
        let mut out = Vec::new();
        for _ in 0..n {
            let i = self.buf.iter().position(|c| *c == b'\n').unwrap();
            let line: Vec<u8> = self.buf.drain(..=i).collect();
            out.push(String::from_utf8(line[..i].to_vec()).unwrap());
        }
        out
    }

    /// Nothing more within `ms`.
    fn quiet_for(&mut self, ms: u64) {
        if let Ok(c) = self.chunks.recv_timeout(Duration::from_millis(ms)) {
            panic!("unexpected output {:?}", String::from_utf8_lossy(&c));
        }
    }

    /// Send SIGINT (Ctrl-C), wait for the exit (within 20 s): the status, the rest of
    /// stdout, stderr.
    fn interrupt(self) -> (Option<i32>, String, String) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        self.wait()
    }

    fn wait(mut self) -> (Option<i32>, String, String) {
        let start = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("deltalens did not stop within 20 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let mut rest = std::mem::take(&mut self.buf);
        rest.extend(self.chunks.iter().flatten());
        (status.code(), String::from_utf8(rest).unwrap(), err)
    }
}

/// Change rows in JSON output so far (each is an object with a `_change_type`).
fn change_rows(b: &[u8]) -> usize {
    String::from_utf8_lossy(b)
        .matches("\"_change_type\"")
        .count()
}

fn json_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| deltalens_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The one-shot history of the whole fixture, by version.
fn history_of(name: &str) -> Vec<Value> {
    let out = run(&["history", fixture(name).to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let mut h: Vec<Value> = deltalens_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    h.reverse();
    h
}

#[test]
fn history_follow_prints_each_new_commit_and_stops_on_ctrl_c() {
    // checkpointed: 24 commits, a checkpoint at 20 named by _last_checkpoint (copied)
    let dir = copy_upto("checkpointed", 21);
    assert!(dir.join("_delta_log/_last_checkpoint").exists());
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&[
        "history",
        d,
        "--follow",
        "--interval",
        "100ms",
        "--json",
        "--limit",
        "3",
    ]);
    let all = history_of("checkpointed");
    // the newest three, oldest first, as the one-shot history has them
    assert_eq!(json_lines(&f.next(3)), all[19..22]);
    f.quiet_for(500);
    land("checkpointed", &dir, 22);
    assert_eq!(json_lines(&f.next(1)), all[22..23]);
    land("checkpointed", &dir, 23);
    assert_eq!(json_lines(&f.next(1)), all[23..24]);
    let (code, rest, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.is_empty(), "{rest:?}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn history_follow_reads_every_commit_across_a_new_checkpoint() {
    // commit 19, then commit 20 with its checkpoint and a _last_checkpoint naming it:
    // both are printed, whether one poll sees them or two
    let dir = copy_upto("checkpointed", 18);
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&["history", d, "--follow", "--interval", "100ms", "--json"]);
    let all = history_of("checkpointed");
    assert_eq!(json_lines(&f.next(10)), all[9..19]);
    land("checkpointed", &dir, 19);
    land("checkpointed", &dir, 20);
    land("checkpointed", &dir, 21);
    assert_eq!(json_lines(&f.next(3)), all[19..22]);
    let (code, rest, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn history_follow_as_a_table_adds_rows_to_the_first_ones() {
    let dir = copy_upto("checkpointed", 21);
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&[
        "history",
        d,
        "--follow",
        "--interval",
        "100ms",
        "--limit",
        "2",
    ]);
    let first = f.next(4);
    assert!(first[0].starts_with("version  timestamp"), "{first:?}");
    assert!(first[1].starts_with("-------"), "{first:?}");
    assert!(first[2].starts_with("20 "), "{first:?}");
    assert!(first[3].starts_with("21 "), "{first:?}");
    land("checkpointed", &dir, 22);
    let row = f.next(1);
    assert!(row[0].starts_with("22 "), "{row:?}");
    let (code, rest, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.is_empty(), "{rest:?}");
}

/// `deltalens history T --follow | head -1`: the command ends once the reader has gone,
/// though no new commit comes to fail a write.
#[test]
fn a_closed_pipe_stops_following_without_a_new_commit() {
    let dir = copy_upto("checkpointed", 23);
    let d = dir.to_str().unwrap();
    let mut child = bin()
        .args([
            "history",
            d,
            "--follow",
            "--interval",
            "100ms",
            "--limit",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    stdout.read_exact(&mut one).unwrap();
    drop(stdout);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("deltalens went on following a closed pipe");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// The rows `changes` prints on the whole fixture with `args`, sorted (a scan's rows come
/// in file-completion order).
fn one_shot_changes(name: &str, args: &[&str]) -> Vec<String> {
    let t = fixture(name);
    let mut all = vec!["changes", t.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
fn changes_follow_writes_the_feed_the_one_shot_command_writes() {
    // cdf: versions 0..=3 with a change data feed; 2 and 3 land while following
    let want = one_shot_changes("cdf", &["--from", "0", "--format", "jsonl"]);
    let first = one_shot_changes("cdf", &["--from", "0", "--to", "1", "--format", "jsonl"]);
    assert!(!first.is_empty() && want.len() > first.len());
    let dir = copy_upto("cdf", 1);
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&[
        "changes",
        d,
        "--from",
        "0",
        "--follow",
        "--interval",
        "100ms",
        "--format",
        "jsonl",
    ]);
    let mut got = f.next(first.len());
    f.quiet_for(300);
    land("cdf", &dir, 2);
    land("cdf", &dir, 3);
    got.extend(f.next(want.len() - first.len()));
    let (code, rest, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.is_empty(), "{rest:?}");
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn ctrl_c_ends_a_json_array_whole() {
    let dir = copy_upto("cdf", 3);
    let d = dir.to_str().unwrap();
    let want = one_shot_changes("cdf", &["--from", "0", "--format", "jsonl"]).len();
    let mut f = Following::start(&[
        "changes",
        d,
        "--from",
        "0",
        "--follow",
        "--interval",
        "100ms",
        "--format",
        "json",
    ]);
    // every row written (each is an object with a _change_type), then Ctrl-C
    f.until("every row", |b| change_rows(b) == want);
    let (code, rest, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = deltalens_json::from_str(&rest).expect("one JSON array");
    assert_eq!(doc.as_array().unwrap().len(), want);
}

/// What pyarrow reads in a Parquet file: its row count (None without pyarrow).
fn parquet_rows(path: &Path) -> Option<usize> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, pyarrow.parquet as pq; print(pq.read_table(sys.argv[1]).num_rows)",
        ])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // without pyarrow there is nothing to check with; any other failure is the file's
        assert!(
            err.contains("No module named"),
            "pyarrow cannot read {path:?}: {err}"
        );
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// A Parquet file has its footer when following stops, by Ctrl-C or at --limit.
#[test]
fn a_followed_parquet_file_is_whole_when_following_stops() {
    let dir = copy_upto("cdf", 3);
    let d = dir.to_str().unwrap();
    let want = one_shot_changes("cdf", &["--from", "0", "--format", "jsonl"]).len();
    let out = dir.parent().unwrap().join("feed.parquet");
    let o = out.to_str().unwrap();
    let args = [
        "changes",
        d,
        "--from",
        "0",
        "--follow",
        "--interval",
        "100ms",
        "--format",
        "parquet",
        "--output",
        o,
    ];
    // at --limit: ends by itself, with exactly those rows
    let mut with_limit = args.to_vec();
    with_limit.extend(["--limit", "3"]);
    let (code, _, err) = Following::start(&with_limit).wait();
    assert_eq!(code, Some(0), "{err}");
    if let Some(n) = parquet_rows(&out) {
        assert_eq!(n, 3);
    }
    // by Ctrl-C once the file is there (made with the first rows)
    std::fs::remove_file(&out).unwrap();
    let f = Following::start(&args);
    let start = Instant::now();
    while !out.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "no output file");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (code, _, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    let bytes = std::fs::read(&out).unwrap();
    assert!(
        bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "no footer"
    );
    if let Some(n) = parquet_rows(&out) {
        assert!(n <= want, "{n} rows of {want}");
    }
}

#[test]
fn changes_follow_waits_for_a_version_to_come_and_ends_at_the_limit() {
    let dir = copy_upto("cdf", 1);
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&[
        "changes",
        d,
        "--from",
        "2",
        "--follow",
        "--interval",
        "100ms",
        "--json",
        "--limit",
        "1",
    ]);
    f.quiet_for(600);
    land("cdf", &dir, 2);
    land("cdf", &dir, 3);
    // one row, then it ends by itself
    let (code, rest, err) = f.wait();
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<&str> = rest.lines().collect();
    assert_eq!(rows.len(), 1, "{rest:?}");
    let row: Value = deltalens_json::from_str(rows[0]).unwrap();
    assert_eq!(row["_commit_version"], 2, "{row}");
}

#[test]
fn a_commit_that_changes_the_columns_ends_following_with_its_version() {
    // demo: a change data feed; version 5 adds a column (schema merge)
    let first: Vec<Value> =
        one_shot_changes("demo", &["--from", "3", "--to", "4", "--format", "jsonl"])
            .iter()
            .map(|l| deltalens_json::from_str(l).unwrap())
            .collect();
    assert!(!first.is_empty());
    let dir = copy_upto("demo", 4);
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&[
        "changes",
        d,
        "--from",
        "3",
        "--follow",
        "--interval",
        "100ms",
        "--format",
        "json",
    ]);
    f.until("the rows of 3 and 4", |b| change_rows(b) == first.len());
    land("demo", &dir, 5);
    let (code, rest, err) = f.wait();
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("version 5 changes the table's columns")
            && err.contains("deltalens changes --from 5"),
        "{err}"
    );
    // the document of the rows before it is whole
    let doc: Value = deltalens_json::from_str(&rest).expect("one JSON array");
    let mut got: Vec<String> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect();
    let mut want: Vec<String> = first.iter().map(Value::to_string).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn a_from_timestamp_still_to_come_is_waited_for() {
    // every commit of cdf was made before now: following from now prints only what lands
    let dir = copy_upto("cdf", 1);
    let d = dir.to_str().unwrap();
    let mut f = Following::start(&[
        "changes",
        d,
        "--from-timestamp",
        "2000-01-01",
        "--follow",
        "--interval",
        "100ms",
        "--json",
    ]);
    let rows = |b: &[u8]| b.iter().filter(|c| **c == b'\n').count();
    let first = one_shot_changes("cdf", &["--from", "0", "--to", "1", "--format", "jsonl"]);
    f.until("the rows of 0 and 1", |b| rows(b) == first.len());
    let (code, _, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    // after the newest commit: nothing, and no error, until a commit at or after it
    let mut f = Following::start(&[
        "changes",
        d,
        "--from-timestamp",
        "2999-01-01",
        "--follow",
        "--interval",
        "100ms",
        "--json",
    ]);
    f.quiet_for(600);
    land("cdf", &dir, 2); // made long before 2999: passed over
    f.quiet_for(600);
    let (code, rest, err) = f.interrupt();
    assert_eq!(code, Some(0), "{err}");
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn follow_arguments_are_checked_before_the_table_is_opened() {
    let t = fixture("cdf");
    let t = t.to_str().unwrap();
    for (args, says) in [
        (
            vec!["changes", t, "--from", "0", "--to", "2", "--follow"],
            "cannot be used with",
        ),
        (vec!["history", t, "--interval", "5s"], "--follow"),
        (
            vec!["history", t, "--follow", "--interval", "10ms"],
            "between 100 ms and 24 h",
        ),
        (
            vec!["history", t, "--follow", "--interval", "soon"],
            "duration",
        ),
        (vec!["history", t, "--follow", "-vv"], "-v or --io-stats"),
        (
            vec!["changes", t, "--from", "0", "--follow", "--output", "x.txt"],
            "another --format with --output",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

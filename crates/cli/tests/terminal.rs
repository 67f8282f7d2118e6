//! Every command in every format, on a terminal and through a pipe, over a table whose
//! column names, values, partition values, metadata and commits are hostile text: ESC
//! sequences (OSC 52 clipboard, OSC 0 title, OSC 8 link, colours), BEL, BS, CR, DEL, C1
//! controls, bidi controls, line separators, zero-width characters.
//!
//! Piped, data formats are exact: JSON parses to the very strings, CSV and TSV read back
//! byte for byte. On a terminal (`DELTALENS_ASSUME_TTY=1`, which `main` reads to treat
//! stdout and stderr as terminals) nothing a terminal acts on or that hides text gets
//! through, and JSON is still JSON with the same strings.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use deltalens_present::{Format, encode};
use serde_json::{Value, json};

const ID: &str = "id\u{1b}[2J\u{200b}";
const NAME: &str = "name\u{202e}gpj.exe";
const NOTE: &str = "note\u{9b}31m,\"q\"\n\u{feff}";
const PART: &str = "p\u{1b}]0;title\u{7}";

/// The hostile strings, every value of `NAME` (and, shifted, of `NOTE`).
const HOSTILE: &[&str] = &[
    "\u{1b}]52;c;ZXZpbA==\u{7}",
    "\u{1b}]0;pwned\u{7}title",
    "\u{1b}]8;;http://evil.example/\u{1b}\\link\u{1b}]8;;\u{1b}\\",
    "\u{1b}[31mred\u{1b}[0m\u{1b}[2J",
    "bell\u{7}back\u{8}\u{8}space\u{7f}del",
    "cr\rover\r\n",
    "c1 \u{9b}2J \u{85}nel \u{9d}0;t\u{9c}",
    "invoice\u{202e}fdp.exe",
    "\u{202a}lre\u{202b}rle\u{202c}pdf\u{202d}lro",
    "\u{2066}lri\u{2067}rli\u{2068}fsi\u{2069}pdi",
    "mark\u{200e}lrm\u{200f}rlm\u{61c}alm",
    "line\u{2028}sep\u{2029}para",
    "pay\u{200b}pal\u{200c}zwnj\u{200d}zwj\u{feff}bom",
    "csv \"quote\", comma\nnewline\ttab\\backslash\\N",
    "日本語 🦀 é",
    "\\x1b[31m literal \\u{202e}",
];

/// The partition value of each of the two files.
const PARTS: [&str; 2] = [
    "v\u{1b}]8;;http://evil.example/\u{1b}\\x\u{1b}]8;;\u{1b}\\",
    "w\u{202e}\u{200b}\u{9b}2J",
];

/// Whether `c` may reach a terminal: newlines and tabs; no other C0 control, no DEL, no
/// C1, no bidi control, no line or paragraph separator, no zero-width character.
fn forbidden(c: char) -> bool {
    let u = c as u32;
    (u < 0x20 && c != '\n' && c != '\t')
        || (0x7f..=0x9f).contains(&u)
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
        || matches!(u, 0x200e | 0x200f | 0x61c | 0x2028 | 0x2029 | 0xfeff)
        || (0x200b..=0x200d).contains(&u)
}

fn assert_safe(what: &str, bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| panic!("{what}: not UTF-8: {e}"));
    if let Some((i, c)) = text.char_indices().find(|(_, c)| forbidden(*c)) {
        let from = text[..i].char_indices().rev().nth(30).map_or(0, |(j, _)| j);
        panic!(
            "{what}: U+{:04X} reaches the terminal at byte {i}: {:?}",
            c as u32,
            &text[from..i]
        );
    }
}

/// The table: two commits, a file each, hostile everywhere.
struct Table {
    dir: PathBuf,
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Row `i`: its id, name and note.
fn row(i: usize) -> (i64, &'static str, &'static str) {
    (i as i64, HOSTILE[i], HOSTILE[(i + 5) % HOSTILE.len()])
}

/// The rows of file `f` (the first half of HOSTILE, then the second).
fn rows_of(f: usize) -> std::ops::Range<usize> {
    let half = HOSTILE.len() / 2;
    if f == 0 { 0..half } else { half..HOSTILE.len() }
}

fn hostile_table() -> Table {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir =
        std::env::temp_dir().join(format!("deltalens-hostile-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(dir.join("_delta_log")).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new(ID, DataType::Int64, true),
        Field::new(NAME, DataType::Utf8, true),
        Field::new(NOTE, DataType::Utf8, true),
    ]));
    let mut adds = Vec::new();
    for (f, part) in PARTS.iter().enumerate() {
        let rows: Vec<_> = rows_of(f).map(row).collect();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
        ];
        let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
        let bytes = encode(Format::Parquet, &schema, &[batch]).unwrap();
        let path = format!("part-{f}.parquet");
        std::fs::write(dir.join(&path), &bytes).unwrap();
        adds.push(json!({"add": {
            "path": path,
            "partitionValues": {PART: part},
            "size": bytes.len(),
            "modificationTime": 1_700_000_000_000i64 + f as i64,
            "dataChange": true,
            "stats": json!({"numRecords": rows.len()}).to_string(),
        }}));
    }
    let field = |name: &str, ty: &str| json!({"name": name, "type": ty, "nullable": true, "metadata": {"comment": HOSTILE[7]}});
    let schema_string = json!({"type": "struct", "fields": [
        field(ID, "long"), field(NAME, "string"), field(NOTE, "string"), field(PART, "string"),
    ]})
    .to_string();
    let commit = |v: usize| {
        json!({"commitInfo": {
            "timestamp": 1_700_000_000_000i64 + v as i64,
            "operation": format!("WRITE{}", HOSTILE[v]),
            "operationParameters": {"mode\u{202e}": HOSTILE[v + 2]},
            "userName": HOSTILE[v + 11],
            "isBlindAppend": true,
        }})
    };
    let v0 = [
        commit(0),
        json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
        json!({"metaData": {
            "id": "hostile-0",
            "name": HOSTILE[1],
            "description": HOSTILE[8],
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema_string,
            "partitionColumns": [PART],
            "createdTime": 1_700_000_000_000i64,
            "configuration": {"key\u{1b}[2J": HOSTILE[12], "delta.enableChangeDataFeed": "true"},
        }}),
        adds[0].clone(),
    ];
    let v1 = [commit(1), adds[1].clone()];
    for (v, actions) in [(0, &v0[..]), (1, &v1[..])] {
        let text: String = actions.iter().map(|a| format!("{a}\n")).collect();
        std::fs::write(dir.join(format!("_delta_log/{v:020}.json")), text).unwrap();
    }
    Table { dir }
}

fn run(args: &[&str], tty: bool) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_deltalens"));
    c.args(args);
    if tty {
        c.env("DELTALENS_ASSUME_TTY", "1");
    } else {
        c.env_remove("DELTALENS_ASSUME_TTY");
    }
    c.output().expect("run deltalens")
}

/// The expected rows: column name to value.
fn expected() -> BTreeMap<String, BTreeMap<String, String>> {
    (0..2)
        .flat_map(|f| rows_of(f).map(move |i| (f, i)))
        .map(|(f, i)| {
            let (id, name, note) = row(i);
            let cells = [
                (ID, id.to_string()),
                (NAME, name.to_string()),
                (NOTE, note.to_string()),
                (PART, PARTS[f].to_string()),
            ];
            let cells = cells.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            (id.to_string(), cells)
        })
        .collect()
}

/// The table's columns of each row, by id (other columns, like the change feed's, left).
fn by_id(rows: Vec<BTreeMap<String, String>>) -> BTreeMap<String, BTreeMap<String, String>> {
    rows.into_iter()
        .map(|mut r| {
            r.retain(|k, _| [ID, NAME, NOTE, PART].contains(&k.as_str()));
            (r.get(ID).cloned().unwrap_or_default(), r)
        })
        .collect()
}

fn json_rows(objects: &[Value]) -> Vec<BTreeMap<String, String>> {
    objects
        .iter()
        .map(|o| {
            o.as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => s.clone(),
                        v => v.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect()
        })
        .collect()
}

/// RFC 4180 records.
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut cell) = (Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => cell.push(c),
        }
    }
    assert!(cell.is_empty() && record.is_empty(), "CSV ends in a record");
    records
}

fn tsv_records(text: &str) -> Vec<Vec<String>> {
    let unescape = |s: &str| {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('\\') => out.push('\\'),
                other => panic!("TSV escape \\{other:?}"),
            }
        }
        out
    };
    text.lines()
        .map(|l| l.split('\t').map(unescape).collect())
        .collect()
}

fn records_as_rows(records: Vec<Vec<String>>) -> Vec<BTreeMap<String, String>> {
    let mut it = records.into_iter();
    let header = it.next().expect("a header line");
    it.map(|r| header.iter().cloned().zip(r).collect())
        .collect()
}

/// Every string in a JSON document, keys included.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_command_in_every_format_is_exact_through_a_pipe_and_safe_on_a_terminal() {
    let table = hostile_table();
    let t = table.dir.to_string_lossy().into_owned();
    let sql = format!("SELECT * FROM '{t}'");
    let want = expected();
    let row_commands: Vec<Vec<&str>> = vec![
        vec!["scan", &t],
        vec!["changes", &t, "--from", "0"],
        vec!["query", &sql],
        vec!["sql", &sql],
    ];
    let mut checked = 0;
    for tty in [false, true] {
        let mode = if tty { "tty" } else { "pipe" };
        for base in &row_commands {
            let mut variants: Vec<(Vec<&str>, &str)> = ["table", "csv", "tsv", "json", "jsonl"]
                .into_iter()
                .map(|f| ([&base[..], &["--format", f]].concat(), f))
                .collect();
            if matches!(base[0], "scan" | "changes") {
                variants.push(([&base[..], &["--json"]].concat(), "jsonl"));
            }
            for (args, format) in variants {
                let what = format!("{mode}: {args:?}");
                let out = run(&args, tty);
                assert!(
                    out.status.success(),
                    "{what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                if tty || format == "table" {
                    assert_safe(&what, &out.stdout);
                }
                let text = String::from_utf8(out.stdout).unwrap();
                let rows = match format {
                    "json" => {
                        let v: Value = deltalens_json::from_str(&text)
                            .unwrap_or_else(|e| panic!("{what}: not JSON: {e}\n{text}"));
                        Some(json_rows(v.as_array().unwrap()))
                    }
                    "jsonl" => {
                        let lines: Result<Vec<Value>, _> =
                            text.lines().map(deltalens_json::from_str).collect();
                        let lines = lines.unwrap_or_else(|e| panic!("{what}: not JSON lines: {e}"));
                        Some(json_rows(&lines))
                    }
                    "csv" if !tty => Some(records_as_rows(csv_records(&text))),
                    "tsv" if !tty => Some(records_as_rows(tsv_records(&text))),
                    _ => None,
                };
                if let Some(rows) = rows {
                    assert_eq!(by_id(rows), want, "{what}");
                }
                if tty && matches!(format, "csv" | "tsv") {
                    assert!(text.contains("\\x1b]52;"), "{what}: escapes shown: {text}");
                }
                checked += 1;
            }
            // binary rows are refused on a terminal, written through a pipe
            let args = [&base[..], &["--format", "parquet"]].concat();
            let out = run(&args, tty);
            assert_eq!(out.status.success(), !tty, "{mode}: {args:?}");
            assert_safe(&format!("{mode}: stderr of {args:?}"), &out.stderr);
        }
        let documents: Vec<Vec<&str>> = vec![
            vec!["info", &t],
            vec!["schema", &t],
            vec!["history", &t],
            vec!["files", &t],
            vec!["files", &t, "--limit", "5"],
            vec!["plan", &t],
            vec!["health", &t, "--now", "2030-01-01"],
            vec!["diff", &t, "0", "1"],
            vec!["bench", &t, "--runs", "1"],
        ];
        for base in &documents {
            for json in [false, true] {
                let args = if json {
                    [&base[..], &["--json"]].concat()
                } else {
                    base.clone()
                };
                let what = format!("{mode}: {args:?}");
                let out = run(&args, tty);
                assert!(
                    out.status.success(),
                    "{what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                // text is for people: escaped on a terminal and in a pipe alike
                if tty || !json {
                    assert_safe(&what, &out.stdout);
                }
                assert_safe(&format!("{what} (stderr)"), &out.stderr);
                if !json {
                    checked += 1;
                    continue;
                }
                let doc: Value = deltalens_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                    panic!(
                        "{what}: not JSON: {e}\n{}",
                        String::from_utf8_lossy(&out.stdout)
                    )
                });
                let mut found = Vec::new();
                strings(&doc, &mut found);
                let must: Vec<&str> = match base[0] {
                    "info" => vec![HOSTILE[1], HOSTILE[8], "key\u{1b}[2J", HOSTILE[12], PART],
                    "schema" => vec![ID, NAME, NOTE, PART, HOSTILE[7]],
                    "history" => vec!["mode\u{202e}", HOSTILE[2], HOSTILE[11], HOSTILE[12]],
                    "files" => vec![PART, PARTS[0], PARTS[1]],
                    "diff" => vec![NAME, HOSTILE[8], PARTS[1]],
                    _ => vec![],
                };
                for s in must {
                    assert!(found.iter().any(|f| f == s), "{what}: {s:?} not in {doc}");
                }
                if base[0] == "history" {
                    let ops: Vec<&str> = doc
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(|e| e["operation"].as_str())
                        .collect();
                    let want = [
                        format!("WRITE{}", HOSTILE[1]),
                        format!("WRITE{}", HOSTILE[0]),
                    ];
                    assert_eq!(ops, want, "{what}");
                }
                checked += 1;
            }
        }
        // an error names a hostile column: shown, never obeyed
        for json in [false, true] {
            let mut args = vec!["scan", &t, "--columns", "nope\u{1b}]52;c;eA==\u{7}\u{202e}"];
            if json {
                args.push("--json");
            }
            let out = run(&args, tty);
            assert!(!out.status.success(), "{mode}: {args:?}");
            // text is escaped everywhere; JSON on a terminal (piped, it is exact)
            if tty || !json {
                assert_safe(&format!("{mode}: stderr of {args:?}"), &out.stderr);
            }
            if json {
                let e: Value = deltalens_json::from_slice(&out.stderr).unwrap_or_else(|e| {
                    panic!(
                        "{mode}: error not JSON: {e}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    )
                });
                let message = e["error"]["message"].as_str().unwrap();
                // the table's column names, as they are
                assert!(message.contains(ID) && message.contains(NAME), "{message}");
            }
        }
    }
    assert!(
        checked >= 2 * (4 * 5 + 2 + 9 * 2),
        "{checked} outputs checked"
    );
}

/// Rows written to `--output FILE` are the data, even with a terminal on stdout.
#[test]
fn an_output_file_holds_the_exact_rows_on_a_terminal_too() {
    let table = hostile_table();
    let t = table.dir.to_string_lossy().into_owned();
    let file: PathBuf = table.dir.join("out.csv");
    let f = file.to_string_lossy().into_owned();
    let out = run(&["scan", &t, "--format", "csv", "--output", &f], true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(Path::new(&file)).unwrap();
    assert_eq!(by_id(records_as_rows(csv_records(&text))), expected());
}

/// On a real terminal (a pty by util-linux `script`), without `DELTALENS_ASSUME_TTY`, the
/// same escaping: the layer asks the streams themselves. (`--quiet`: `script` merges
/// stderr, where the progress line is drawn.)
#[test]
fn a_real_terminal_is_detected() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let table = hostile_table();
    let t = table.dir.to_string_lossy().into_owned();
    let bin = env!("CARGO_BIN_EXE_deltalens");
    for (args, json) in [
        (format!("scan {t} --format csv --quiet"), false),
        (format!("scan {t} --format json --quiet"), true),
        (format!("schema {t} --json --quiet"), true),
    ] {
        let cmd = format!("{bin} {args}");
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env_remove("DELTALENS_ASSUME_TTY")
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd}");
        // the pty writes each newline as CR LF
        let text = String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n");
        assert_safe(&cmd, text.as_bytes());
        if json {
            let v: Value = deltalens_json::from_str(&text).unwrap_or_else(|e| panic!("{cmd}: {e}"));
            let mut found = Vec::new();
            strings(&v, &mut found);
            assert!(found.iter().any(|s| s == NAME), "{cmd}: {v}");
        } else {
            assert!(text.contains("\\x1b]52;"), "{cmd}: {text}");
        }
    }
}

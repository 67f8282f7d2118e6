//! The commands: call the core, then render JSON or text.

use deltalens_core::time_travel::format_timestamp;
use deltalens_core::{Error, Table, VersionSpec};
use serde_json::{Value, json};

use crate::render;

fn to_json(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into());
    s.push('\n');
    s
}

/// Hand the snapshot to the process exit instead of freeing it entry by entry: the CLI
/// prints and exits, and dropping 100,000 file entries one by one is ~10% of an `info`.
fn release(s: deltalens_core::Snapshot) {
    std::mem::forget(s);
}

fn opt_ts(ms: Option<i64>) -> String {
    ms.map(format_timestamp).unwrap_or_default()
}

pub async fn info(table: &Table, at: VersionSpec, json: bool) -> Result<String, Error> {
    let s = table.snapshot(at).await?;
    let md = &s.metadata;
    let p = &s.protocol;
    let doc = json!({
        "location": table.location(),
        "version": s.version,
        "num_files": s.num_files(),
        "size_bytes": s.size_bytes(),
        "num_rows": s.num_rows(),
        "protocol": {
            "min_reader_version": p.min_reader_version,
            "min_writer_version": p.min_writer_version,
            "reader_features": p.reader_features,
            "writer_features": p.writer_features,
        },
        "properties": s.properties(),
        "partition_columns": s.partition_columns(),
        "created_time": md.created_time,
        "name": md.name,
        "description": md.description,
        "id": md.id,
        "checkpoint_version": s.checkpoint_version,
    });
    if json {
        release(s);
        return Ok(to_json(&doc));
    }
    let list = |v: &Option<Vec<String>>| v.as_ref().map(|f| f.join(", ")).unwrap_or_default();
    let rows = vec![
        ("location", table.location().to_string()),
        ("version", s.version.to_string()),
        ("files", s.num_files().to_string()),
        (
            "size",
            format!(
                "{} ({} bytes)",
                render::bytes(s.size_bytes()),
                s.size_bytes()
            ),
        ),
        (
            "rows",
            s.num_rows().map_or_else(
                || "unknown (some files have no statistics)".into(),
                |n| n.to_string(),
            ),
        ),
        ("partition columns", s.partition_columns().join(", ")),
        (
            "protocol",
            format!(
                "reader {}, writer {}",
                p.min_reader_version, p.min_writer_version
            ),
        ),
        ("reader features", list(&p.reader_features)),
        ("writer features", list(&p.writer_features)),
        ("id", md.id.clone()),
        ("name", md.name.clone().unwrap_or_default()),
        ("description", md.description.clone().unwrap_or_default()),
        ("created", opt_ts(md.created_time)),
        (
            "checkpoint",
            s.checkpoint_version
                .map(|v| v.to_string())
                .unwrap_or_default(),
        ),
    ];
    let props = s.properties();
    let mut out = render::pairs(&rows);
    if !props.is_empty() {
        out.push_str("\nproperties:\n");
        let rows: Vec<Vec<String>> = props.into_iter().map(|(k, v)| vec![k, v]).collect();
        out.push_str(&render::table(&["key", "value"], &rows));
    }
    release(s);
    Ok(out)
}

pub async fn schema(table: &Table, at: VersionSpec, json: bool) -> Result<String, Error> {
    let s = table.snapshot(at).await?;
    if json {
        return Ok(to_json(&s.schema.raw));
    }
    let partition = s.partition_columns();
    let rows: Vec<Vec<String>> = s
        .schema
        .fields()
        .iter()
        .map(|f| {
            vec![
                f.name.clone(),
                f.data_type.type_string(),
                if f.nullable {
                    "yes".into()
                } else {
                    "no".into()
                },
                if partition.contains(&f.name) {
                    "yes".into()
                } else {
                    String::new()
                },
                f.physical_name().unwrap_or_default().to_string(),
                f.comment().unwrap_or_default().to_string(),
            ]
        })
        .collect();
    Ok(render::table(
        &[
            "column",
            "type",
            "nullable",
            "partition",
            "physical name",
            "comment",
        ],
        &rows,
    ))
}

pub async fn history(table: &Table, limit: Option<usize>, json: bool) -> Result<String, Error> {
    let h = table.history(limit).await?;
    if json {
        return Ok(to_json(&serde_json::to_value(&h).unwrap_or(Value::Null)));
    }
    let rows: Vec<Vec<String>> = h
        .iter()
        .map(|e| {
            vec![
                e.version.to_string(),
                opt_ts(e.in_commit_timestamp.or(e.timestamp)),
                e.operation.clone().unwrap_or_default(),
                e.user_name.clone().unwrap_or_default(),
                e.read_version.map(|v| v.to_string()).unwrap_or_default(),
                e.is_blind_append.map(|v| v.to_string()).unwrap_or_default(),
                e.operation_parameters
                    .as_ref()
                    .map(render::cell)
                    .unwrap_or_default(),
            ]
        })
        .collect();
    Ok(render::table(
        &[
            "version",
            "timestamp",
            "operation",
            "user",
            "read_version",
            "blind_append",
            "parameters",
        ],
        &rows,
    ))
}

pub async fn files(table: &Table, at: VersionSpec, json: bool) -> Result<String, Error> {
    let s = table.snapshot(at).await?;
    let mut docs = Vec::with_capacity(s.files.len());
    for f in &s.files {
        docs.push(json!({
            "path": f.path,
            "size": f.size,
            "modification_time": f.modification_time,
            "partition_values": s.partition_values_json(f)?,
            "stats": f.stats_json(),
            "deletion_vector": f.deletion_vector,
        }));
    }
    if json {
        return Ok(to_json(&Value::Array(docs)));
    }
    let rows: Vec<Vec<String>> = s
        .files
        .iter()
        .zip(&docs)
        .map(|(f, d)| {
            let parts = d["partition_values"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", render::cell(v)))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default();
            vec![
                f.path.clone(),
                render::bytes(f.size),
                f.num_records().map(|n| n.to_string()).unwrap_or_default(),
                parts,
                f.deletion_vector
                    .as_ref()
                    .map(|d| d.cardinality.to_string())
                    .unwrap_or_default(),
                format_timestamp(f.modification_time),
            ]
        })
        .collect();
    let mut out = render::table(
        &[
            "path",
            "size",
            "rows",
            "partition",
            "deleted rows",
            "modified",
        ],
        &rows,
    );
    out.push_str(&format!(
        "{} files, {} at version {}\n",
        s.num_files(),
        render::bytes(s.size_bytes()),
        s.version
    ));
    Ok(out)
}

/// A one-line progress report on stderr, drawn only when both stdout and stderr are
/// terminals (never when the output is piped).
struct Progress {
    on: bool,
    total_files: usize,
    total_bytes: i64,
    last: std::time::Instant,
}

impl Progress {
    fn new(total_files: usize, total_bytes: i64) -> Self {
        use std::io::IsTerminal;
        Progress {
            on: std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
            total_files,
            total_bytes,
            last: std::time::Instant::now(),
        }
    }

    fn update(&mut self, read: u64, rows: usize) {
        if !self.on || self.last.elapsed() < std::time::Duration::from_millis(200) {
            return;
        }
        self.last = std::time::Instant::now();
        eprint!(
            "\r\x1b[Kreading {} files ({}): {} fetched, {rows} rows",
            self.total_files,
            render::bytes(self.total_bytes),
            render::bytes(read as i64)
        );
    }

    fn clear(&self) {
        if self.on {
            eprint!("\r\x1b[K");
        }
    }
}

fn out_stream(rows: &crate::RowArgs) -> Result<Box<dyn std::io::Write + Send>, String> {
    Ok(match &rows.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    })
}

fn scan_options(rows: &crate::RowArgs) -> Result<deltalens_core::scan::ScanOptions, String> {
    let filter = match &rows.filter {
        Some(f) => Some(deltalens_core::predicate::Predicate::parse(f).map_err(|e| e.to_string())?),
        None => None,
    };
    Ok(deltalens_core::scan::ScanOptions {
        columns: rows.columns.clone(),
        limit: rows.limit,
        batch_size: rows.batch_size,
        filter,
        prune: !rows.no_pruning,
    })
}

pub async fn scan(
    t: &crate::Opened,
    at: VersionSpec,
    rows: &crate::RowArgs,
) -> Result<String, String> {
    use deltalens_core::scan::Scan;
    let s = t.table.snapshot(at).await.map_err(|e| e.to_string())?;
    let scan = Scan::new(&s, t.table.location(), scan_options(rows)?).map_err(|e| e.to_string())?;
    let schema = scan.schema();
    let mut writer = crate::output::Writer::new(rows.format, out_stream(rows)?, &schema)?;
    let mut progress = Progress::new(s.num_files(), s.size_bytes());
    let mut write_err = None;
    let mut n = 0usize;
    let counter = t.counter.clone();
    scan.execute(t.table.storage().as_ref(), &mut |b| {
        n += b.num_rows();
        progress.clear();
        if let Err(e) = writer.write(&b) {
            write_err = Some(e);
            return Ok(false);
        }
        progress.update(counter.stats().bytes, n);
        Ok(true)
    })
    .await
    .map_err(|e| e.to_string())?;
    progress.clear();
    if let Some(e) = write_err {
        return Err(e);
    }
    writer.finish(&schema)?;
    release(s);
    Ok(String::new())
}

pub async fn changes(
    t: &crate::Opened,
    from: u64,
    to: Option<u64>,
    rows: &crate::RowArgs,
) -> Result<String, String> {
    use deltalens_core::changes::Changes;
    let c = Changes::new(&t.table, from, to, scan_options(rows)?)
        .await
        .map_err(|e| e.to_string())?;
    let schema = c.schema(&t.table).map_err(|e| e.to_string())?;
    let mut writer = crate::output::Writer::new(rows.format, out_stream(rows)?, &schema)?;
    let mut write_err = None;
    c.execute(&t.table, &mut |b| {
        if let Err(e) = writer.write(&b) {
            write_err = Some(e);
            return Ok(false);
        }
        Ok(true)
    })
    .await
    .map_err(|e| e.to_string())?;
    if let Some(e) = write_err {
        return Err(e);
    }
    writer.finish(&schema)?;
    Ok(String::new())
}

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
    let doc = deltalens_report::overview(table.location(), &s);
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
            match s.size_bytes() {
                Ok(n) => format!("{} ({n} bytes)", render::bytes(n)),
                Err(e) => format!("unknown: {e}"),
            },
        ),
        (
            "rows",
            match s.num_rows() {
                Ok(Some(n)) => n.to_string(),
                Ok(None) => "unknown (some files have no statistics)".into(),
                Err(e) => format!("unknown: {e}"),
            },
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
    let docs = deltalens_report::files(&s)?;
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
        s.size_bytes()
            .map_or_else(|_| "unknown size".into(), render::bytes),
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
        max_decoded_bytes: None,
    })
}

pub async fn scan(
    t: &crate::Opened,
    at: VersionSpec,
    rows: &crate::RowArgs,
) -> Result<String, String> {
    let s = t.table.snapshot(at).await.map_err(|e| e.to_string())?;
    let scan = s.scan(scan_options(rows)?).map_err(|e| e.to_string())?;
    let schema = scan.schema();
    let mut writer = crate::output::Writer::new(rows.format, out_stream(rows)?, &schema)?;
    let mut progress = Progress::new(s.num_files(), s.size_bytes().unwrap_or(0));
    let mut write_err = None;
    let mut n = 0usize;
    let counter = t.counter.clone();
    let threads = rows
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(s.num_files().max(1));
    if rows.limit.is_none() && threads > 1 {
        // decode files on `threads` threads; their reads run on the process' runtime
        // (its handle), whose workers keep serving the connections the storage pools
        // while this thread blocks below. Batches come back through a small channel, so
        // memory stays bounded.
        let handle = tokio::runtime::Handle::current();
        let (btx, brx) = std::sync::mpsc::sync_channel(threads * 2);
        let result: Result<(), String> = std::thread::scope(|scope| {
            let mut workers = Vec::new();
            for part in 0..threads {
                let (btx, scan, handle) = (btx.clone(), &scan, handle.clone());
                workers.push(scope.spawn(move || -> Result<(), String> {
                    handle
                        .block_on(
                            scan.execute_partition(part, threads, &mut |b| Ok(btx.send(b).is_ok())),
                        )
                        .map_err(|e| e.to_string())?;
                    Ok(())
                }));
            }
            drop(btx);
            for b in brx {
                n += b.num_rows();
                progress.clear();
                writer.write(&b)?;
                progress.update(counter.stats().bytes, n);
            }
            for w in workers {
                w.join().map_err(|_| "a scan thread failed".to_string())??;
            }
            Ok(())
        });
        progress.clear();
        result?;
        writer.finish(&schema)?;
        release(s);
        return Ok(String::new());
    }
    scan.execute(&mut |b| {
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
    let schema = c.schema().map_err(|e| e.to_string())?;
    let mut writer = crate::output::Writer::new(rows.format, out_stream(rows)?, &schema)?;
    let mut write_err = None;
    c.execute(&mut |b| {
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

fn batches_to_json(batches: &[arrow_array::RecordBatch]) -> Result<Vec<Value>, String> {
    let mut w = arrow_json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, arrow_json::writer::JsonArray>(Vec::new());
    for b in batches {
        w.write(b).map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())?;
    let bytes = w.into_inner();
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    match serde_json::from_slice(&bytes).map_err(|e| e.to_string())? {
        Value::Array(a) => Ok(a),
        _ => Ok(Vec::new()),
    }
}

pub async fn diff(
    t: &crate::Opened,
    v1: u64,
    v2: u64,
    limit: Option<usize>,
    columns: Option<Vec<String>>,
    json: bool,
) -> Result<String, String> {
    use deltalens_core::diff::TableDiff;
    let d = TableDiff::new(&t.table, v1, v2)
        .await
        .map_err(|e| e.to_string())?;
    let options = deltalens_core::scan::ScanOptions {
        columns,
        limit: if json {
            limit
        } else {
            Some(limit.unwrap_or(20))
        },
        ..Default::default()
    };
    let mut batches = Vec::new();
    d.rows(&options, &mut |b| {
        batches.push(b);
        Ok(true)
    })
    .await
    .map_err(|e| e.to_string())?;
    let est = |files: &[deltalens_core::actions::Add]| -> Option<i64> {
        files.iter().try_fold(0i64, |acc, f| {
            Some(acc + f.num_records()? - f.deletion_vector.as_ref().map_or(0, |d| d.cardinality))
        })
    };
    let dv_deleted: i64 = d
        .deletion_vectors_changed
        .iter()
        .map(|c| c.deleted_rows_to - c.deleted_rows_from)
        .sum();
    let rows_inserted = est(&d.files_added).map(|n| n - dv_deleted.min(0));
    let rows_deleted = est(&d.files_removed).map(|n| n + dv_deleted.max(0));
    let file = |f: &deltalens_core::actions::Add| json!({"path": f.path, "size": f.size, "num_records": f.num_records()});
    if json {
        let doc = json!({
            "from": d.from.version,
            "to": d.to.version,
            "files_added": d.files_added.iter().map(file).collect::<Vec<_>>(),
            "files_removed": d.files_removed.iter().map(file).collect::<Vec<_>>(),
            "deletion_vectors_changed": d.deletion_vectors_changed,
            "schema_changes": d.schema_changes,
            "partition_columns": {"from": d.from.partition_columns(), "to": d.to.partition_columns()},
            "protocol": d.protocol_change.as_ref().map(|(a, b)| json!({"from": a, "to": b})),
            "property_changes": d.property_changes,
            "rows_inserted": rows_inserted,
            "rows_deleted": rows_deleted,
            "rows": batches_to_json(&batches)?,
        });
        return Ok(to_json(&doc));
    }
    let mut out = format!(
        "diff of versions {} and {}\n\nfiles: +{} -{} ({} with changed deletion vectors)\nrows (from statistics): +{} -{}\n",
        d.from.version,
        d.to.version,
        d.files_added.len(),
        d.files_removed.len(),
        d.deletion_vectors_changed.len(),
        rows_inserted.map_or("?".into(), |n| n.to_string()),
        rows_deleted.map_or("?".into(), |n| n.to_string()),
    );
    if !d.schema_changes.is_empty() {
        out.push_str("\nschema:\n");
        let rows: Vec<Vec<String>> = d
            .schema_changes
            .iter()
            .map(|c| {
                vec![
                    c.column.clone(),
                    c.change.to_string(),
                    c.from.clone().unwrap_or_default(),
                    c.to.clone().unwrap_or_default(),
                ]
            })
            .collect();
        out.push_str(&render::table(&["column", "change", "from", "to"], &rows));
    }
    if d.partition_columns_changed {
        out.push_str(&format!(
            "\npartition columns: [{}] -> [{}]\n",
            d.from.partition_columns().join(", "),
            d.to.partition_columns().join(", ")
        ));
    }
    if let Some((a, b)) = &d.protocol_change {
        out.push_str(&format!(
            "\nprotocol: reader {} writer {} -> reader {} writer {} (reader features {:?} -> {:?}, writer features {:?} -> {:?})\n",
            a.min_reader_version, a.min_writer_version, b.min_reader_version, b.min_writer_version,
            a.reader_features, b.reader_features, a.writer_features, b.writer_features
        ));
    }
    if !d.property_changes.is_empty() {
        out.push_str("\nproperties:\n");
        let rows: Vec<Vec<String>> = d
            .property_changes
            .iter()
            .map(|c| {
                vec![
                    c.key.clone(),
                    c.from.clone().unwrap_or_default(),
                    c.to.clone().unwrap_or_default(),
                ]
            })
            .collect();
        out.push_str(&render::table(&["key", "from", "to"], &rows));
    }
    for (title, files) in [("added", &d.files_added), ("removed", &d.files_removed)] {
        if !files.is_empty() {
            out.push_str(&format!("\nfiles {title}:\n"));
            for f in files.iter() {
                out.push_str(&format!("  {} ({})\n", f.path, render::bytes(f.size)));
            }
        }
    }
    out.push_str("\nrows:\n");
    let schema = d.row_schema(&options).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    {
        let mut w = crate::output::Writer::new(crate::output::Format::Table, &mut buf, &schema)?;
        for b in &batches {
            w.write(b)?;
        }
        w.finish(&schema)?;
    }
    out.push_str(&String::from_utf8_lossy(&buf));
    Ok(out)
}

/// `deltalens query SQL`: the same parser and executor as the worker's `POST /v1/query`.
pub async fn query(
    sql: &str,
    options: &[(String, String)],
    format: crate::output::Format,
    io_stats: bool,
) -> Result<String, String> {
    let q = deltalens_query::parse_sql(sql).map_err(|e| e.to_string())?;
    let url = q.source.url();
    let store = deltalens_object_store::ObjectStoreStorage::open(url, options)
        .map_err(|e| e.to_string())?;
    let counter = std::sync::Arc::new(deltalens_storage::CountingStorage::new(store));
    let table = Table::new(counter.clone(), url);
    let out = deltalens_query::execute(&q, &table, None)
        .await
        .map_err(|e| e.to_string())?;
    let mut w = crate::output::Writer::new(
        format,
        std::io::BufWriter::new(std::io::stdout()),
        &out.schema,
    )?;
    for b in &out.batches {
        w.write(b)?;
    }
    w.finish(&out.schema)?;
    if io_stats {
        let s = counter.stats();
        eprintln!(
            "io: {} requests ({} list, {} get, {} head), {} bytes read",
            s.requests, s.lists, s.gets, s.heads, s.bytes
        );
    }
    Ok(String::new())
}

/// One benchmark run: open the latest snapshot and scan every row (all columns).
async fn bench_once(t: &crate::Opened) -> Result<(f64, f64, u64, u64), String> {
    let err = |e: Error| e.to_string();
    t.counter.reset();
    let start = std::time::Instant::now();
    let snap = t.table.snapshot(VersionSpec::Latest).await.map_err(err)?;
    let opened = start.elapsed().as_secs_f64();
    let scan = snap
        .scan(deltalens_core::scan::ScanOptions::default())
        .map_err(err)?;
    let mut rows = 0u64;
    // eight interleaved shares on this one thread, as the browser benchmark does
    scan.execute_interleaved(8, &mut |b| {
        rows += b.num_rows() as u64;
        Ok(true)
    })
    .await
    .map_err(err)?;
    let total = start.elapsed().as_secs_f64();
    Ok((opened, total, rows, t.counter.stats().bytes))
}

/// `deltalens bench`: `runs` timed runs of [`bench_once`] and their median.
pub async fn bench(t: &crate::Opened, runs: usize, json: bool) -> Result<String, String> {
    let mut out = Vec::with_capacity(runs);
    bench_once(t).await?; // warm-up, as the browser benchmark does
    for _ in 0..runs {
        out.push(bench_once(t).await?);
    }
    let mut totals: Vec<f64> = out.iter().map(|r| r.1).collect();
    totals.sort_by(f64::total_cmp);
    let median = totals.get(totals.len() / 2).copied().unwrap_or(0.0);
    let rows = out.first().map_or(0, |r| r.2);
    let bytes = out.first().map_or(0, |r| r.3);
    if json {
        let runs: Vec<Value> = out
            .iter()
            .map(|(o, t, _, _)| json!({"open_s": o, "total_s": t}))
            .collect();
        return Ok(format!(
            "{}\n",
            json!({"rows": rows, "bytes": bytes, "median_s": median, "runs": runs})
        ));
    }
    let mut s = String::new();
    for (i, (o, t, _, _)) in out.iter().enumerate() {
        s.push_str(&format!(
            "run {}: open {:.3} s, open+scan {:.3} s\n",
            i + 1,
            o,
            t
        ));
    }
    s.push_str(&format!(
        "median {median:.3} s: {rows} rows, {bytes} bytes, {:.1} M rows/s\n",
        rows as f64 / median.max(1e-9) / 1e6
    ));
    Ok(s)
}

//! Writing record batches: aligned text, CSV, JSON, JSON lines, Arrow IPC stream, Parquet.

use std::io::Write;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::SchemaRef;
use clap::ValueEnum;

use crate::error::CliError;

/// Output formats of `scan` and `changes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Jsonl,
    Arrow,
    Parquet,
}

type Res<T> = Result<T, CliError>;

/// Where rows go: the `--output` file, or stdout.
pub fn destination(path: Option<&Path>) -> Res<Box<dyn Write + Send>> {
    Ok(match path {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p).map_err(
            |source| CliError::CreateOutput {
                path: p.to_path_buf(),
                source,
            },
        )?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    })
}

/// A streaming writer for one output document.
pub enum Writer<W: Write + Send> {
    Table {
        out: W,
        names: Vec<String>,
        /// Rows held back until enough are seen to size the columns.
        pending: Vec<Vec<String>>,
        widths: Option<Vec<usize>>,
        rows: usize,
    },
    Csv(arrow_csv::Writer<W>),
    Json(arrow_json::Writer<W, arrow_json::writer::JsonArray>),
    Jsonl(arrow_json::Writer<W, arrow_json::writer::LineDelimited>),
    Arrow(arrow_ipc::writer::StreamWriter<W>),
    Parquet(parquet::arrow::ArrowWriter<W>),
}

const MAX_CELL: usize = 48;

fn cells(batch: &RecordBatch) -> Res<Vec<Vec<String>>> {
    let opts = FormatOptions::default().with_null("null");
    let fmts = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::WriteArrow)?;
    Ok((0..batch.num_rows())
        .map(|r| {
            fmts.iter()
                .map(|f| {
                    let s =
                        crate::render::terminal_safe(&f.value(r).to_string(), false).into_owned();
                    if s.chars().count() > MAX_CELL {
                        let t: String = s.chars().take(MAX_CELL - 1).collect();
                        format!("{t}…")
                    } else {
                        s
                    }
                })
                .collect()
        })
        .collect())
}

/// Rows looked at before column widths are fixed.
const TABLE_SIZING_ROWS: usize = 500;

fn size_columns(names: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([n.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

fn print_header(out: &mut impl Write, names: &[String], w: &[usize]) -> Res<()> {
    let head: Vec<String> = names
        .iter()
        .zip(w)
        .map(|(n, w)| pad(&crate::render::terminal_safe(n, false), *w))
        .collect();
    writeln!(out, "{}", head.join("  ").trim_end()).map_err(CliError::WriteIo)?;
    let rule: Vec<String> = w.iter().map(|w| "-".repeat(*w)).collect();
    writeln!(out, "{}", rule.join("  ")).map_err(CliError::WriteIo)
}

fn print_rows(out: &mut impl Write, w: &[usize], rows: &[Vec<String>]) -> Res<()> {
    for r in rows {
        let line: Vec<String> = r.iter().zip(w).map(|(c, w)| pad(c, *w)).collect();
        writeln!(out, "{}", line.join("  ").trim_end()).map_err(CliError::WriteIo)?;
    }
    Ok(())
}

fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(w.saturating_sub(n)))
}

impl<W: Write + Send> Writer<W> {
    pub fn new(format: Format, out: W, schema: &SchemaRef) -> Res<Self> {
        Ok(match format {
            Format::Table => Writer::Table {
                out,
                names: schema.fields().iter().map(|f| f.name().clone()).collect(),
                pending: Vec::new(),
                widths: None,
                rows: 0,
            },
            Format::Csv => {
                Writer::Csv(arrow_csv::WriterBuilder::new().with_header(true).build(out))
            }
            Format::Json => Writer::Json(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(out),
            ),
            Format::Jsonl => Writer::Jsonl(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(out),
            ),
            Format::Arrow => Writer::Arrow(
                arrow_ipc::writer::StreamWriter::try_new(out, schema)
                    .map_err(CliError::WriteArrow)?,
            ),
            Format::Parquet => Writer::Parquet(
                parquet::arrow::ArrowWriter::try_new(
                    out,
                    schema.clone(),
                    Some(
                        parquet::file::properties::WriterProperties::builder()
                            .set_compression(parquet::basic::Compression::SNAPPY)
                            .build(),
                    ),
                )
                .map_err(CliError::WriteParquet)?,
            ),
        })
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Res<()> {
        match self {
            Writer::Table {
                out,
                names,
                pending,
                widths,
                rows,
            } => {
                let body = cells(batch)?;
                *rows += body.len();
                match widths {
                    Some(w) => print_rows(out, w, &body),
                    None => {
                        pending.extend(body);
                        if pending.len() >= TABLE_SIZING_ROWS {
                            let w = size_columns(names, pending);
                            print_header(out, names, &w)?;
                            print_rows(out, &w, pending)?;
                            pending.clear();
                            *widths = Some(w);
                        }
                        Ok(())
                    }
                }
            }
            Writer::Csv(w) => w.write(batch).map_err(CliError::WriteArrow),
            Writer::Json(w) => w.write(batch).map_err(CliError::WriteArrow),
            Writer::Jsonl(w) => w.write(batch).map_err(CliError::WriteArrow),
            Writer::Arrow(w) => w.write(batch).map_err(CliError::WriteArrow),
            Writer::Parquet(w) => w.write(batch).map_err(CliError::WriteParquet),
        }
    }

    /// Finish the document (footers, closing brackets) and flush.
    pub fn finish(self, schema: &SchemaRef) -> Res<()> {
        match self {
            Writer::Table {
                mut out,
                names,
                pending,
                widths,
                rows,
            } => {
                if widths.is_none() {
                    let w = size_columns(&names, &pending);
                    print_header(&mut out, &names, &w)?;
                    print_rows(&mut out, &w, &pending)?;
                }
                let _ = schema;
                writeln!(out, "({rows} rows)").map_err(CliError::WriteIo)?;
                out.flush().map_err(CliError::WriteIo)
            }
            Writer::Csv(w) => {
                let mut out = w.into_inner();
                out.flush().map_err(CliError::WriteIo)
            }
            Writer::Json(mut w) => {
                w.finish().map_err(CliError::WriteArrow)?;
                let mut out = w.into_inner();
                out.write_all(b"\n").map_err(CliError::WriteIo)?;
                out.flush().map_err(CliError::WriteIo)
            }
            Writer::Jsonl(mut w) => {
                w.finish().map_err(CliError::WriteArrow)?;
                w.into_inner().flush().map_err(CliError::WriteIo)
            }
            Writer::Arrow(mut w) => {
                w.finish().map_err(CliError::WriteArrow)?;
                w.into_inner()
                    .map_err(CliError::WriteArrow)?
                    .flush()
                    .map_err(CliError::WriteIo)
            }
            Writer::Parquet(w) => {
                let mut out = w.into_inner().map_err(CliError::WriteParquet)?;
                out.flush().map_err(CliError::WriteIo)
            }
        }
    }
}

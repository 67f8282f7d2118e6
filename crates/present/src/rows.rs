//! Rows out: one streaming writer for every output format (aligned text, CSV, JSON, JSON
//! lines, Arrow IPC stream, Parquet) — the CLI's `--format`, the explorer's downloads and
//! the worker's `format=` write through it, so the same rows read the same everywhere.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::cell::{json_ready, text_cells, text_rows, utc_as_offset};
use crate::error::{PresentError, Result};
use crate::text::TableStream;

/// An output format for rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// Columns aligned for a terminal, control characters escaped, long cells cut.
    #[default]
    Table,
    /// CSV with a header line; nulls empty.
    Csv,
    /// Tab-separated text cells as the aligned table and the explorer's grid show them
    /// (nested values too), whole: a header line, `\N` for null, and tab, newline,
    /// carriage return and backslash escaped as `\t`, `\n`, `\r`, `\\` (as
    /// PostgreSQL's `COPY … TO` and `mysql --batch` write them).
    Tsv,
    /// One JSON array of objects, nulls explicit.
    Json,
    /// One JSON object per line, nulls explicit.
    Jsonl,
    /// An Arrow IPC stream.
    Arrow,
    /// A Parquet file (snappy).
    #[cfg(feature = "parquet")]
    Parquet,
}

impl Format {
    /// Every format this build writes.
    pub const ALL: &'static [Format] = &[
        Format::Table,
        Format::Csv,
        Format::Tsv,
        Format::Json,
        Format::Jsonl,
        Format::Arrow,
        #[cfg(feature = "parquet")]
        Format::Parquet,
    ];

    /// The format's name as options spell it (`jsonl`; `ndjson` is read as `jsonl`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Arrow => "arrow",
            #[cfg(feature = "parquet")]
            Format::Parquet => "parquet",
        }
    }

    /// The format named `name`, if this build writes it.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "ndjson" => Some(Format::Jsonl),
            _ => Format::ALL.iter().copied().find(|f| f.name() == name),
        }
    }

    /// The media type of a document in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Table => "text/plain; charset=utf-8",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Tsv => "text/tab-separated-values; charset=utf-8",
            Format::Json => "application/json",
            Format::Jsonl => "application/x-ndjson",
            Format::Arrow => "application/vnd.apache.arrow.stream",
            #[cfg(feature = "parquet")]
            Format::Parquet => "application/vnd.apache.parquet",
        }
    }

    /// The usual file name extension (`arrows` for an Arrow IPC stream).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Table => "txt",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Arrow => "arrows",
            #[cfg(feature = "parquet")]
            Format::Parquet => "parquet",
        }
    }

    /// Whether the format writes values as text through Arrow's writers (UTC timestamps
    /// are then relabelled first; the aligned table formats its cells itself).
    fn writes_text(self) -> bool {
        matches!(self, Format::Csv | Format::Json | Format::Jsonl)
    }
}

/// Cells longer than this are cut (with `…`) in the aligned table.
const MAX_CELL: usize = 48;
/// Rows looked at before the aligned table's column widths are fixed.
const TABLE_SIZING_ROWS: usize = 500;

/// The aligned table ([`TableStream`]: rows held back until enough are seen to size the
/// columns), then a count of the rows.
struct TextTable<W: Write + Send> {
    out: W,
    table: TableStream,
    rows: usize,
}

enum Sink<W: Write + Send> {
    Table(TextTable<W>),
    Csv(Box<arrow_csv::Writer<W>>),
    Tsv(W),
    Json(arrow_json::Writer<W, arrow_json::writer::JsonArray>),
    Jsonl(arrow_json::Writer<W, arrow_json::writer::LineDelimited>),
    Arrow(arrow_ipc::writer::StreamWriter<W>),
    #[cfg(feature = "parquet")]
    Parquet(parquet::arrow::ArrowWriter<W>),
}

/// A streaming writer of one document of rows in one [`Format`]: `new`, `write` each
/// batch as it comes, `finish`.
pub struct RowWriter<W: Write + Send> {
    format: Format,
    schema: SchemaRef,
    sink: Sink<W>,
    /// Rows written so far.
    rows: usize,
}

impl<W: Write + Send> RowWriter<W> {
    /// A writer of rows of `schema` as `format` into `out`. CSV refuses nested columns
    /// here, before anything is written.
    pub fn new(format: Format, out: W, schema: &SchemaRef) -> Result<Self> {
        if format == Format::Csv
            && let Some(f) = schema.fields().iter().find(|f| f.data_type().is_nested())
        {
            return Err(PresentError::NestedColumn {
                format: "CSV",
                column: f.name().clone(),
                data_type: f.data_type().to_string(),
            });
        }
        let encode = |source| PresentError::Encode {
            format: format.name(),
            source,
        };
        let sink = match format {
            Format::Table => {
                let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                let table = TableStream::new(&names)
                    .with_block(TABLE_SIZING_ROWS)
                    .with_max_cell(MAX_CELL);
                Sink::Table(TextTable {
                    out,
                    table,
                    rows: 0,
                })
            }
            Format::Csv => Sink::Csv(Box::new(
                arrow_csv::WriterBuilder::new().with_header(true).build(out),
            )),
            Format::Tsv => {
                let mut out = out;
                let names: Vec<String> =
                    schema.fields().iter().map(|f| tsv_cell(f.name())).collect();
                writeln!(out, "{}", names.join("\t")).map_err(PresentError::Io)?;
                Sink::Tsv(out)
            }
            Format::Json => Sink::Json(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(out),
            ),
            Format::Jsonl => Sink::Jsonl(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(out),
            ),
            Format::Arrow => {
                Sink::Arrow(arrow_ipc::writer::StreamWriter::try_new(out, schema).map_err(encode)?)
            }
            #[cfg(feature = "parquet")]
            Format::Parquet => Sink::Parquet(
                parquet::arrow::ArrowWriter::try_new(
                    out,
                    schema.clone(),
                    Some(
                        parquet::file::properties::WriterProperties::builder()
                            .set_compression(parquet::basic::Compression::SNAPPY)
                            .build(),
                    ),
                )
                .map_err(PresentError::Parquet)?,
            ),
        };
        Ok(RowWriter {
            format,
            schema: schema.clone(),
            sink,
            rows: 0,
        })
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Write `batch` (of the writer's schema).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let encode = |source| PresentError::Encode {
            format: self.format.name(),
            source,
        };
        let converted;
        let batch = if self.format.writes_text() {
            converted = utc_as_offset(batch)?;
            &converted
        } else {
            batch
        };
        let keyed;
        let batch = if matches!(self.format, Format::Json | Format::Jsonl) {
            keyed = json_ready(batch)?;
            &keyed
        } else {
            batch
        };
        match &mut self.sink {
            Sink::Table(t) => t.write(batch)?,
            Sink::Csv(w) => w.write(batch).map_err(encode)?,
            Sink::Tsv(out) => write_tsv(out, batch)?,
            Sink::Json(w) => w.write(batch).map_err(encode)?,
            Sink::Jsonl(w) => w.write(batch).map_err(encode)?,
            Sink::Arrow(w) => w.write(batch).map_err(encode)?,
            #[cfg(feature = "parquet")]
            Sink::Parquet(w) => w.write(batch).map_err(PresentError::Parquet)?,
        }
        self.rows += batch.num_rows();
        Ok(())
    }

    /// Finish the document (a CSV header alone when there were no rows, the JSON array's
    /// brackets, the stream's or the file's footer, the table's row count), flush, and
    /// give the destination back.
    pub fn finish(self) -> Result<W> {
        let encode = |source| PresentError::Encode {
            format: self.format.name(),
            source,
        };
        let mut out = match self.sink {
            Sink::Table(t) => t.finish()?,
            Sink::Csv(mut w) => {
                if self.rows == 0 {
                    let empty = utc_as_offset(&RecordBatch::new_empty(self.schema.clone()))?;
                    w.write(&empty).map_err(encode)?;
                }
                w.into_inner()
            }
            Sink::Json(mut w) => {
                let mut out = if self.rows == 0 {
                    let mut out = w.into_inner();
                    out.write_all(b"[]").map_err(PresentError::Io)?;
                    out
                } else {
                    w.finish().map_err(encode)?;
                    w.into_inner()
                };
                out.write_all(b"\n").map_err(PresentError::Io)?;
                out
            }
            Sink::Tsv(out) => out,
            Sink::Jsonl(mut w) => {
                w.finish().map_err(encode)?;
                w.into_inner()
            }
            Sink::Arrow(mut w) => {
                w.finish().map_err(encode)?;
                w.into_inner().map_err(encode)?
            }
            #[cfg(feature = "parquet")]
            Sink::Parquet(w) => w.into_inner().map_err(PresentError::Parquet)?,
        };
        out.flush().map_err(PresentError::Io)?;
        Ok(out)
    }
}

/// Write `batches` of `schema` as one document in memory (the worker's answers, the
/// explorer's downloads).
pub fn encode(format: Format, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut w = RowWriter::new(format, Vec::new(), schema)?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()
}

/// A text cell escaped for TSV (a null cell is written `\N` apart).
fn tsv_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// The rows of `batch` as TSV lines.
fn write_tsv<W: Write>(out: &mut W, batch: &RecordBatch) -> Result<()> {
    // a null value is `\N` (a string `\N` is written `\\N`); nulls inside nested
    // values read `null`, as in the aligned table
    const NULL: &str = "\\N";
    for row in text_cells(batch, NULL)? {
        let line: Vec<String> = row
            .iter()
            .map(|c| if c == NULL { c.clone() } else { tsv_cell(c) })
            .collect();
        writeln!(out, "{}", line.join("\t")).map_err(PresentError::Io)?;
    }
    Ok(())
}

impl<W: Write + Send> TextTable<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        for row in text_rows(batch, "null")? {
            self.rows += 1;
            let text = self.table.push(row);
            self.out
                .write_all(text.as_bytes())
                .map_err(PresentError::Io)?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<W> {
        let text = self.table.finish();
        self.out
            .write_all(text.as_bytes())
            .map_err(PresentError::Io)?;
        writeln!(self.out, "({} rows)", self.rows).map_err(PresentError::Io)?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int32Array, StringArray, TimestampMicrosecondArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn text(format: Format, schema: &SchemaRef, batches: &[RecordBatch]) -> String {
        String::from_utf8(encode(format, schema, batches).unwrap()).unwrap()
    }

    #[test]
    fn maps_with_keys_other_than_strings_are_json_objects_with_text_keys() {
        use arrow_array::builder::{Int32Builder, ListBuilder, MapBuilder, StringBuilder};
        // a map<int, string> at the top and inside a list, as Spark writes them
        let mut m = MapBuilder::new(None, Int32Builder::new(), StringBuilder::new());
        m.keys().append_value(1);
        m.values().append_value("a");
        m.keys().append_value(-2);
        m.values().append_null();
        m.append(true).unwrap();
        m.append(false).unwrap();
        let map = Arc::new(m.finish());
        let mut l = ListBuilder::new(MapBuilder::new(
            None,
            Int32Builder::new(),
            StringBuilder::new(),
        ));
        l.values().keys().append_value(7);
        l.values().values().append_value("x");
        l.values().append(true).unwrap();
        l.append(true);
        l.append(true);
        let list = Arc::new(l.finish());
        let schema = Arc::new(Schema::new(vec![
            Field::new("m", map.data_type().clone(), true),
            Field::new("l", list.data_type().clone(), true),
        ]));
        let b = RecordBatch::try_new(schema.clone(), vec![map, list]).unwrap();
        let one = std::slice::from_ref(&b);
        assert_eq!(
            text(Format::Jsonl, &schema, one),
            "{\"m\":{\"1\":\"a\",\"-2\":null},\"l\":[{\"7\":\"x\"}]}\n{\"m\":null,\"l\":[]}\n"
        );
        assert!(text(Format::Json, &schema, one).starts_with("[{\"m\":{\"1\":\"a\""));
    }

    #[test]
    fn formats() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None])),
                Arc::new(StringArray::from(vec![Some("a,\"b"), None])),
            ],
        )
        .unwrap();
        let one = std::slice::from_ref(&b);
        assert_eq!(
            text(Format::Json, &schema, one),
            "[{\"id\":1,\"s\":\"a,\\\"b\"},{\"id\":null,\"s\":null}]\n"
        );
        assert_eq!(
            text(Format::Jsonl, &schema, one),
            "{\"id\":1,\"s\":\"a,\\\"b\"}\n{\"id\":null,\"s\":null}\n"
        );
        assert_eq!(text(Format::Csv, &schema, one), "id,s\n1,\"a,\"\"b\"\n,\n");
        assert_eq!(
            text(Format::Table, &schema, one),
            "id    s\n----  ----\n1     a,\"b\nnull  null\n(2 rows)\n"
        );
        assert_eq!(text(Format::Json, &schema, &[]), "[]\n");
        assert_eq!(
            text(Format::Tsv, &schema, one),
            "id\ts\n1\ta,\"b\n\\N\t\\N\n"
        );
        assert_eq!(text(Format::Tsv, &schema, &[]), "id\ts\n");
        assert_eq!(text(Format::Jsonl, &schema, &[]), "");
        assert_eq!(text(Format::Csv, &schema, &[]), "id,s\n");
        let ipc = encode(Format::Arrow, &schema, one).unwrap();
        let r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None).unwrap();
        let got: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
        assert_eq!(got, vec![b.clone()]);
        #[cfg(feature = "parquet")]
        {
            let pq = encode(Format::Parquet, &schema, one).unwrap();
            let r = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
                bytes::Bytes::from(pq),
                1024,
            )
            .unwrap();
            let got: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
            assert_eq!(got, vec![b]);
        }
    }

    #[test]
    fn utc_timestamps_read_the_same_in_every_text_format() {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "t",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
            true,
        )]));
        let ts = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_569_888_000_000_000), None])
                    .with_timezone("UTC"),
            )],
        )
        .unwrap();
        let one = std::slice::from_ref(&ts);
        assert_eq!(
            text(Format::Jsonl, &schema, one),
            "{\"t\":\"2019-10-01T00:00:00Z\"}\n{\"t\":null}\n"
        );
        assert_eq!(
            text(Format::Csv, &schema, one),
            "t\n2019-10-01T00:00:00Z\n\"\"\n"
        );
        assert!(text(Format::Table, &schema, one).contains("\n2019-10-01T00:00:00Z\n"));
        // an Arrow stream keeps the type as it is
        let ipc = encode(Format::Arrow, &schema, one).unwrap();
        let r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None).unwrap();
        assert_eq!(r.schema(), schema);
    }

    #[test]
    fn csv_refuses_nested_columns_before_writing() {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "l",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            true,
        )]));
        let e = RowWriter::new(Format::Csv, Vec::new(), &schema)
            .err()
            .unwrap();
        assert!(e.to_string().contains("nested column `l`"), "{e}");
        assert!(RowWriter::new(Format::Json, Vec::new(), &schema).is_ok());
    }

    #[test]
    fn hostile_cells_are_escaped_and_cut_in_the_table() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let long = "x".repeat(100);
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(StringArray::from(vec![
                "a\u{1b}]52;c;ZXZpbA==\u{7}b",
                long.as_str(),
            ]))],
        )
        .unwrap();
        let t = text(Format::Table, &schema, &[b]);
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(t.contains("a\\x1b]52"), "{t}");
        assert!(t.contains(&format!("{}…", "x".repeat(MAX_CELL - 1))), "{t}");
    }

    /// Invisible and bidi characters in names and values are shown as escapes in the
    /// aligned table (a lookalike `pay\u{200b}pal` is not `paypal`).
    #[test]
    fn lookalike_names_and_values_are_shown_in_the_table() {
        let schema = Arc::new(Schema::new(vec![Field::new(
            "id\u{200f}",
            DataType::Utf8,
            true,
        )]));
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(StringArray::from(vec![
                "pay\u{200b}pal",
                "a\u{61c}b\u{2028}c\u{2029}d\u{feff}",
            ]))],
        )
        .unwrap();
        let t = text(Format::Table, &schema, &[b]);
        for c in [
            '\u{200b}', '\u{200f}', '\u{61c}', '\u{2028}', '\u{2029}', '\u{feff}',
        ] {
            assert!(!t.contains(c), "{:x} in {t:?}", c as u32);
        }
        assert!(t.starts_with("id\\u{200f}"), "{t}");
        assert!(t.contains("pay\\u{200b}pal"), "{t}");
        assert!(t.contains("a\\u{61c}b\\u{2028}c\\u{2029}d\\u{feff}"), "{t}");
    }

    /// The aligned table measures cells as a terminal draws them (CJK two columns), as
    /// `text::table` does.
    #[test]
    fn wide_characters_align_by_display_width_in_the_row_table() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("name", DataType::Utf8, true),
            Field::new("n", DataType::Int32, true),
        ]));
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec!["日本語", "ab", "🦀é"])),
                Arc::new(Int32Array::from(vec![1, 2, 3])),
            ],
        )
        .unwrap();
        let t = text(Format::Table, &schema, &[b]);
        let width = unicode_width::UnicodeWidthStr::width;
        let cols: Vec<usize> = t
            .lines()
            .filter(|l| !l.starts_with('('))
            .map(|l| width(&l[..l.rfind(' ').map_or(0, |i| i + 1)]))
            .collect();
        assert!(cols.windows(2).all(|w| w[0] == w[1]), "{t}");
        // a long wide cell is cut at the column width, not at a count of characters
        let long = "日".repeat(40);
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec![long.as_str()])),
                Arc::new(Int32Array::from(vec![1])),
            ],
        )
        .unwrap();
        let t = text(Format::Table, &schema, &[b]);
        let row = t.lines().nth(2).unwrap();
        let cell = row.split("  ").next().unwrap();
        assert!(width(cell) <= MAX_CELL, "{} wide: {row}", width(cell));
        assert!(cell.ends_with('…'), "{row}");
    }

    #[test]
    fn the_row_table_and_the_listings_are_one_writer() {
        // `scan` (this table) and `files`/`history` (text::table, TableStream) print the
        // same cells alike: CJK, emoji and combining marks included
        let schema = Arc::new(Schema::new(vec![
            Field::new("名前", DataType::Utf8, true),
            Field::new("n", DataType::Int32, true),
        ]));
        let names = ["日本語", "ab", "🦀é", "e\u{301}x"];
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(names.to_vec())),
                Arc::new(Int32Array::from(vec![1, 22, 333, 4])),
            ],
        )
        .unwrap();
        let rows: Vec<Vec<String>> = names
            .iter()
            .zip(["1", "22", "333", "4"])
            .map(|(a, b)| vec![a.to_string(), b.to_string()])
            .collect();
        let listing = crate::text::table(&["名前", "n"], &rows);
        assert_eq!(
            text(Format::Table, &schema, &[b]),
            format!("{listing}(4 rows)\n")
        );
    }

    #[test]
    fn names() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(*f));
        }
        assert_eq!(Format::from_name("ndjson"), Some(Format::Jsonl));
        assert_eq!(Format::from_name("xml"), None);
    }
}

//! Reading Parquet files over [`Storage`] with the parquet crate's push decoders:
//! the footer by one suffix range, then only the projected column chunks, with
//! neighbouring ranges coalesced into one request.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, FieldRef, Schema};
use bytes::Bytes;
use deltalens_storage::{ByteRange, Storage};
use futures::{StreamExt, TryStreamExt};
use parquet::DecodeResult;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, RowSelection, RowSelector,
};
use parquet::arrow::push_decoder::ParquetPushDecoderBuilder;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataPushDecoder};
use parquet::file::page_budget::{self, PageLedger};
use parquet::schema::types::SchemaDescriptor;

use crate::error::{Error, Result};
use crate::limits;
use crate::limits::FETCH_CONCURRENCY;

/// How a Parquet file is fetched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FetchPolicy {
    /// Bytes from the end of the file the first request fetches (footers are usually
    /// smaller, so one request reads them).
    pub footer_guess: u64,
    /// Files at most this large are fetched whole in one request.
    pub whole_file: u64,
    /// Ranges closer than this are fetched in one request.
    pub coalesce_gap: u64,
    /// Also read the offset index (page locations).
    pub offset_index: bool,
    /// Also read the column index (page statistics).
    pub column_index: bool,
}

impl FetchPolicy {
    /// Checkpoints and sidecars: read in as few round trips as possible.
    pub(crate) const LOG: FetchPolicy = FetchPolicy {
        footer_guess: 64 * 1024,
        whole_file: 256 * 1024,
        coalesce_gap: 1024 * 1024,
        offset_index: false,
        column_index: false,
    };
    /// Checkpoints and sidecars streamed a window of rows at a time: the page locations
    /// too, so a window fetches only its pages and memory follows the window, not the
    /// file (a 1M-file checkpoint is one 243 MB row group).
    pub(crate) const LOG_STREAM: FetchPolicy = FetchPolicy {
        footer_guess: 64 * 1024,
        whole_file: 256 * 1024,
        // a window's pages of one column lie next to the next window's: a wide gap
        // would fetch those again with every window
        coalesce_gap: 16 * 1024,
        offset_index: true,
        column_index: false,
    };
    /// Data files read whole (scans without a limit): few, large requests.
    pub(crate) const DATA: FetchPolicy = FetchPolicy {
        footer_guess: 16 * 1024,
        whole_file: 0,
        coalesce_gap: 1024 * 1024,
        offset_index: false,
        column_index: false,
    };
    /// Filtered scans: the page index too, to skip pages whose statistics rule them out.
    pub(crate) const FILTERED: FetchPolicy = FetchPolicy {
        footer_guess: 16 * 1024,
        whole_file: 0,
        coalesce_gap: 8 * 1024,
        offset_index: true,
        column_index: true,
    };
    /// Previews (a row limit): page locations and no gap filling, to fetch only the
    /// pages that hold the first rows.
    pub(crate) const PREVIEW: FetchPolicy = FetchPolicy {
        footer_guess: 8 * 1024,
        whole_file: 0,
        coalesce_gap: 0,
        offset_index: true,
        column_index: false,
    };
}

/// Which leaf columns to read: those under one of `include` (a path prefix such as
/// `["add"]`) but under none of `exclude`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns<'a> {
    pub include: &'a [&'a [&'a str]],
    pub exclude: &'a [&'a [&'a str]],
}

impl Columns<'_> {
    fn mask(&self, schema: &SchemaDescriptor) -> ProjectionMask {
        let starts = |parts: &[String], prefix: &[&str]| {
            parts.len() >= prefix.len() && parts.iter().zip(prefix).all(|(a, b)| a == b)
        };
        // Writers that keep statistics only as a struct (delta.checkpoint.writeStatsAsJson
        // = false) have no add.stats column: read add.stats_parsed instead.
        let has_json_stats = schema
            .columns()
            .iter()
            .any(|c| c.path().parts() == ["add".to_string(), "stats".to_string()]);
        let leaves = schema.columns().iter().enumerate().filter_map(|(i, c)| {
            let parts = c.path().parts();
            let inc = self.include.iter().any(|p| starts(parts, p));
            let stats_struct = !has_json_stats && starts(parts, &["add", "stats_parsed"]);
            let exc = !stats_struct && self.exclude.iter().any(|p| starts(parts, p));
            (inc && !exc).then_some(i)
        });
        ProjectionMask::leaves(schema, leaves.collect::<Vec<_>>())
    }
}

/// Merge ranges whose gap is at most `gap`; returns merged ranges (sorted).
pub(crate) fn coalesce(ranges: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) => {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    out
}

/// Fetch `ranges` of `path`, coalescing neighbours, and return one buffer per
/// requested range.
async fn fetch_ranges<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    ranges: &[Range<u64>],
    gap: u64,
) -> Result<Vec<Bytes>> {
    let merged = coalesce(ranges, gap);
    let fetched: Vec<Bytes> = futures::stream::iter(&merged)
        .map(|r| storage.get_range(path, ByteRange::Bounded(r.clone())))
        .buffered(FETCH_CONCURRENCY)
        .try_collect()
        .await?;
    ranges
        .iter()
        .map(|r| {
            let (m, data) = merged
                .iter()
                .zip(&fetched)
                .find(|(m, _)| m.start <= r.start && r.end <= m.end)
                .ok_or_else(|| Error::parquet(path, "internal: range not covered"))?;
            let start = (r.start - m.start) as usize;
            let end = (r.end - m.start) as usize;
            if end > data.len() {
                return Err(Error::parquet(
                    path,
                    format!(
                        "short read: wanted {r:?}, the store returned {} bytes",
                        data.len()
                    ),
                ));
            }
            Ok(data.slice(start..end))
        })
        .collect()
}

/// Run one step of the parquet crate's decoders on bytes from a table. Its decoders can
/// still panic on some corrupt pages (a plain byte-array page that claims 0 values
/// divides by zero in parquet 60, found by fuzzing): natively the panic becomes
/// [`Error::Parquet`] naming the file. On wasm32 a panic aborts the module, so there it
/// stays a known limit of the dependency.
fn guarded<T>(path: &str, step: impl FnOnce() -> parquet::errors::Result<T>) -> Result<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)) {
            Ok(r) => r.map_err(|e| Error::parquet(path, e)),
            Err(panic) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(Error::parquet(
                    path,
                    format!("the Parquet decoder failed on corrupt data ({why})"),
                ))
            }
        }
    }
    #[cfg(target_arch = "wasm32")]
    {
        step().map_err(|e| Error::parquet(path, e))
    }
}

/// What one request of a decoder may ask for: a crafted footer must not size a read.
#[derive(Debug, Clone, Copy)]
struct RangeLimit {
    /// The limit's name in [`limits`].
    name: &'static str,
    /// What is limited, for the error.
    what: &'static str,
    max: u64,
}

/// The footer decoder's requests ([`limits::MAX_FOOTER_BYTES`]).
const FOOTER_RANGES: RangeLimit = RangeLimit {
    name: "MAX_FOOTER_BYTES",
    what: "the Parquet footer's length",
    max: limits::MAX_FOOTER_BYTES,
};

/// The column decoder's requests ([`limits::MAX_COLUMN_FETCH_BYTES`]).
const COLUMN_RANGES: RangeLimit = RangeLimit {
    name: "MAX_COLUMN_FETCH_BYTES",
    what: "the column data one request of the Parquet decoder asks for",
    max: limits::MAX_COLUMN_FETCH_BYTES,
};

/// The bytes `ranges` total, within `limit`.
fn check_ranges(ranges: &[Range<u64>], limit: RangeLimit, path: &str) -> Result<()> {
    let wanted: u64 = ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
    limits::check(limit.name, limit.what, wanted, limit.max, path)
}

/// No FIXED_LEN_BYTE_ARRAY column of the file is wider than [`limits::MAX_FIXED_LEN_BYTES`].
fn check_fixed_lengths(md: &ParquetMetaData, path: &str) -> Result<()> {
    let schema = md.file_metadata().schema_descr();
    for column in schema.columns() {
        if column.physical_type() == parquet::basic::Type::FIXED_LEN_BYTE_ARRAY {
            let width = u64::try_from(column.type_length()).unwrap_or(u64::MAX);
            // no Delta type is zero bytes wide, and a page of zero-width values claims any
            // count for no bytes (a review's finding: a dictionary of 2^31 of them)
            if width == 0 {
                return Err(Error::parquet(
                    path,
                    format!(
                        "the FIXED_LEN_BYTE_ARRAY column {} is zero bytes wide; the file is corrupt or was not written by a Delta writer",
                        column.path()
                    ),
                ));
            }
            limits::check(
                "MAX_FIXED_LEN_BYTES",
                "the width of a FIXED_LEN_BYTE_ARRAY column",
                width,
                limits::MAX_FIXED_LEN_BYTES,
                path,
            )?;
        }
    }
    Ok(())
}

/// Every column chunk a footer describes lies inside the file (offsets and lengths are
/// signed in Parquet's metadata: a crafted footer with a negative or overlong chunk would
/// otherwise reach the decoder, which does not expect one).
fn check_layout(md: &ParquetMetaData, size: u64, path: &str) -> Result<()> {
    // the row groups' counts add up to the file's (every writer's footer says so): a row
    // group claiming 2^55 rows in a 1 KB file whose footer says 100 is refused, not read
    // as 2^55 rows of nulls (a fuzz finding: a scan of columns the file lacks never ended)
    let claimed = md
        .row_groups()
        .iter()
        .try_fold(0i64, |sum, rg| sum.checked_add(rg.num_rows()));
    if claimed != Some(md.file_metadata().num_rows()) {
        return Err(Error::parquet(
            path,
            format!(
                "its row groups hold {} rows but its footer says {}: the footer is corrupt",
                claimed.map_or_else(|| "more than 2^63".to_string(), |n| n.to_string()),
                md.file_metadata().num_rows()
            ),
        ));
    }
    check_fixed_lengths(md, path)?;
    for (i, rg) in md.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(Error::parquet(
                path,
                format!("row group {i} has {} rows", rg.num_rows()),
            ));
        }
        for c in rg.columns() {
            // (ColumnChunkMetaData::byte_range asserts on negative values: computed here)
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            let len = c.compressed_size();
            let inside = start >= 0
                && len >= 0
                && c.data_page_offset() >= 0
                && (start as u64)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= size);
            if !inside {
                return Err(Error::parquet(
                    path,
                    format!(
                        "column chunk {} of row group {i} lies outside the file ({size} bytes): the footer is corrupt",
                        c.column_path()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Read the footer of the Parquet file at `path` (`size` bytes). Returns it as the
/// decoders read it (see [`reader_metadata`]: built once per file) and any bytes already
/// fetched (offset, data) so they can be reused.
pub(crate) async fn read_metadata<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    policy: FetchPolicy,
) -> Result<(ArrowReaderMetadata, u64, Bytes)> {
    let mut decoder = ParquetMetaDataPushDecoder::try_new(size)
        .map_err(|e| Error::parquet(path, e))?
        .with_page_index_policy(PageIndexPolicy::Skip);
    if policy.offset_index {
        // page locations let a row limit fetch single pages instead of whole chunks
        decoder = decoder.with_offset_index_policy(PageIndexPolicy::Optional);
    }
    if policy.column_index {
        decoder = decoder.with_column_index_policy(PageIndexPolicy::Optional);
    }
    let (start, first) = if size <= policy.whole_file {
        (0, storage.get(path).await?)
    } else {
        let n = policy.footer_guess.min(size);
        (
            size - n,
            storage.get_range(path, ByteRange::Suffix(n)).await?,
        )
    };
    if first.len() as u64 != size - start {
        return Err(Error::parquet(
            path,
            format!(
                "the store returned {} bytes for a range of {} (file size {size})",
                first.len(),
                size - start
            ),
        ));
    }
    decoder
        .push_range(start..size, first.clone())
        .map_err(|e| Error::parquet(path, e))?;
    loop {
        match guarded(path, || decoder.try_decode())? {
            DecodeResult::Data(md) => {
                check_layout(&md, size, path)?;
                return Ok((reader_metadata(path, Arc::new(md))?, start, first));
            }
            DecodeResult::NeedsData(ranges) => {
                check_ranges(&ranges, FOOTER_RANGES, path)?;
                let data = fetch_ranges(storage, path, &ranges, policy.coalesce_gap).await?;
                decoder
                    .push_ranges(ranges, data)
                    .map_err(|e| Error::parquet(path, e))?;
            }
            DecodeResult::Finished => {
                return Err(Error::parquet(path, "no metadata in footer"));
            }
        }
    }
}

/// Rows of the first batch decoded from a file: nothing is known of its rows' sizes yet
/// (a dictionary-encoded value is materialized once per row, and a row may hold a value
/// as large as a page, [`limits::max_page_bytes`]).
pub(crate) const FIRST_BATCH_ROWS: usize = 1;

/// How much larger (in rows) a batch may be than the one before it: growth is geometric,
/// so a file of small rows reaches its full batch size within a few batches, and rows
/// that grow part-way through a file outgrow the estimate by this factor at most per batch.
pub(crate) const BATCH_GROWTH: usize = 8;

/// Sizes the batches decoded from one file by the bytes they hold ([`limits::BATCH_BYTES`]),
/// not by rows alone: each batch's decoded size is measured (its arrays as allocated) and
/// the next batch takes as many rows as fit in the budget at that size per row, at most
/// [`BATCH_GROWTH`] times the last and at most the caller's batch size. A file of a few
/// kilobytes whose string column repeats one dictionary-encoded 100 KB value in every row
/// decodes a few hundred rows at a time instead of 8,192 (800 MB). Rows that grow much
/// larger part-way through a file (small values first, then a huge one) would make one
/// batch of up to [`BATCH_GROWTH`] × the last batch's rows: the decoder counts the string
/// and binary bytes of each batch as it copies them and refuses the value that would pass
/// [`limits::BATCH_VALUE_BYTES`] (parquet's `decode_budget`, vendor patch 19), and the row
/// group is decoded again from the first row not yet handed on, in smaller batches
/// ([`BatchSizer::refused`]).
#[derive(Debug, Clone)]
pub(crate) struct BatchSizer {
    /// The caller's batch size: never more rows than this.
    max_rows: usize,
    /// Rows of the next batch.
    next: usize,
    /// Bytes each row adds after decoding (a scan's partition values, copied into every row).
    row_overhead: u64,
    /// Bytes per row of the last batch (0: none yet).
    per_row: u64,
    /// Never more rows than this: halved by each batch refused for passing
    /// [`limits::BATCH_VALUE_BYTES`] (`usize::MAX`: none refused).
    cap: usize,
    /// Levels and values the file's decoding may still skip within pages
    /// ([`limits::max_skipped_levels`], for all its row groups and batches).
    skip_left: usize,
}

impl BatchSizer {
    /// Batches of at most `max_rows` rows (at least 1), starting at [`FIRST_BATCH_ROWS`].
    pub(crate) fn new(max_rows: usize) -> BatchSizer {
        let max_rows = max_rows.max(1);
        BatchSizer {
            max_rows,
            next: FIRST_BATCH_ROWS.clamp(1, max_rows),
            row_overhead: 0,
            per_row: 0,
            cap: usize::MAX,
            skip_left: skip_ceiling(),
        }
    }

    /// Count `bytes` more per row than the decoder produces (copied into each row later).
    pub(crate) fn with_row_overhead(mut self, bytes: u64) -> BatchSizer {
        self.row_overhead = bytes;
        self.next = self.fitting(self.next);
        self
    }

    /// The caller's batch size.
    pub(crate) fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Rows of the next batch.
    pub(crate) fn rows(&self) -> usize {
        self.next
    }

    /// At most `rows` rows, fewer when that many would pass [`limits::BATCH_BYTES`] at the
    /// size per row known so far.
    fn fitting(&self, rows: usize) -> usize {
        let per_row = self.per_row.saturating_add(self.row_overhead).max(1);
        let fit = usize::try_from(limits::BATCH_BYTES / per_row).unwrap_or(usize::MAX);
        rows.min(fit).min(self.cap).clamp(1, self.max_rows)
    }

    /// A batch of `rows` rows was refused for passing [`limits::BATCH_VALUE_BYTES`]
    /// before it was decoded whole (rows that grew part-way through the file), its largest
    /// value `largest` bytes: the next try takes as many rows as fit in
    /// [`limits::BATCH_BYTES`] at that size per row, at most [`BATCH_GROWTH`] times fewer,
    /// and no batch of this file takes more than half as many again (so a file refuses at
    /// most log2 of the batch size times; rows of one large value, once). False when
    /// `rows` was one row: it cannot be made smaller.
    pub(crate) fn refused(&mut self, rows: usize, largest: usize) -> bool {
        if rows <= 1 {
            return false;
        }
        self.per_row = self.per_row.max(largest as u64);
        self.cap = (rows / 2).max(1);
        self.next = self.fitting((rows / BATCH_GROWTH).max(1));
        true
    }

    /// The ceiling on string, binary and list-level bytes one batch of `rows` rows may decode: one
    /// row may hold a value as large as a page.
    fn value_ceiling(rows: usize) -> usize {
        let ceiling = if rows <= 1 {
            limits::BATCH_VALUE_BYTES.max(limits::max_page_bytes())
        } else {
            limits::BATCH_VALUE_BYTES
        };
        usize::try_from(ceiling).unwrap_or(usize::MAX)
    }

    /// Size the next batch by `batch`, just decoded.
    pub(crate) fn measured(&mut self, batch: &RecordBatch) {
        let rows = batch.num_rows();
        if rows == 0 {
            return;
        }
        let bytes = batch.get_array_memory_size() as u64;
        self.per_row = bytes.div_ceil(rows as u64);
        let grown = rows.max(self.next).saturating_mul(BATCH_GROWTH);
        self.next = self.fitting(grown);
    }
}

/// The Arrow reading of a file's footer `metadata`, built once per file: the Arrow types its
/// embedded `ARROW:schema` asks for, except views and fixed-size lists ([`without_views`]).
/// Parquet's view decoder copies some values (`DELTA_BYTE_ARRAY`'s, a repeated prefix: a
/// megabyte a row from a few bytes) without counting them against
/// [`limits::BATCH_VALUE_BYTES`]; the offset decoders count every byte they copy, and a scan
/// casts to the table's types (plain strings, lists) anyway.
pub(crate) fn reader_metadata(
    path: &str,
    metadata: Arc<ParquetMetaData>,
) -> Result<ArrowReaderMetadata> {
    let hinted = ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new())
        .map_err(|e| Error::parquet(path, e))?;
    let plain = Schema::new_with_metadata(
        hinted
            .schema()
            .fields()
            .iter()
            .map(without_views)
            .collect::<Vec<_>>(),
        hinted.schema().metadata().clone(),
    );
    if plain == *hinted.schema().as_ref() {
        return Ok(hinted);
    }
    let options = ArrowReaderOptions::new().with_schema(Arc::new(plain));
    ArrowReaderMetadata::try_new(metadata, options).map_err(|e| Error::parquet(path, e))
}

/// `field` read as a Parquet file's own types read it (at any depth): string and binary
/// views as plain strings and binaries, and list views and fixed-size lists as lists. The
/// view decoder copies values without counting them, and a fixed-size list pads each null
/// list to the length the hint claims (a file's claim, up to 2^31 elements a row).
fn without_views(field: &FieldRef) -> FieldRef {
    let data_type = match field.data_type() {
        DataType::Utf8View => DataType::Utf8,
        DataType::BinaryView => DataType::Binary,
        DataType::List(f) | DataType::ListView(f) | DataType::FixedSizeList(f, _) => {
            DataType::List(without_views(f))
        }
        DataType::LargeList(f) | DataType::LargeListView(f) => {
            DataType::LargeList(without_views(f))
        }
        DataType::Map(f, sorted) => DataType::Map(without_views(f), *sorted),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(without_views).collect()),
        DataType::Dictionary(key, value) => {
            let value = without_views(&Arc::new(Field::new("v", value.as_ref().clone(), true)));
            DataType::Dictionary(key.clone(), Box::new(value.data_type().clone()))
        }
        _ => return field.clone(),
    };
    Arc::new(field.as_ref().clone().with_data_type(data_type))
}

/// How draining a reader ended.
enum Drained {
    /// Every row was handed on.
    Finished,
    /// `on_batch` asked to stop.
    Stopped,
    /// A batch of `rows` rows passed [`limits::BATCH_VALUE_BYTES`] while it was decoded
    /// (its largest value `largest` bytes): nothing of it was handed on, and the reader
    /// cannot go on.
    Refused { rows: usize, largest: usize },
}

/// Decode the batches of one row group's `reader`, each sized by `batches` before it is
/// decoded and decoded under [`limits::BATCH_VALUE_BYTES`], handing them to `on_batch`.
fn drain_reader(
    path: &str,
    mut reader: ParquetRecordBatchReader,
    batches: &mut BatchSizer,
    on_batch: &mut dyn FnMut(RecordBatch) -> Result<bool>,
) -> Result<Drained> {
    loop {
        let rows = batches.rows();
        reader.set_batch_size(rows);
        let ((next, skip_left), refused) =
            parquet::arrow::decode_budget::within(BatchSizer::value_ceiling(rows), || {
                parquet::arrow::decode_budget::skipping_within(
                    batches.skip_left,
                    skip_ceiling(),
                    || {
                        guarded(path, || {
                            reader.next().transpose().map_err(|e| {
                                parquet::errors::ParquetError::ArrowError(e.to_string())
                            })
                        })
                    },
                )
            });
        batches.skip_left = skip_left;
        if let Some(largest) = refused {
            if rows <= 1 {
                // (over max(BATCH_VALUE_BYTES, the page limit): the name of the first,
                // which also holds for a row of several values each under a page)
                return Err(Error::LimitExceeded {
                    limit: "BATCH_VALUE_BYTES",
                    what: "the decoded strings, binaries and list levels of one row (at least)",
                    value: (BatchSizer::value_ceiling(rows) as u64 + 1).max(largest as u64),
                    max: BatchSizer::value_ceiling(rows) as u64,
                    path: path.to_string(),
                });
            }
            return Ok(Drained::Refused { rows, largest });
        }
        let Some(batch) = next? else {
            return Ok(Drained::Finished);
        };
        batches.measured(&batch);
        if !on_batch(batch)? {
            return Ok(Drained::Stopped);
        }
    }
}

/// [`limits::max_skipped_levels`] as the decoder counts.
fn skip_ceiling() -> usize {
    usize::try_from(limits::max_skipped_levels()).unwrap_or(usize::MAX)
}

/// `selection` without its first `done` selected rows (they become skipped).
fn after_selected(selection: &RowSelection, done: usize) -> RowSelection {
    let mut left = done;
    let mut out = Vec::new();
    for s in selection.iter() {
        if s.skip || left == 0 {
            out.push(*s);
        } else if s.row_count <= left {
            left -= s.row_count;
            out.push(RowSelector::skip(s.row_count));
        } else {
            out.push(RowSelector::skip(left));
            out.push(RowSelector::select(s.row_count - left));
            left = 0;
        }
    }
    RowSelection::from(out)
}

/// One row group to decode: which columns and rows, and the bytes already in hand.
pub(crate) struct RowGroupDecode<'a> {
    /// The file's path, for requests and errors.
    pub path: &'a str,
    /// The file's footer, as the decoders read it ([`reader_metadata`]).
    pub reader: &'a ArrowReaderMetadata,
    /// Byte ranges already fetched (offset, bytes): handed to the decoder first.
    pub prefetched: &'a [(u64, Bytes)],
    /// The row group.
    pub row_group: usize,
    /// The leaf columns to decode.
    pub mask: ProjectionMask,
    /// Rows per decoded batch: sized by the bytes of the batches before (see
    /// [`BatchSizer`]; one per file, so that later row groups start from what the first
    /// ones measured).
    pub batches: &'a mut BatchSizer,
    /// Decode at most this many rows.
    pub limit: Option<usize>,
    /// Decode only these rows.
    pub selection: Option<RowSelection>,
    /// How to fetch what is missing.
    pub policy: FetchPolicy,
    /// Told the bytes of each batch decoded and thrown away (refused for passing
    /// [`limits::BATCH_VALUE_BYTES`]): a scan counts them against its decoded-bytes
    /// budget, which bounds its work.
    pub on_refused: Option<&'a dyn Fn(u64) -> Result<()>>,
}

/// The column chunks of `columns` in the Parquet file at `path` (footer read through
/// `storage`: from a prefetched tail, no request), fetched as [`FetchPolicy::LOG`]
/// fetches them: (start, bytes) per coalesced range. Nothing when they total more than
/// `max_bytes` (the reader fetches them then).
pub(crate) async fn prefetch_columns<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    columns: Columns<'_>,
    max_bytes: u64,
) -> Result<Vec<(u64, Bytes)>> {
    let (reader, _, _) = read_metadata(storage, path, size, FetchPolicy::LOG).await?;
    let metadata = reader.metadata();
    let mask = columns.mask(metadata.file_metadata().schema_descr());
    let chunks: Vec<Range<u64>> = metadata
        .row_groups()
        .iter()
        .flat_map(|g| g.columns().iter().enumerate())
        .filter(|(i, _)| mask.leaf_included(*i))
        .map(|(_, c)| {
            let (start, len) = c.byte_range();
            start..start.saturating_add(len)
        })
        .collect();
    let total: u64 = chunks.iter().map(|r| r.end - r.start).sum();
    if chunks.is_empty() || total > max_bytes {
        return Ok(Vec::new());
    }
    let merged = coalesce(&chunks, FetchPolicy::LOG.coalesce_gap);
    let data = fetch_ranges(storage, path, &merged, 0).await?;
    Ok(merged.iter().map(|r| r.start).zip(data).collect())
}

/// Decode a row group (see [`RowGroupDecode`]), handing each batch to `on_batch`, which
/// returns false to stop early; every range fetched is also kept in `fetched` when given.
/// A batch refused for passing [`limits::BATCH_VALUE_BYTES`] is decoded again in smaller
/// batches from the first row not handed on (its pages fetched again: rows that grow
/// eight-fold part-way through a file are rare).
pub(crate) async fn decode_row_group<S: Storage + ?Sized>(
    storage: &S,
    read: RowGroupDecode<'_>,
    mut fetched: Option<&mut Vec<(u64, Bytes)>>,
    on_batch: &mut dyn FnMut(RecordBatch) -> Result<bool>,
) -> Result<()> {
    let RowGroupDecode {
        path,
        reader,
        prefetched,
        row_group,
        mask,
        batches,
        limit,
        selection,
        policy,
        on_refused,
    } = read;
    let metadata = reader.metadata();
    let rows = metadata.row_group(row_group).num_rows().max(0) as usize;
    let mut selection = selection;
    if let Some(l) = limit
        && metadata.page_index().is_some()
        && l < rows
        && selection.is_none()
    {
        // select only the first rows: with page locations only their pages are fetched
        selection = Some(RowSelection::from(vec![
            RowSelector::select(l),
            RowSelector::skip(rows - l),
        ]));
    }
    if selection.as_ref().is_some_and(|s| !s.selects_any()) {
        return Ok(());
    }
    // rows handed to `on_batch` so far
    let mut done = 0usize;
    loop {
        let selection = match (&selection, done) {
            (s, 0) => s.clone(),
            (Some(s), d) => Some(after_selected(s, d)),
            (None, d) => Some(RowSelection::from(vec![
                RowSelector::skip(d),
                RowSelector::select(rows.saturating_sub(d)),
            ])),
        };
        let limit = limit.map(|l| l.saturating_sub(done));
        if limit == Some(0) || selection.as_ref().is_some_and(|s| !s.selects_any()) {
            return Ok(());
        }
        let mut builder = ParquetPushDecoderBuilder::new_with_metadata(reader.clone())
            .with_projection(mask.clone())
            .with_row_groups(vec![row_group])
            // (each batch is then sized by `batches`: this is the decoder's allocation hint)
            .with_batch_size(batches.max_rows());
        if let Some(l) = limit {
            builder = builder.with_limit(l);
        }
        if let Some(sel) = selection {
            builder = builder.with_row_selection(sel);
        }
        let mut decoder = builder.build().map_err(|e| Error::parquet(path, e))?;
        for (start, data) in prefetched.iter().filter(|(_, d)| !d.is_empty()) {
            decoder
                .push_range(*start..*start + data.len() as u64, data.clone())
                .map_err(|e| Error::parquet(path, e))?;
        }
        let mut counted = |b: RecordBatch| {
            done += b.num_rows();
            on_batch(b)
        };
        // the pages and dictionaries this decoder's column readers hold at once
        let pages =
            PageLedger::new(usize::try_from(limits::max_held_page_bytes()).unwrap_or(usize::MAX));
        let refused = loop {
            let next = page_budget::within(&pages, || guarded(path, || decoder.try_next_reader()))?;
            match next {
                DecodeResult::Data(reader) => {
                    let drained = page_budget::within(&pages, || {
                        drain_reader(path, reader, batches, &mut counted)
                    });
                    match drained? {
                        Drained::Finished => {}
                        Drained::Stopped => return Ok(()),
                        Drained::Refused { rows, largest } => break (rows, largest),
                    }
                }
                DecodeResult::NeedsData(ranges) => {
                    check_ranges(&ranges, COLUMN_RANGES, path)?;
                    let data = fetch_ranges(storage, path, &ranges, policy.coalesce_gap).await?;
                    if let Some(kept) = fetched.as_deref_mut() {
                        kept.extend(ranges.iter().map(|r| r.start).zip(data.iter().cloned()));
                    }
                    decoder
                        .push_ranges(ranges, data)
                        .map_err(|e| Error::parquet(path, e))?;
                }
                DecodeResult::Finished => return Ok(()),
            }
        };
        let (refused, largest) = refused;
        if let Some(count) = on_refused {
            count(BatchSizer::value_ceiling(refused) as u64)?;
        }
        // (drain_reader answers an error for a refused batch of one row)
        if !batches.refused(refused, largest) {
            return Err(Error::parquet(path, "a batch of one row was refused"));
        }
    }
}

/// Rows per batch of a checkpoint or sidecar at most (fewer when its rows are large:
/// [`BatchSizer`]).
pub(crate) const LOG_BATCH_ROWS: usize = 8192;

/// Read the selected columns of every row of the Parquet file at `path`, handing each
/// decoded batch to `on_batch` (so only one batch of Arrow data is alive at a time, of
/// about [`limits::BATCH_BYTES`] at most).
pub(crate) async fn read_parquet<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    columns: Columns<'_>,
    on_batch: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let (reader, tail_start, tail) = read_metadata(storage, path, size, FetchPolicy::LOG).await?;
    let metadata = reader.metadata();
    let mask = columns.mask(metadata.file_metadata().schema_descr());
    let mut batches = BatchSizer::new(LOG_BATCH_ROWS);
    // what the footer request already brought (the whole file when it is small)
    let in_hand = [(tail_start, tail)];
    for row_group in 0..metadata.num_row_groups() {
        let read = RowGroupDecode {
            path,
            reader: &reader,
            prefetched: &in_hand,
            row_group,
            mask: mask.clone(),
            batches: &mut batches,
            limit: None,
            selection: None,
            policy: FetchPolicy::LOG,
            on_refused: None,
        };
        decode_row_group(storage, read, None, &mut |b| {
            on_batch(&b)?;
            Ok(true)
        })
        .await?;
    }
    Ok(())
}

/// The row windows a row group of `rows` rows is read in: one window when the file has no
/// page locations (then the decoder fetches whole column chunks anyway) or the group is
/// small, else windows growing from `first` rows to `window` rows (doubling), so a
/// reader that stops early (a first page of files) fetches little, and a full read few
/// windows. Each window ends where a page of the largest column starts
/// (`page_starts`, its pages' first rows, ascending): a page split between two windows
/// would be fetched by both.
fn windows(
    rows: usize,
    first: usize,
    window: usize,
    page_starts: Option<&[usize]>,
) -> Vec<Range<usize>> {
    let Some(starts) = page_starts else {
        return std::iter::once(0..rows).collect();
    };
    if rows <= first || window == 0 {
        return std::iter::once(0..rows).collect();
    }
    let mut out = Vec::new();
    let (mut start, mut len) = (0, first.max(1));
    while start < rows {
        let target = start + len;
        let end = starts
            .get(starts.partition_point(|&p| p < target))
            .copied()
            .unwrap_or(rows)
            .min(rows);
        out.push(start..end);
        start = end;
        len = (len * 2).min(window.max(1));
    }
    out
}

/// The first rows of the pages of the projected column with the most bytes in row group
/// `rg` (`None` without page locations).
fn page_starts(metadata: &ParquetMetaData, rg: usize, mask: &ProjectionMask) -> Option<Vec<usize>> {
    metadata.page_index()?;
    let group = metadata.row_group(rg);
    let largest = (0..group.num_columns())
        .filter(|i| mask.leaf_included(*i))
        .max_by_key(|i| group.column(*i).compressed_size())?;
    let pages = metadata.page_index_for_row_group(rg);
    let locations = pages.page_locations(largest)?;
    Some(
        locations
            .iter()
            .map(|p| usize::try_from(p.first_row_index).unwrap_or(usize::MAX))
            .collect(),
    )
}

/// The dictionary pages of the columns in `mask` of row group `rg`, fetched in one
/// coalesced read: (offset, bytes) for the decoder.
async fn dictionary_pages<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    metadata: &ParquetMetaData,
    rg: usize,
    mask: &ProjectionMask,
) -> Result<Vec<(u64, Bytes)>> {
    let group = metadata.row_group(rg);
    let ranges: Vec<Range<u64>> = (0..group.num_columns())
        .filter(|i| mask.leaf_included(*i))
        .filter_map(|i| {
            let c = group.column(i);
            let start = u64::try_from(c.dictionary_page_offset()?).ok()?;
            let end = u64::try_from(c.data_page_offset()).ok()?;
            // within the chunk (a crafted footer's offsets are not trusted): else the
            // decoder fetches the dictionary itself, as without this prefetch
            let chunk = u64::try_from(c.compressed_size()).ok()?;
            (start < end && end - start <= chunk).then_some(start..end)
        })
        .collect();
    if ranges.is_empty() {
        return Ok(Vec::new());
    }
    check_ranges(&ranges, COLUMN_RANGES, path)?;
    let data = fetch_ranges(storage, path, &ranges, FetchPolicy::LOG_STREAM.coalesce_gap).await?;
    Ok(ranges.iter().map(|r| r.start).zip(data).collect())
}

/// The pages of the columns in `mask` of row group `rg` that begin before `row` and hold
/// it (a window starting at `row` needs them again), copied out of `fetched` where it
/// holds them whole.
fn straddling_pages(
    metadata: &ParquetMetaData,
    rg: usize,
    mask: &ProjectionMask,
    row: usize,
    fetched: &[(u64, Bytes)],
) -> Vec<(u64, Bytes)> {
    if metadata.page_index().is_none() {
        return Vec::new();
    }
    let pages = metadata.page_index_for_row_group(rg);
    let columns = metadata.row_group(rg).num_columns();
    let row = i64::try_from(row).unwrap_or(i64::MAX);
    (0..columns)
        .filter(|c| mask.leaf_included(*c))
        .filter_map(|c| {
            let locations = pages.page_locations(c)?;
            let at = locations.partition_point(|p| p.first_row_index <= row);
            let page = locations.get(at.checked_sub(1)?)?;
            if page.first_row_index >= row {
                return None;
            }
            let start = u64::try_from(page.offset).ok()?;
            let end = start.checked_add(u64::try_from(page.compressed_page_size).ok()?)?;
            fetched.iter().find_map(|(s, d)| {
                let from = usize::try_from(start.checked_sub(*s)?).ok()?;
                let to = usize::try_from(end - s).ok()?;
                (to <= d.len()).then(|| (start, Bytes::copy_from_slice(&d[from..to])))
            })
        })
        .collect()
}

/// A first pass over a few cheap columns of each row group of a streamed file that chooses
/// the rows the full read decodes (e.g. a checkpoint's `add.partitionValues`, a few
/// kilobytes, before its paths and statistics, most of its bytes): with page locations,
/// pages holding no chosen row are never fetched.
pub(crate) struct Preselect<'a> {
    /// The columns `keep` looks at.
    pub columns: Columns<'a>,
    /// Pushes one bool per row of the batch: true to decode the row.
    pub keep: &'a mut dyn FnMut(&RecordBatch, &mut Vec<bool>) -> Result<()>,
}

/// The rows of row group `rg` that `pre.keep` chooses, as a selection.
async fn preselected_rows<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    reader: &ArrowReaderMetadata,
    prefetched: &[(u64, Bytes)],
    rg: usize,
    pre: &mut Preselect<'_>,
    batches: &mut BatchSizer,
) -> Result<RowSelection> {
    let metadata = reader.metadata();
    let rows = metadata.row_group(rg).num_rows().max(0) as usize;
    let mask = pre.columns.mask(metadata.file_metadata().schema_descr());
    // the footer's row count is not trusted for an allocation: the vector grows with the
    // rows actually decoded
    let mut keep = Vec::with_capacity(rows.min(FIRST_WINDOW_ROWS * 1024));
    let read = RowGroupDecode {
        path,
        reader,
        prefetched,
        row_group: rg,
        mask,
        batches,
        limit: None,
        selection: None,
        policy: FetchPolicy::LOG_STREAM,
        on_refused: None,
    };
    decode_row_group(storage, read, None, &mut |b| {
        (pre.keep)(&b, &mut keep)?;
        Ok(true)
    })
    .await?;
    if keep.len() != rows {
        return Err(Error::parquet(
            path,
            format!(
                "row group {rg} decoded {} rows where its footer says {rows}",
                keep.len()
            ),
        ));
    }
    Ok(RowSelection::from_filters(&[BooleanArray::from(keep)]))
}

/// Rows of the first window of a streamed file (see [`windows`]).
const FIRST_WINDOW_ROWS: usize = 1024;

/// Read the selected columns of the Parquet file at `path` a window of about `window`
/// rows at a time (each window fetches only its own pages where the file has page
/// locations), handing each decoded batch to `on_batch`, which returns false to stop:
/// memory follows the window, not the file. Used to stream checkpoints.
pub(crate) async fn stream_parquet<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    columns: Columns<'_>,
    window: usize,
    mut preselect: Option<Preselect<'_>>,
    on_batch: &mut dyn FnMut(RecordBatch) -> Result<bool>,
) -> Result<()> {
    let (reader, tail_start, tail) =
        read_metadata(storage, path, size, FetchPolicy::LOG_STREAM).await?;
    let metadata = reader.metadata();
    let mask = columns.mask(metadata.file_metadata().schema_descr());
    let tail_part = vec![(tail_start, tail)];
    let mut go_on = true;
    // one of each per file: later windows and row groups start from what earlier ones
    // measured
    let mut batches = BatchSizer::new(LOG_BATCH_ROWS);
    let mut preselect_batches = BatchSizer::new(LOG_BATCH_ROWS);
    for rg in 0..metadata.num_row_groups() {
        let rows = metadata.row_group(rg).num_rows().max(0) as usize;
        let chosen = match preselect.as_mut() {
            Some(p) => Some(
                preselected_rows(
                    storage,
                    path,
                    &reader,
                    &tail_part,
                    rg,
                    p,
                    &mut preselect_batches,
                )
                .await?,
            ),
            None => None,
        };
        if chosen.as_ref().is_some_and(|c| !c.selects_any()) {
            continue;
        }
        let starts = page_starts(metadata, rg, &mask);
        let windows = windows(rows, FIRST_WINDOW_ROWS, window, starts.as_deref());
        // every window needs the dictionary pages of its columns: fetched once per row
        // group, not once per window (a column of unique paths has a 1 MiB dictionary)
        let mut prefetched = tail_part.clone();
        if windows.len() > 1 {
            prefetched.extend(dictionary_pages(storage, path, metadata, rg, &mask).await?);
        }
        // pages that straddle two windows, fetched by the first, handed to the second
        let mut carried: Vec<(u64, Bytes)> = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            let mut selectors = Vec::with_capacity(3);
            if w.start > 0 {
                selectors.push(RowSelector::skip(w.start));
            }
            selectors.push(RowSelector::select(w.len()));
            if w.end < rows {
                selectors.push(RowSelector::skip(rows - w.end));
            }
            let selection = (w.len() < rows).then(|| RowSelection::from(selectors));
            let selection = match (selection, &chosen) {
                (Some(w), Some(c)) => Some(w.intersection(c)),
                (None, Some(c)) => Some(c.clone()),
                (w, None) => w,
            };
            if selection.as_ref().is_some_and(|s| !s.selects_any()) {
                carried.clear();
                continue;
            }
            let mut in_hand = prefetched.clone();
            in_hand.append(&mut carried);
            let read = RowGroupDecode {
                path,
                reader: &reader,
                prefetched: &in_hand,
                row_group: rg,
                mask: mask.clone(),
                batches: &mut batches,
                limit: None,
                selection,
                policy: FetchPolicy::LOG_STREAM,
                on_refused: None,
            };
            let mut fetched = Vec::new();
            decode_row_group(storage, read, Some(&mut fetched), &mut |b| {
                go_on = on_batch(b)?;
                Ok(go_on)
            })
            .await?;
            if !go_on {
                return Ok(());
            }
            if let Some(next) = windows.get(i + 1) {
                carried = straddling_pages(metadata, rg, &mask, next.start, &fetched);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn coalesces_neighbouring_ranges() {
        assert_eq!(coalesce(&[10..20, 0..5, 6..8], 1), vec![0..8, 10..20]);
        assert_eq!(coalesce(&[0..5, 100..200], 10), vec![0..5, 100..200]);
        assert_eq!(coalesce(&[0..50, 10..20], 0), vec![0..50]);
        assert!(coalesce(&[], 5).is_empty());
    }

    /// 20,000 rows in one row group of small pages, with page locations: `part` (row /
    /// 5,000, so four runs) and a wide `payload`.
    fn streamed_file() -> Bytes {
        use arrow_array::{Int32Array, StringArray};
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::WriterProperties;
        let rows = 20_000;
        let part = Int32Array::from_iter_values((0..rows).map(|r| r / 5_000));
        let payload =
            StringArray::from_iter_values((0..rows).map(|r| format!("{r:08}-{}", "x".repeat(40))));
        let batch = RecordBatch::try_from_iter([
            ("part", Arc::new(part) as arrow_array::ArrayRef),
            ("payload", Arc::new(payload) as arrow_array::ArrayRef),
        ])
        .unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows as usize))
            // pages of ~4 KB: 100 rows of payload, ~1,100 of part (so part's pages
            // straddle windows, which end where payload's pages start)
            .set_data_page_size_limit(4096)
            .set_write_batch_size(100)
            .set_dictionary_enabled(false)
            .build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        Bytes::from(out)
    }

    fn stream(
        file: &Bytes,
        window: usize,
        keep_part: Option<i32>,
        on_row: &mut dyn FnMut(i32),
    ) -> deltalens_storage::RequestStats {
        use arrow_array::cast::AsArray;
        use arrow_array::types::Int32Type;
        use deltalens_storage::CountingStorage;
        use deltalens_storage::MemoryStorage;
        let memory = MemoryStorage::new();
        memory.put("f.parquet", file.clone(), 0);
        let storage = CountingStorage::new(memory);
        let columns = Columns {
            include: &[&["part"], &["payload"]],
            exclude: &[],
        };
        let mut keep = |b: &RecordBatch, out: &mut Vec<bool>| {
            let part = b.column(0).as_primitive::<Int32Type>();
            out.extend(part.values().iter().map(|p| Some(*p) == keep_part));
            Ok(())
        };
        let preselect = keep_part.map(|_| Preselect {
            columns: Columns {
                include: &[&["part"]],
                exclude: &[],
            },
            keep: &mut keep,
        });
        let size = file.len() as u64;
        futures::executor::block_on(stream_parquet(
            &storage,
            "f.parquet",
            size,
            columns,
            window,
            preselect,
            &mut |b| {
                b.column(0)
                    .as_primitive::<Int32Type>()
                    .values()
                    .iter()
                    .for_each(|p| on_row(*p));
                Ok(true)
            },
        ))
        .unwrap();
        storage.stats()
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_preselection_decodes_and_fetches_only_the_chosen_rows() {
        let file = streamed_file();
        let mut seen = Vec::new();
        let all = stream(&file, 4_000, None, &mut |p| seen.push(p));
        assert_eq!(seen.len(), 20_000);
        let mut chosen = Vec::new();
        let one = stream(&file, 4_000, Some(2), &mut |p| chosen.push(p));
        assert_eq!(chosen.len(), 5_000);
        assert!(chosen.iter().all(|p| *p == 2));
        // a quarter of the rows: well under half the bytes (the pages of the other three
        // runs are never fetched)
        assert!(
            one.bytes * 2 < all.bytes,
            "{} of {} bytes",
            one.bytes,
            all.bytes
        );
        let mut none = 0;
        let nothing = stream(&file, 4_000, Some(9), &mut |_| none += 1);
        assert_eq!(none, 0);
        assert!(
            nothing.bytes * 5 < all.bytes,
            "{} of {}",
            nothing.bytes,
            all.bytes
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_page_split_by_two_windows_is_fetched_once() {
        let file = streamed_file();
        let whole = stream(&file, 20_000, None, &mut |_| {});
        let mut rows = 0;
        let windowed = stream(&file, 2_000, None, &mut |_| rows += 1);
        assert_eq!(rows, 20_000);
        // the windows end where the wide column's pages start, so the narrow column's
        // pages straddle them: each is still fetched once, so the windows together
        // fetch no more than one read of the whole row group
        assert!(
            windowed.bytes <= whole.bytes,
            "{} bytes in windows, {} in one read",
            windowed.bytes,
            whole.bytes
        );
    }

    /// A batch of `rows` strings of `bytes` bytes each.
    fn strings(rows: usize, bytes: usize) -> RecordBatch {
        let value = "v".repeat(bytes);
        let a = arrow_array::StringArray::from_iter_values((0..rows).map(|_| value.as_str()));
        RecordBatch::try_from_iter([("s", Arc::new(a) as arrow_array::ArrayRef)]).unwrap()
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn batches_grow_from_one_row_to_the_batch_size_when_rows_are_small() {
        let mut b = BatchSizer::new(8192);
        let mut sizes = vec![b.rows()];
        for _ in 0..6 {
            b.measured(&strings(b.rows(), 10));
            sizes.push(b.rows());
        }
        assert_eq!(sizes, vec![1, 8, 64, 512, 4096, 8192, 8192]);
        // never more than asked for, never none
        assert_eq!(BatchSizer::new(3).rows(), 1);
        assert_eq!(BatchSizer::new(0).rows(), 1);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn batches_of_large_rows_stay_within_the_batch_bytes() {
        let row = 1 << 20;
        let mut b = BatchSizer::new(8192);
        b.measured(&strings(1, row));
        let rows = b.rows();
        assert!(
            rows > 1 && rows as u64 * row as u64 <= limits::BATCH_BYTES,
            "{rows}"
        );
        // rows that grow shrink the next batch; a row over the budget is a batch alone
        b.measured(&strings(rows, 4 * row));
        assert!(
            b.rows() * 4 * row <= limits::BATCH_BYTES as usize,
            "{}",
            b.rows()
        );
        b.measured(&strings(1, limits::BATCH_BYTES as usize + 1));
        assert_eq!(b.rows(), 1);
        // bytes copied into every row later (partition values) count too
        let b = BatchSizer::new(8192).with_row_overhead(limits::BATCH_BYTES / 100);
        assert_eq!(b.rows(), 1);
        let mut b = b;
        b.measured(&strings(1, 0));
        assert!(b.rows() <= 100, "{}", b.rows());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_refused_batch_shrinks_the_next_ones_and_one_row_cannot_shrink() {
        let mut b = BatchSizer::new(8192);
        for _ in 0..5 {
            b.measured(&strings(b.rows(), 1));
        }
        assert_eq!(b.rows(), 8192);
        // refused at 8,192 rows, its largest value 1 MiB: as many rows as fit the batch
        // bytes at that size, and never more than half the refused batch again
        assert!(b.refused(8192, 1 << 20));
        assert_eq!(b.rows(), (limits::BATCH_BYTES >> 20) as usize);
        for _ in 0..8 {
            b.measured(&strings(b.rows(), 1));
        }
        assert_eq!(b.rows(), 4096);
        // a refusal that says nothing of its values (levels of lists) still shrinks
        assert!(b.refused(4096, 0));
        assert_eq!(b.rows(), 512);
        assert!(b.refused(2, 0));
        assert_eq!(b.rows(), 1);
        assert!(!b.refused(1, 0));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn after_selected_skips_the_rows_already_handed_on() {
        let sel = |s: &[(bool, usize)]| {
            RowSelection::from(
                s.iter()
                    .map(|&(skip, n)| {
                        if skip {
                            RowSelector::skip(n)
                        } else {
                            RowSelector::select(n)
                        }
                    })
                    .collect::<Vec<_>>(),
            )
        };
        let s = sel(&[(false, 10), (true, 5), (false, 10)]);
        // none handed on: unchanged
        assert_eq!(after_selected(&s, 0), s);
        // within the first run
        assert_eq!(
            after_selected(&s, 4),
            sel(&[(true, 4), (false, 6), (true, 5), (false, 10)])
        );
        // past the first run: the skipped rows stay skipped
        assert_eq!(
            after_selected(&s, 13),
            sel(&[(true, 10), (true, 5), (true, 3), (false, 7)])
        );
        // every selected row handed on: nothing left
        assert!(!after_selected(&s, 20).selects_any());
        assert_eq!(after_selected(&s, 20).row_count(), 0);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn row_groups_are_read_in_windows_where_pages_can_be_located() {
        let every: Vec<usize> = (0..40).collect();
        let all = Some(&every[..]);
        assert_eq!(windows(10, 4, 4, all), vec![0..4, 4..8, 8..10]);
        assert_eq!(windows(10, 4, 4, None), vec![0..10]);
        assert_eq!(windows(3, 4, 4, all), vec![0..3]);
        assert_eq!(windows(0, 4, 4, all), vec![0..0]);
        assert_eq!(windows(8, 4, 4, all), vec![0..4, 4..8]);
        // growing from the first window to the largest
        assert_eq!(
            windows(30, 2, 8, all),
            vec![0..2, 2..6, 6..14, 14..22, 22..30]
        );
        // ending where pages start: never a page in two windows
        let pages = [0, 5, 7, 20, 21];
        assert_eq!(windows(30, 2, 8, Some(&pages)), vec![0..5, 5..20, 20..30]);
    }
}

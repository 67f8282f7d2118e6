//! Reading Parquet files over [`Storage`] with the parquet crate's push decoders:
//! the footer by one suffix range, then only the projected column chunks, with
//! neighbouring ranges coalesced into one request.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use deltalens_storage::{ByteRange, Storage};
use futures::{StreamExt, TryStreamExt};
use parquet::DecodeResult;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::arrow::push_decoder::ParquetPushDecoderBuilder;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataPushDecoder};
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

/// A footer states its own length: a crafted one must not size a read
/// ([`limits::MAX_FOOTER_BYTES`]).
fn check_footer_ranges(ranges: &[Range<u64>], path: &str) -> Result<()> {
    let wanted: u64 = ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum();
    limits::check(
        "MAX_FOOTER_BYTES",
        "the Parquet footer's length",
        wanted,
        limits::MAX_FOOTER_BYTES,
        path,
    )
}

/// Every column chunk a footer describes lies inside the file (offsets and lengths are
/// signed in Parquet's metadata: a crafted footer with a negative or overlong chunk would
/// otherwise reach the decoder, which does not expect one).
fn check_layout(md: &ParquetMetaData, size: u64, path: &str) -> Result<()> {
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

/// Read the footer of the Parquet file at `path` (`size` bytes). Returns the metadata and
/// any bytes already fetched (offset, data) so they can be reused.
pub(crate) async fn read_metadata<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    policy: FetchPolicy,
) -> Result<(ParquetMetaData, u64, Bytes)> {
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
                return Ok((md, start, first));
            }
            DecodeResult::NeedsData(ranges) => {
                check_footer_ranges(&ranges, path)?;
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

/// Decode `row_group` of a Parquet file whose metadata is known, reading only the columns
/// in `mask` (and, with `limit`, only as many rows as needed), handing each batch to
/// `on_batch`; `on_batch` returns false to stop early.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn decode_row_group<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    metadata: &Arc<ParquetMetaData>,
    prefetched: &(u64, Bytes),
    row_group: usize,
    mask: ProjectionMask,
    batch_size: usize,
    limit: Option<usize>,
    selection: Option<RowSelection>,
    policy: FetchPolicy,
    on_batch: &mut dyn FnMut(RecordBatch) -> Result<bool>,
) -> Result<()> {
    let mut builder = ParquetPushDecoderBuilder::try_new_decoder(metadata.clone())
        .map_err(|e| Error::parquet(path, e))?
        .with_projection(mask)
        .with_row_groups(vec![row_group])
        .with_batch_size(batch_size.max(1));
    let rows = metadata.row_group(row_group).num_rows().max(0) as usize;
    let mut selection = selection;
    if let Some(l) = limit {
        builder = builder.with_limit(l);
        if metadata.page_index().is_some() && l < rows && selection.is_none() {
            // select only the first rows: with page locations only their pages are fetched
            selection = Some(RowSelection::from(vec![
                RowSelector::select(l),
                RowSelector::skip(rows - l),
            ]));
        }
    }
    if let Some(sel) = selection {
        if !sel.selects_any() {
            return Ok(());
        }
        builder = builder.with_row_selection(sel);
    }
    let mut decoder = builder.build().map_err(|e| Error::parquet(path, e))?;
    let (start, tail) = prefetched;
    if !tail.is_empty() {
        decoder
            .push_range(*start..*start + tail.len() as u64, tail.clone())
            .map_err(|e| Error::parquet(path, e))?;
    }
    loop {
        match guarded(path, || decoder.try_decode())? {
            DecodeResult::Data(batch) => {
                if !on_batch(batch)? {
                    return Ok(());
                }
            }
            DecodeResult::NeedsData(ranges) => {
                check_footer_ranges(&ranges, path)?;
                let data = fetch_ranges(storage, path, &ranges, policy.coalesce_gap).await?;
                decoder
                    .push_ranges(ranges, data)
                    .map_err(|e| Error::parquet(path, e))?;
            }
            DecodeResult::Finished => return Ok(()),
        }
    }
}

/// Read the selected columns of every row of the Parquet file at `path`, handing each
/// decoded batch to `on_batch` (so only one batch of Arrow data is alive at a time).
pub(crate) async fn read_parquet<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    columns: Columns<'_>,
    on_batch: &mut dyn FnMut(&RecordBatch) -> Result<()>,
) -> Result<()> {
    let (metadata, tail_start, tail) = read_metadata(storage, path, size, FetchPolicy::LOG).await?;
    let metadata = Arc::new(metadata);
    let mask = columns.mask(metadata.file_metadata().schema_descr());
    let mut decoder = ParquetPushDecoderBuilder::try_new_decoder(metadata)
        .map_err(|e| Error::parquet(path, e))?
        .with_projection(mask)
        .with_batch_size(8192)
        .build()
        .map_err(|e| Error::parquet(path, e))?;
    // What the footer request already brought (the whole file when it is small).
    decoder
        .push_range(tail_start..size, tail)
        .map_err(|e| Error::parquet(path, e))?;
    loop {
        match guarded(path, || decoder.try_decode())? {
            DecodeResult::Data(batch) => on_batch(&batch)?,
            DecodeResult::NeedsData(ranges) => {
                let data =
                    fetch_ranges(storage, path, &ranges, FetchPolicy::LOG.coalesce_gap).await?;
                decoder
                    .push_ranges(ranges, data)
                    .map_err(|e| Error::parquet(path, e))?;
            }
            DecodeResult::Finished => return Ok(()),
        }
    }
}

#[cfg(test)]
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
}

//! Reading a snapshot's rows: column projection (Flink's `columnNames`), a row limit that
//! stops fetching once met, a batch size (`parquetBatchSize`), deletion vectors, column
//! mapping and partition values, as Arrow record batches in the table's logical schema.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, Schema, SchemaRef};
use deltalens_storage::Storage;
use parquet::arrow::{ProjectionMask, parquet_to_arrow_schema};
use roaring::RoaringTreemap;

use crate::actions::{Add, StringMap};
use crate::column_mapping::{ColumnMappingMode, conform, find_physical, relaxed};
use crate::deletion_vector::{load_deletion_vector, relative_to_table};
use crate::error::{Error, Result};
use crate::parquet_read::{FetchPolicy, decode_row_group, read_metadata};
use crate::partition_values::partition_array;
use crate::predicate::Predicate;
use crate::schema::StructField;
use crate::skipping::{FileStats, RowGroupStats, could_match, page_selection};
use crate::snapshot::Snapshot;

/// Default rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// What to read.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Columns to return, in this order (logical names); all when `None`.
    pub columns: Option<Vec<String>>,
    /// Stop after this many rows.
    pub limit: Option<usize>,
    /// Rows per batch.
    pub batch_size: usize,
    /// Only rows for which this holds.
    pub filter: Option<Predicate>,
    /// Skip files and row groups whose partition values or statistics show no row can
    /// pass the filter (never changes results; off only to verify that).
    pub prune: bool,
    /// Bytes the scan may decode in all (Parquet pages decompressed into Arrow arrays,
    /// before filtering): a row group whose projected column chunks' uncompressed size
    /// would pass what is left is refused before it is fetched, and the decoded batches
    /// are counted as they come (a footer that understates sizes is caught at the batch
    /// that passes the limit). `None`: no limit. A compressed file cannot make a worker
    /// decode gigabytes for a few kilobytes read.
    pub max_decoded_bytes: Option<u64>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            columns: None,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
            filter: None,
            prune: true,
            max_decoded_bytes: None,
        }
    }
}

/// Counters of a finished scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanMetrics {
    pub files_read: usize,
    /// Files skipped by partition values or file statistics.
    pub files_skipped: usize,
    /// Row groups skipped by their statistics (or fully deleted).
    pub row_groups_skipped: usize,
    /// Rows in pages the page index ruled out.
    pub rows_skipped_by_page_index: usize,
    pub row_groups_read: usize,
    pub rows_returned: usize,
    pub rows_deleted: usize,
}

impl ScanMetrics {
    /// The sum of two shares' metrics.
    pub fn merge(self, o: ScanMetrics) -> ScanMetrics {
        ScanMetrics {
            files_read: self.files_read + o.files_read,
            files_skipped: self.files_skipped + o.files_skipped,
            row_groups_skipped: self.row_groups_skipped + o.row_groups_skipped,
            rows_skipped_by_page_index: self.rows_skipped_by_page_index
                + o.rows_skipped_by_page_index,
            row_groups_read: self.row_groups_read + o.row_groups_read,
            rows_returned: self.rows_returned + o.rows_returned,
            rows_deleted: self.rows_deleted + o.rows_deleted,
        }
    }
}

/// The storage path of a data file named in the log: percent-decoded, relative to the
/// table root (absolute URIs inside the table are made relative), and refused when it
/// would leave the table (see [`crate::table_path`]).
pub fn data_file_path(path: &str, table_location: &str) -> Result<String> {
    let refused = |message: String| Error::DataFile {
        path: path.to_string(),
        message,
    };
    if path.contains("://") || path.starts_with("file:") {
        let rel = relative_to_table(path, table_location).ok_or_else(|| {
            refused(format!(
                "absolute path outside the table at {table_location}"
            ))
        })?;
        crate::table_path::check(&rel).map_err(|m| refused(m.to_string()))?;
        return Ok(rel);
    }
    crate::table_path::decode_checked(path).map_err(refused)
}

/// The uncompressed bytes of the column chunks of `row_group` that `mask` reads, scaled
/// to the `rows` of it that will be decoded (the footer's own figures: negative ones count
/// as zero, the decoded batches are counted as well).
fn projected_uncompressed(
    metadata: &parquet::file::metadata::ParquetMetaData,
    row_group: usize,
    mask: &ProjectionMask,
    rows: u64,
) -> u64 {
    let rg = metadata.row_group(row_group);
    let total: u64 = rg
        .columns()
        .iter()
        .enumerate()
        .filter(|(i, _)| mask.leaf_included(*i))
        .map(|(_, c)| c.uncompressed_size().max(0) as u64)
        .fold(0, u64::saturating_add);
    let all = rg.num_rows().max(0) as u64;
    if all == 0 || rows >= all {
        return total;
    }
    // rows < all here: the product fits in 128 bits and the quotient in 64
    ((total as u128 * rows as u128).div_ceil(all as u128)) as u64
}

/// Which rows of a data file to return.
#[derive(Debug, Clone, Default)]
pub enum RowMask {
    /// Every row.
    #[default]
    All,
    /// Every row but these (a deletion vector).
    Without(RoaringTreemap),
    /// Only these rows (rows a deletion vector newly deleted, for change data).
    Only(RoaringTreemap),
}

impl RowMask {
    /// Every row but `deleted` (every row when it is empty).
    pub fn without(deleted: RoaringTreemap) -> RowMask {
        if deleted.is_empty() {
            RowMask::All
        } else {
            RowMask::Without(deleted)
        }
    }

    fn keeps(&self, row: u64) -> bool {
        match self {
            RowMask::All => true,
            RowMask::Without(d) => !d.contains(row),
            RowMask::Only(k) => k.contains(row),
        }
    }

    /// True when no row of `rows` is kept.
    fn skips_all(&self, rows: std::ops::Range<u64>) -> bool {
        let n = rows.end - rows.start;
        match self {
            RowMask::All => n == 0,
            RowMask::Without(d) => d.range_cardinality(rows) == n,
            RowMask::Only(k) => k.range_cardinality(rows) == 0,
        }
    }
}

/// One data (or change data) file to read.
#[derive(Debug, Clone)]
pub struct FileRead<'f> {
    /// The path as written in the log.
    pub path: &'f str,
    pub size: i64,
    pub partition_values: &'f StringMap,
    pub rows: RowMask,
}

/// A planned scan of one snapshot.
pub struct Scan<'a> {
    snapshot: &'a Snapshot,
    options: ScanOptions,
    mode: ColumnMappingMode,
    /// The logical fields read: the output columns, then columns only the filter reads.
    fields: Vec<StructField>,
    /// How many of `fields` are output.
    n_output: usize,
    /// The schema of `fields`.
    read_schema: SchemaRef,
    /// The schema of the output (the first `n_output` fields).
    schema: SchemaRef,
    /// Bytes decoded so far, by every share (see [`ScanOptions::max_decoded_bytes`]).
    decoded: AtomicU64,
}

impl Snapshot {
    /// Plan a scan of this version's files; unknown columns are an error that names them.
    pub fn scan(&self, options: ScanOptions) -> Result<Scan<'_>> {
        Scan::new(self, options)
    }
}

impl<'a> Scan<'a> {
    /// Plan a scan of `snapshot` ([`Snapshot::scan`]); unknown columns are an error that
    /// names them.
    pub(crate) fn new(snapshot: &'a Snapshot, options: ScanOptions) -> Result<Self> {
        let all = snapshot.schema.fields();
        let fields: Vec<StructField> = match &options.columns {
            None => all.to_vec(),
            Some(cols) => cols
                .iter()
                .map(|c| {
                    all.iter()
                        .find(|f| &f.name == c)
                        .or_else(|| all.iter().find(|f| f.name.eq_ignore_ascii_case(c)))
                        .cloned()
                        .ok_or_else(|| Error::InvalidArgument {
                            message: format!(
                                "unknown column {c:?}; the table has: {}",
                                all.iter()
                                    .map(|f| f.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        })
                })
                .collect::<Result<_>>()?,
        };
        let n_output = fields.len();
        let mut fields = fields;
        if let Some(filter) = &options.filter {
            for path in filter.columns() {
                let Some(first) = path.first() else { continue };
                let known = all
                    .iter()
                    .find(|f| &f.name == first)
                    .or_else(|| all.iter().find(|f| f.name.eq_ignore_ascii_case(first)));
                if let Some(f) = known
                    && !fields.iter().any(|x| x.name == f.name)
                {
                    fields.push(f.clone());
                }
            }
        }
        let arrow = snapshot.schema.to_arrow()?;
        let read_schema = Arc::new(Schema::new(
            fields
                .iter()
                .map(|f| {
                    arrow
                        .field_with_name(&f.name)
                        .map(relaxed)
                        .map_err(|e| Error::InvalidSchema {
                            message: e.to_string(),
                        })
                })
                .collect::<Result<Vec<Field>>>()?,
        ));
        if let Some(filter) = &options.filter {
            filter.validate(&read_schema)?;
        }
        let schema = Arc::new(Schema::new(read_schema.fields()[..n_output].to_vec()));
        Ok(Scan {
            snapshot,
            mode: ColumnMappingMode::of(&snapshot.metadata),
            options,
            fields,
            n_output,
            read_schema,
            schema,
            decoded: AtomicU64::new(0),
        })
    }

    /// Also read `field`, a column data files hold outside the table schema (such as
    /// `_change_type` in change data files); files without it read nulls.
    pub fn with_extra_field(mut self, field: StructField, arrow: Field) -> Self {
        self.fields.insert(self.n_output, field);
        let mut fields: Vec<Field> = self
            .read_schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.insert(self.n_output, arrow);
        self.n_output += 1;
        self.read_schema = Arc::new(Schema::new(fields));
        self.schema = Arc::new(Schema::new(
            self.read_schema.fields()[..self.n_output].to_vec(),
        ));
        self
    }

    /// The schema of the batches the scan returns.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The scan's schema followed by `extra` columns (those change feeds and diffs add).
    pub fn schema_with(&self, extra: impl IntoIterator<Item = Field>) -> SchemaRef {
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.extend(extra);
        Arc::new(Schema::new(fields))
    }

    /// The files the scan reads, in order.
    pub fn files(&self) -> &'a [Add] {
        &self.snapshot.files
    }

    /// The storage the snapshot's table is read through.
    fn storage(&self) -> &dyn Storage {
        self.snapshot.table().storage().as_ref()
    }

    /// The table's location (absolute paths in the log are resolved against it).
    fn location(&self) -> &str {
        self.snapshot.table().location()
    }

    /// Run the scan, handing each non-empty batch to `sink`; `sink` returns false to stop.
    pub async fn execute(
        &self,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<ScanMetrics> {
        self.execute_partition(0, 1, sink).await
    }

    /// Run the scan as `n` interleaved shares on the current task (no threads): while one
    /// share waits for storage, another decodes. Batches arrive in no fixed order across
    /// files. For single-threaded hosts (a browser tab, a worker) where I/O is the wait.
    pub async fn execute_interleaved(
        &self,
        n: usize,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<ScanMetrics> {
        let n = n.max(1);
        let sink = std::cell::RefCell::new(sink);
        let stopped = std::cell::Cell::new(false);
        let shares = (0..n).map(|part| {
            let (sink, stopped) = (&sink, &stopped);
            async move {
                let mut share_sink = |b: RecordBatch| -> Result<bool> {
                    if stopped.get() {
                        return Ok(false);
                    }
                    let go = (*sink.borrow_mut())(b)?;
                    if !go {
                        stopped.set(true);
                    }
                    Ok(go)
                };
                self.execute_partition(part, n, &mut share_sink).await
            }
        });
        let metrics = futures::future::try_join_all(shares).await?;
        Ok(metrics
            .into_iter()
            .fold(ScanMetrics::default(), |a, b| a.merge(b)))
    }

    /// Run the share `part` of `parts` of the scan (files `part`, `part + parts`, ...), so
    /// that callers with threads can decode files in parallel. The row limit applies to
    /// each share.
    pub async fn execute_partition(
        &self,
        part: usize,
        parts: usize,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<ScanMetrics> {
        let mut m = ScanMetrics::default();
        for add in self.files().iter().skip(part).step_by(parts.max(1)) {
            if self.options.limit.is_some_and(|l| m.rows_returned >= l) {
                break;
            }
            let stats = FileStats::new(
                self.snapshot.schema.fields(),
                self.snapshot.partition_columns(),
                add,
            );
            if let Some(f) = &self.options.filter
                && self.options.prune
                && !could_match(f, &stats, false)
            {
                m.files_skipped += 1;
                continue;
            }
            let rows = match &add.deletion_vector {
                Some(dv) => {
                    let deleted = load_deletion_vector(self.storage(), dv, self.location()).await?;
                    RowMask::Without(deleted)
                }
                None => RowMask::All,
            };
            let file = FileRead {
                path: &add.path,
                size: add.size,
                partition_values: &add.partition_values,
                rows,
            };
            if !self.read_file(&file, Some(&stats), &mut m, sink).await? {
                break;
            }
        }
        Ok(m)
    }

    /// Read one file; false when the sink or the limit stopped the scan.
    pub async fn read_file(
        &self,
        file: &FileRead<'_>,
        stats: Option<&FileStats<'_>>,
        m: &mut ScanMetrics,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<bool> {
        let storage = self.storage();
        let path = data_file_path(file.path, self.location())?;
        let partition_cols = self.snapshot.partition_columns();
        let data_fields: Vec<&StructField> = self
            .fields
            .iter()
            .filter(|f| !partition_cols.contains(&f.name))
            .collect();
        let (metadata, tail_start, tail) =
            read_metadata(storage, &path, file.size as u64, self.fetch_policy()).await?;
        let metadata = Arc::new(metadata);
        m.files_read += 1;
        let file_md = metadata.file_metadata();
        let file_schema =
            parquet_to_arrow_schema(file_md.schema_descr(), file_md.key_value_metadata())
                .map_err(|e| Error::parquet(&path, e))?;
        let roots: Vec<Option<usize>> = data_fields
            .iter()
            .map(|f| find_physical(file_schema.fields(), f, self.mode))
            .collect();
        let mut root_idx: Vec<usize> = roots.iter().flatten().copied().collect();
        root_idx.sort_unstable();
        root_idx.dedup();
        let mask = ProjectionMask::roots(file_md.schema_descr(), root_idx.clone());
        let prefetched = (tail_start, tail);
        let mut row_start: u64 = 0;
        let mut keep_going = true;
        for rg in 0..metadata.num_row_groups() {
            let rg_rows = metadata.row_group(rg).num_rows().max(0) as u64;
            let remaining = self
                .options
                .limit
                .map(|l| l.saturating_sub(m.rows_returned));
            if remaining == Some(0) {
                return Ok(false);
            }
            let (pruned, selection) = match (&self.options.filter, stats) {
                (Some(f), Some(fs)) if self.options.prune => {
                    let rg_stats = RowGroupStats {
                        file: fs,
                        metadata: &metadata,
                        file_schema: &file_schema,
                        mode: self.mode,
                        row_group: rg,
                    };
                    let pruned = !could_match(f, &rg_stats, false);
                    // pages are skipped only where rows need not be counted (row masks
                    // address rows by position in the file)
                    let selection = match file.rows {
                        RowMask::All if !pruned => page_selection(f, &rg_stats),
                        _ => None,
                    };
                    if let Some(sel) = &selection {
                        m.rows_skipped_by_page_index +=
                            (rg_rows as usize).saturating_sub(sel.row_count());
                    }
                    (pruned, selection)
                }
                _ => (false, None),
            };
            if pruned || file.rows.skips_all(row_start..row_start + rg_rows) {
                m.row_groups_skipped += 1;
                row_start += rg_rows;
                continue;
            }
            // with a row mask, rows the decoder returns may be dropped: no limit
            let decode_limit = match (&file.rows, &self.options.filter) {
                (RowMask::All, None) => remaining,
                _ => None,
            };
            let rows_decoded = selection
                .as_ref()
                .map_or(rg_rows, |s| s.row_count() as u64)
                .min(decode_limit.map_or(u64::MAX, |l| l as u64));
            let estimate = projected_uncompressed(&metadata, rg, &mask, rows_decoded);
            self.check_decoded_room(&path, estimate)?;
            m.row_groups_read += 1;
            let mut offset = row_start;
            let mut err = None;
            decode_row_group(
                storage,
                &path,
                &metadata,
                &prefetched,
                rg,
                mask.clone(),
                self.options.batch_size,
                decode_limit,
                selection,
                self.fetch_policy(),
                &mut |batch| {
                    self.count_decoded(&path, batch.get_array_memory_size() as u64)?;
                    let n = batch.num_rows();
                    let out =
                        self.logical_batch(&path, file, &batch, &roots, &root_idx, &data_fields);
                    let out = match out {
                        Ok(o) => o,
                        Err(e) => {
                            err = Some(e);
                            return Ok(false);
                        }
                    };
                    let out = match &file.rows {
                        RowMask::All => out,
                        mask => {
                            let keep: BooleanArray = (offset..offset + n as u64)
                                .map(|r| Some(mask.keeps(r)))
                                .collect();
                            let before = out.num_rows();
                            let f = arrow_select::filter::filter_record_batch(&out, &keep)
                                .map_err(|e| Error::DataFile {
                                    path: path.clone(),
                                    message: e.to_string(),
                                })?;
                            m.rows_deleted += before - f.num_rows();
                            f
                        }
                    };
                    offset += n as u64;
                    let out = match &self.options.filter {
                        Some(f) => {
                            let keep = f.evaluate(&out)?;
                            arrow_select::filter::filter_record_batch(&out, &keep).map_err(|e| {
                                Error::DataFile {
                                    path: path.clone(),
                                    message: e.to_string(),
                                }
                            })?
                        }
                        None => out,
                    };
                    let out = if self.n_output < self.fields.len() {
                        let idx: Vec<usize> = (0..self.n_output).collect();
                        out.project(&idx).map_err(|e| Error::DataFile {
                            path: path.clone(),
                            message: e.to_string(),
                        })?
                    } else {
                        out
                    };
                    let out = match self.options.limit {
                        Some(l) => {
                            let left = l.saturating_sub(m.rows_returned);
                            if out.num_rows() > left {
                                out.slice(0, left)
                            } else {
                                out
                            }
                        }
                        None => out,
                    };
                    m.rows_returned += out.num_rows();
                    if out.num_rows() > 0 && !sink(out)? {
                        keep_going = false;
                        return Ok(false);
                    }
                    Ok(self.options.limit.is_none_or(|l| m.rows_returned < l))
                },
            )
            .await?;
            if let Some(e) = err {
                return Err(e);
            }
            if !keep_going {
                return Ok(false);
            }
            row_start += rg_rows;
        }
        Ok(true)
    }

    /// Refuse to decode `estimate` more bytes when they would pass
    /// [`ScanOptions::max_decoded_bytes`].
    fn check_decoded_room(&self, path: &str, estimate: u64) -> Result<()> {
        let Some(max) = self.options.max_decoded_bytes else {
            return Ok(());
        };
        let used = self
            .decoded
            .load(Ordering::Relaxed)
            .saturating_add(estimate);
        if used > max {
            return Err(Error::DecodedBytesExceeded {
                max,
                used,
                path: path.to_string(),
            });
        }
        Ok(())
    }

    /// Count `n` decoded bytes; an error once the scan's total passes the limit.
    fn count_decoded(&self, path: &str, n: u64) -> Result<()> {
        let used = self
            .decoded
            .fetch_add(n, Ordering::Relaxed)
            .saturating_add(n);
        match self.options.max_decoded_bytes {
            Some(max) if used > max => Err(Error::DecodedBytesExceeded {
                max,
                used,
                path: path.to_string(),
            }),
            _ => Ok(()),
        }
    }

    fn fetch_policy(&self) -> FetchPolicy {
        if self.options.filter.is_some() && self.options.prune {
            FetchPolicy::FILTERED
        } else if self.options.limit.is_some() {
            FetchPolicy::PREVIEW
        } else {
            FetchPolicy::DATA
        }
    }

    /// Turn a decoded batch into the scan's logical schema: data columns conformed,
    /// missing columns as nulls, partition columns materialised.
    fn logical_batch(
        &self,
        path: &str,
        file: &FileRead<'_>,
        batch: &RecordBatch,
        roots: &[Option<usize>],
        root_idx: &[usize],
        data_fields: &[&StructField],
    ) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.fields.len());
        for (f, target) in self.fields.iter().zip(self.read_schema.fields()) {
            let col = match data_fields.iter().position(|d| std::ptr::eq(*d, f)) {
                Some(di) => match roots[di] {
                    Some(root) => {
                        let pos = root_idx.iter().position(|r| *r == root).ok_or_else(|| {
                            Error::DataFile {
                                path: path.to_string(),
                                message: "column not decoded".into(),
                            }
                        })?;
                        conform(
                            path,
                            batch.column(pos),
                            &f.data_type,
                            target.data_type(),
                            self.mode,
                        )?
                    }
                    None => arrow_array::new_null_array(target.data_type(), n),
                },
                None => {
                    let key = f.physical_name().unwrap_or(&f.name);
                    let raw = file
                        .partition_values
                        .get(key)
                        .or_else(|| file.partition_values.get(&f.name))
                        .and_then(|v| v.as_deref());
                    partition_array(&f.name, raw, &f.data_type, target.data_type(), n)?
                }
            };
            columns.push(col);
        }
        RecordBatch::try_new_with_options(
            self.read_schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )
        .map_err(|e| Error::DataFile {
            path: path.to_string(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn data_paths_are_decoded() {
        assert_eq!(
            data_file_path("a%20b/c%252F.parquet", "t").unwrap(),
            "a b/c%2F.parquet"
        );
        assert_eq!(
            data_file_path("s3://b/t/x.parquet", "s3://b/t").unwrap(),
            "x.parquet"
        );
        assert!(data_file_path("s3://elsewhere/x.parquet", "s3://b/t").is_err());
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn data_paths_cannot_leave_the_table() {
        for bad in [
            "../secret.parquet",
            "%2e%2e/%2e%2e/secret.parquet",
            "a/%2E%2E/%2E%2E/x",
            "%2fetc%2fpasswd",
            "a%5c..%5cb",
            "s3://b/t/../other/x.parquet",
            "s3://b/t/a/%2e%2e/%2e%2e/x.parquet",
            "https://h/t/../../x",
        ] {
            let e = data_file_path(bad, "s3://b/t").unwrap_err();
            assert!(matches!(e, Error::DataFile { .. }), "{bad}: {e}");
        }
    }
}

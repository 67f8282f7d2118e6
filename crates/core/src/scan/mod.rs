//! Reading a snapshot's rows: column projection (Flink's `columnNames`), a row limit that
//! stops fetching once met, a batch size (`parquetBatchSize`), deletion vectors, column
//! mapping and partition values, as Arrow record batches in the table's logical schema.

//!
//! A scan runs in stages, one module each: [`plan`] (which files, row groups and pages
//! can hold matching rows: partition values, file and row-group statistics, the page
//! index; the decoded-bytes budget), [`decode`] (a file's footer, then its row groups
//! through the Parquet push decoder), and [`rows`] (each decoded batch in the logical
//! schema, then the row pipeline: deletion-vector mask → filter → projection → limit).
//! [`file`] names a data file and the rows to take from it; [`resume`] continues a scan
//! where an earlier one stopped.

mod decode;
pub mod file;
mod plan;
mod resume;
mod rows;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema, SchemaRef};
use deltalens_storage::Storage;

use crate::actions::Add;
use crate::column_mapping::{ColumnMappingMode, relaxed};
use crate::error::{Error, Result};
use crate::predicate::Predicate;
use crate::schema::StructField;
use crate::snapshot::Snapshot;

pub use file::{FileRead, RowMask, data_file_path};
pub use resume::ScanProgress;

/// Default rows per batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// What to read.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Columns to return, in this order (logical names); all when `None`.
    pub columns: Option<Vec<String>>,
    /// Stop after this many rows.
    pub limit: Option<usize>,
    /// Rows per batch at most: fewer where rows are large, each batch sized by the bytes
    /// per row of the one before ([`crate::limits::BATCH_BYTES`]; a file's first batch is
    /// one row).
    pub batch_size: usize,
    /// Only rows for which this holds.
    pub filter: Option<Predicate>,
    /// Skip files and row groups whose partition values or statistics show no row can
    /// pass the filter (never changes results; off only to verify that).
    pub prune: bool,
    /// Bytes the scan may decode in all (Parquet pages decompressed into Arrow arrays,
    /// before filtering): a row group whose projected column chunks' uncompressed size
    /// would pass what is left is refused before it is fetched, and the decoded batches
    /// are counted as they come (a footer that understates sizes, or a dictionary-encoded
    /// value repeated in every row, is caught at the batch that passes the limit: batches
    /// are sized by bytes, [`crate::limits::BATCH_BYTES`]). `None`: no limit. A compressed file cannot make a worker
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
    /// Data files whose footer was read.
    pub files_read: usize,
    /// Files skipped by partition values or file statistics.
    pub files_skipped: usize,
    /// Row groups skipped by their statistics (or fully deleted).
    pub row_groups_skipped: usize,
    /// Rows in pages the page index ruled out.
    pub rows_skipped_by_page_index: usize,
    /// Row groups decoded.
    pub row_groups_read: usize,
    /// Rows handed to the sink.
    pub rows_returned: usize,
    /// Rows dropped by deletion vectors (or not selected by a row mask).
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
        let table = &snapshot.schema;
        let all = table.fields();
        // positions among the table's columns, each found in constant time (a table may
        // have tens of thousands of columns)
        let mut read: Vec<usize> = match &options.columns {
            None => (0..all.len()).collect(),
            Some(cols) => cols
                .iter()
                .map(|c| {
                    table.index_of(c).ok_or_else(|| Error::InvalidArgument {
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
        let n_output = read.len();
        if let Some(filter) = &options.filter {
            // the columns only the filter reads, each once
            let mut chosen: HashSet<usize> = read.iter().copied().collect();
            for path in filter.columns() {
                let Some(first) = path.first() else { continue };
                if let Some(i) = table.index_of(first)
                    && chosen.insert(i)
                {
                    read.push(i);
                }
            }
        }
        let arrow = table.to_arrow()?;
        let (fields, arrow_fields): (Vec<StructField>, Vec<Field>) = read
            .iter()
            .map(|&i| match (all.get(i), arrow.fields().get(i)) {
                (Some(f), Some(a)) => Ok((f.clone(), relaxed(a))),
                _ => Err(Error::InvalidSchema {
                    message: format!("column {i} of the table schema has no Arrow field"),
                }),
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let read_schema = Arc::new(Schema::new(arrow_fields));
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
    pub(super) fn storage(&self) -> &dyn Storage {
        self.snapshot.table().storage().as_ref()
    }

    /// The table's location (absolute paths in the log are resolved against it).
    pub(super) fn location(&self) -> &str {
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
            let stats = self.file_stats(add);
            if self.prunes_file(&stats) {
                m.files_skipped += 1;
                continue;
            }
            let file = FileRead {
                path: &add.path,
                size: add.size,
                partition_values: &add.partition_values,
                rows: self.row_mask(add).await?,
            };
            if !self.read_file(&file, Some(&stats), &mut m, sink).await? {
                break;
            }
        }
        Ok(m)
    }
}

//! The row pipeline: a decoded batch in the file's columns becomes the scan's logical
//! schema (data columns conformed to the table's types and column mapping, missing
//! columns as nulls, partition columns materialised), then loses the rows a deletion
//! vector removes, the rows the filter rejects, the columns only the filter read, and the
//! rows past the limit — in that order, one small function each.

use std::collections::{HashMap, HashSet};

use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};

use super::file::{Columns, Source};
use super::{FileRead, RowMask, Scan, ScanMetrics};
use crate::column_mapping::conform;
use crate::error::{Error, Result};
use crate::partition_values::partition_array;
use crate::schema::StructField;

/// An error about the data file at `path`.
fn data_error(path: &str, e: impl std::fmt::Display) -> Error {
    Error::DataFile {
        path: path.to_string(),
        message: e.to_string(),
    }
}

impl Scan<'_> {
    /// Where each of the scan's columns is in a file, given through `find` the file's root
    /// column holding a data column (those not from partition values): one pass over the
    /// columns, however many there are.
    pub(super) fn columns_in(&self, find: impl Fn(&StructField) -> Option<usize>) -> Columns {
        let partition_cols: HashSet<&str> = self
            .snapshot
            .partition_columns()
            .iter()
            .map(String::as_str)
            .collect();
        let roots: Vec<Option<Option<usize>>> = self
            .fields
            .iter()
            .map(|f| (!partition_cols.contains(f.name.as_str())).then(|| find(f)))
            .collect();
        let mut root_idx: Vec<usize> = roots.iter().flatten().flatten().copied().collect();
        root_idx.sort_unstable();
        root_idx.dedup();
        // the decoded batch holds the roots in ascending order
        let position: HashMap<usize, usize> =
            root_idx.iter().enumerate().map(|(p, r)| (*r, p)).collect();
        let sources = roots
            .iter()
            .map(|r| match r {
                None => Source::Partition,
                Some(None) => Source::Missing,
                Some(Some(root)) => position
                    .get(root)
                    .map_or(Source::Missing, |p| Source::Decoded(*p)),
            })
            .collect();
        Columns { sources, root_idx }
    }

    /// Turn a decoded batch into the scan's logical schema: data columns conformed,
    /// missing columns as nulls, partition columns materialised.
    pub(super) fn logical_batch(
        &self,
        path: &str,
        file: &FileRead<'_>,
        batch: &RecordBatch,
        columns: &Columns,
    ) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut out: Vec<ArrayRef> = Vec::with_capacity(self.fields.len());
        for ((f, target), source) in self
            .fields
            .iter()
            .zip(self.read_schema.fields())
            .zip(&columns.sources)
        {
            let col = match source {
                Source::Decoded(pos) => {
                    let decoded = batch
                        .columns()
                        .get(*pos)
                        .ok_or_else(|| data_error(path, "column not decoded"))?;
                    conform(path, decoded, &f.data_type, target.data_type(), self.mode)?
                }
                Source::Missing => arrow_array::new_null_array(target.data_type(), n),
                Source::Partition => {
                    let key = f.physical_name().unwrap_or(&f.name);
                    let raw = file
                        .partition_values
                        .get(key)
                        .or_else(|| file.partition_values.get(&f.name))
                        .and_then(|v| v.as_deref());
                    if let Some(r) = raw {
                        self.check_partition_value(path, r, n)?;
                    }
                    partition_array(&f.name, raw, &f.data_type, target.data_type(), n)?
                }
            };
            out.push(col);
        }
        RecordBatch::try_new_with_options(
            self.read_schema.clone(),
            out,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )
        .map_err(|e| data_error(path, e))
    }

    /// A logical batch (rows `first_row..` of its file) through the pipeline into `sink`;
    /// false when the sink stopped the scan.
    pub(super) fn pipe(
        &self,
        path: &str,
        batch: RecordBatch,
        mask: &RowMask,
        first_row: u64,
        m: &mut ScanMetrics,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<bool> {
        let batch = without_deleted(path, batch, mask, first_row, m)?;
        let batch = self.filtered(path, batch)?;
        let batch = self.projected(path, batch)?;
        let batch = self.limited(batch, m);
        m.rows_returned += batch.num_rows();
        Ok(batch.num_rows() == 0 || sink(batch)?)
    }

    /// Only the rows the filter keeps.
    fn filtered(&self, path: &str, batch: RecordBatch) -> Result<RecordBatch> {
        match &self.options.filter {
            Some(f) => {
                let keep = f.evaluate(&batch)?;
                arrow_select::filter::filter_record_batch(&batch, &keep)
                    .map_err(|e| data_error(path, e))
            }
            None => Ok(batch),
        }
    }

    /// Without the columns only the filter read.
    fn projected(&self, path: &str, batch: RecordBatch) -> Result<RecordBatch> {
        if self.n_output < self.fields.len() {
            let idx: Vec<usize> = (0..self.n_output).collect();
            batch.project(&idx).map_err(|e| data_error(path, e))
        } else {
            Ok(batch)
        }
    }

    /// At most the rows the limit still allows.
    fn limited(&self, batch: RecordBatch, m: &ScanMetrics) -> RecordBatch {
        match self.options.limit {
            Some(l) => {
                let left = l.saturating_sub(m.rows_returned);
                if batch.num_rows() > left {
                    batch.slice(0, left)
                } else {
                    batch
                }
            }
            None => batch,
        }
    }
}

/// The rows of `batch` (rows `first_row..` of its file) that `mask` keeps; the dropped
/// ones are counted as deleted.
fn without_deleted(
    path: &str,
    batch: RecordBatch,
    mask: &RowMask,
    first_row: u64,
    m: &mut ScanMetrics,
) -> Result<RecordBatch> {
    // From: the decoder's row selection left the rows before it out already
    if matches!(mask, RowMask::All | RowMask::From(_)) {
        return Ok(batch);
    }
    let n = batch.num_rows() as u64;
    let keep: BooleanArray = (first_row..first_row + n)
        .map(|r| Some(mask.keeps(r)))
        .collect();
    let before = batch.num_rows();
    let kept = arrow_select::filter::filter_record_batch(&batch, &keep)
        .map_err(|e| data_error(path, e))?;
    m.rows_deleted += before - kept.num_rows();
    Ok(kept)
}

//! Decoding: a data file's footer (and the columns of it the scan reads), then each row
//! group the plan keeps, through the Parquet push decoder; every decoded batch goes down
//! the row pipeline ([`super::rows`]).

use arrow_array::RecordBatch;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::RowSelection;

use super::file::{FileLayout, Source};
use super::plan::{RowGroupPlan, projected_uncompressed};
use super::{FileRead, RowMask, Scan, ScanMetrics, data_file_path};
use crate::column_mapping::PhysicalIndex;
use crate::error::Result;
use crate::parquet_read::{BatchSizer, RowGroupDecode, decode_row_group, read_metadata};
use crate::skipping::FileStats;

impl Scan<'_> {
    /// Read one file; false when the sink or the limit stopped the scan.
    pub async fn read_file(
        &self,
        file: &FileRead<'_>,
        stats: Option<&FileStats<'_>>,
        m: &mut ScanMetrics,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<bool> {
        let layout = self.layout(file).await?;
        m.files_read += 1;
        // batches sized by the bytes they decode, the first of one row: partition values
        // are copied into every row of a batch, so they count per row as well
        let partition_bytes: u64 = if layout.columns.sources.contains(&Source::Partition) {
            file.partition_values
                .iter()
                .filter_map(|(_, v)| v.as_ref())
                .map(|v| v.len() as u64)
                .fold(0, u64::saturating_add)
        } else {
            0
        };
        let mut batches =
            BatchSizer::new(self.options.batch_size).with_row_overhead(partition_bytes);
        let mut row_start: u64 = 0;
        for rg in 0..layout.metadata().num_row_groups() {
            let rg_rows = layout.rows_in(rg);
            let remaining = self.remaining(m);
            if remaining == Some(0) {
                return Ok(false);
            }
            let selection = match self.plan_row_group(&layout, rg, row_start, file, stats, m) {
                RowGroupPlan::Skip => {
                    m.row_groups_skipped += 1;
                    row_start += rg_rows;
                    continue;
                }
                RowGroupPlan::Read(selection) => selection,
            };
            // with a row mask, rows the decoder returns may be dropped: no limit
            let decode_limit = match (&file.rows, &self.options.filter) {
                (RowMask::All | RowMask::From(_), None) => remaining,
                _ => None,
            };
            let read = RowGroupRead {
                rg,
                row_start,
                selection,
                decode_limit,
            };
            if !self
                .read_row_group(&layout, file, read, &mut batches, m, sink)
                .await?
            {
                return Ok(false);
            }
            row_start += rg_rows;
        }
        Ok(true)
    }

    /// The footer of `file` and the mapping of the scan's columns onto it.
    async fn layout(&self, file: &FileRead<'_>) -> Result<FileLayout> {
        let path = data_file_path(file.path, self.location())?;
        let (reader, tail_start, tail) =
            read_metadata(self.storage(), &path, file.size as u64, self.fetch_policy()).await?;
        let columns = {
            let index = PhysicalIndex::new(reader.schema().fields(), self.mode);
            self.columns_in(|f| index.find(f))
        };
        let schema = reader.metadata().file_metadata().schema_descr();
        let mask = ProjectionMask::roots(schema, columns.root_idx.clone());
        Ok(FileLayout {
            path,
            reader,
            prefetched: (tail_start, tail),
            columns,
            mask,
        })
    }

    /// Decode one row group into the row pipeline; false when the sink or the limit
    /// stopped the scan.
    async fn read_row_group(
        &self,
        layout: &FileLayout,
        file: &FileRead<'_>,
        read: RowGroupRead,
        batches: &mut BatchSizer,
        m: &mut ScanMetrics,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<bool> {
        let path = &layout.path;
        let rows_decoded = read
            .selection
            .as_ref()
            .map_or(layout.rows_in(read.rg), |s| s.row_count() as u64)
            .min(read.decode_limit.map_or(u64::MAX, |l| l as u64));
        let estimate =
            projected_uncompressed(layout.metadata(), read.rg, &layout.mask, rows_decoded);
        self.check_decoded_room(path, estimate)?;
        m.row_groups_read += 1;
        let mut offset = read.row_start;
        let mut err = None;
        let mut keep_going = true;
        let row_group = RowGroupDecode {
            path,
            reader: &layout.reader,
            prefetched: std::slice::from_ref(&layout.prefetched),
            row_group: read.rg,
            mask: layout.mask.clone(),
            batches,
            limit: read.decode_limit,
            selection: read.selection,
            policy: self.fetch_policy(),
            on_refused: Some(&|bytes| self.count_decoded(path, bytes)),
        };
        decode_row_group(self.storage(), row_group, None, &mut |batch| {
            self.count_decoded(path, batch.get_array_memory_size() as u64)?;
            let n = batch.num_rows() as u64;
            let out = match self.logical_batch(path, file, &batch, &layout.columns) {
                Ok(o) => o,
                Err(e) => {
                    err = Some(e);
                    return Ok(false);
                }
            };
            let first_row = offset;
            offset += n;
            if !self.pipe(path, out, &file.rows, first_row, m, sink)? {
                keep_going = false;
                return Ok(false);
            }
            Ok(self.options.limit.is_none_or(|l| m.rows_returned < l))
        })
        .await?;
        if let Some(e) = err {
            return Err(e);
        }
        Ok(keep_going)
    }
}

/// One row group to decode, as planned.
struct RowGroupRead {
    rg: usize,
    /// The file's row number of the row group's first row.
    row_start: u64,
    selection: Option<RowSelection>,
    /// At most this many rows (a limit with nothing to drop rows after decoding).
    decode_limit: Option<usize>,
}

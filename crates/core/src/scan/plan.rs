//! Planning: which files, row groups and pages of a scan can hold matching rows (the
//! filter against partition values, file statistics, row-group statistics and the page
//! index — pruning never changes results), what a file's deletion vector removes, and
//! the decoded-bytes budget checked before a row group is fetched.

use std::sync::atomic::Ordering;

use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};

use super::file::FileLayout;
use super::{FileRead, RowMask, Scan, ScanMetrics};
use crate::actions::Add;
use crate::deletion_vector::load_deletion_vector;
use crate::error::{Error, Result};
use crate::parquet_read::FetchPolicy;
use crate::skipping::{FileStats, RowGroupStats, could_match, page_selection};

/// What to do with one row group.
pub(super) enum RowGroupPlan {
    /// No row can match (statistics), or every row is deleted.
    Skip,
    /// Decode it, only the selected pages' rows when the page index narrowed them.
    Read(Option<RowSelection>),
}

impl Scan<'_> {
    /// The statistics the log records for `add` (and its partition values).
    pub(super) fn file_stats<'s>(&'s self, add: &'s Add) -> FileStats<'s> {
        FileStats::new(
            self.snapshot.schema.fields(),
            self.snapshot.partition_columns(),
            add,
        )
    }

    /// True when the filter rules the whole file out by its partition values or stats.
    pub(super) fn prunes_file(&self, stats: &FileStats<'_>) -> bool {
        matches!(&self.options.filter, Some(f) if self.options.prune && !could_match(f, stats, false))
    }

    /// The rows of `add` its deletion vector leaves (every row without one).
    pub(super) async fn row_mask(&self, add: &Add) -> Result<RowMask> {
        Ok(match &add.deletion_vector {
            Some(dv) => {
                RowMask::Without(load_deletion_vector(self.storage(), dv, self.location()).await?)
            }
            None => RowMask::All,
        })
    }

    /// Whether row group `rg` of `file` (rows `row_start..` of the file) is read, and
    /// which of its pages. Rows the page index rules out are counted in `m`.
    pub(super) fn plan_row_group(
        &self,
        layout: &FileLayout,
        rg: usize,
        row_start: u64,
        file: &FileRead<'_>,
        stats: Option<&FileStats<'_>>,
        m: &mut ScanMetrics,
    ) -> RowGroupPlan {
        let rg_rows = layout.rows_in(rg);
        let (pruned, selection) = match (&self.options.filter, stats) {
            (Some(f), Some(fs)) if self.options.prune => {
                let rg_stats = RowGroupStats {
                    file: fs,
                    metadata: layout.metadata(),
                    file_schema: layout.file_schema(),
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
            return RowGroupPlan::Skip;
        }
        // a resumed scan: the rows before the position are never decoded
        let selection = match file.rows {
            RowMask::From(p) if p > row_start => {
                let skip = (p - row_start) as usize;
                let prefix = RowSelection::from(vec![
                    RowSelector::skip(skip),
                    RowSelector::select((rg_rows as usize).saturating_sub(skip)),
                ]);
                Some(match selection {
                    Some(s) => s.intersection(&prefix),
                    None => prefix,
                })
            }
            _ => selection,
        };
        RowGroupPlan::Read(selection)
    }

    /// Rows the limit still allows (`None`: no limit).
    pub(super) fn remaining(&self, m: &ScanMetrics) -> Option<usize> {
        self.options
            .limit
            .map(|l| l.saturating_sub(m.rows_returned))
    }

    /// How much of a file to fetch ahead: a filtered scan reads little of each file, a
    /// preview little of the table, a full read everything.
    pub(super) fn fetch_policy(&self) -> FetchPolicy {
        if self.options.filter.is_some() && self.options.prune {
            FetchPolicy::FILTERED
        } else if self.options.limit.is_some() {
            FetchPolicy::PREVIEW
        } else {
            FetchPolicy::DATA
        }
    }

    /// Refuse to decode `estimate` more bytes when they would pass
    /// [`super::ScanOptions::max_decoded_bytes`].
    pub(super) fn check_decoded_room(&self, path: &str, estimate: u64) -> Result<()> {
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

    /// Refuse a partition value over [`crate::limits::MAX_PARTITION_VALUE_BYTES`], and
    /// count its `rows` copies against the decoded-bytes budget before they are made.
    pub(super) fn check_partition_value(&self, path: &str, raw: &str, rows: usize) -> Result<()> {
        let len = raw.len() as u64;
        let max = crate::limits::MAX_PARTITION_VALUE_BYTES;
        if len > max {
            return Err(Error::LimitExceeded {
                limit: "MAX_PARTITION_VALUE_BYTES",
                what: "the bytes of one partition value",
                value: len,
                max,
                path: path.to_string(),
            });
        }
        self.count_decoded(path, len.saturating_mul(rows as u64))
    }

    /// Count `n` decoded bytes; an error once the scan's total passes the limit.
    pub(super) fn count_decoded(&self, path: &str, n: u64) -> Result<()> {
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
}

/// The uncompressed bytes of the column chunks of `row_group` that `mask` reads, scaled
/// to the `rows` of it that will be decoded (the footer's own figures: negative ones count
/// as zero, the decoded batches are counted as well).
pub(super) fn projected_uncompressed(
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

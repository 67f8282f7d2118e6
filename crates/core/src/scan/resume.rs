//! Resuming a scan where an earlier one stopped: the explorer's grid loads rows as the
//! user scrolls, reading each data file once (only the file a page stopped in is read
//! again, its returned rows skipped), instead of re-running a longer scan each time.

use std::collections::BTreeSet;

use arrow_array::RecordBatch;

use super::{FileRead, RowMask, Scan, ScanMetrics};
use crate::error::Result;

/// How far scans of one version have got: the files read to their end, and the file a
/// scan stopped in with the rows it returned from it. Files are named by path, so a
/// later scan may be planned over more files (a preview's snapshot holds only the first
/// files of the log) and still return each row once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanProgress {
    done: BTreeSet<String>,
    stopped_in: Option<StoppedIn>,
}

/// The file a scan stopped in.
#[derive(Clone, Debug, PartialEq, Eq)]
struct StoppedIn {
    path: String,
    /// Rows of it returned so far.
    rows: usize,
    /// Whether resuming reads those rows again and counts them against the limit (a
    /// filtered scan: which rows pass is known only once decoded); without a filter they
    /// are left out by position, never decoded nor counted.
    counted: bool,
}

impl ScanProgress {
    /// Rows a resumed scan reads again and counts against its limit before new ones (only
    /// with a filter): plan it with `limit: Some(n + rows_to_skip())` to get `n` new rows.
    pub fn rows_to_skip(&self) -> usize {
        self.stopped_in
            .as_ref()
            .filter(|s| s.counted)
            .map_or(0, |s| s.rows)
    }

    /// Files read to their end.
    pub fn files_done(&self) -> usize {
        self.done.len()
    }
}

/// The position in a file (of `mask`'s rows) before which `rows` rows are kept: the
/// first `rows` rows a scan of it returns are those before it.
fn position_after(mask: &RowMask, rows: u64) -> u64 {
    let RowMask::Without(deleted) = mask else {
        return rows;
    };
    // the smallest p with p - |deleted ∩ [0, p)| >= rows
    let (mut lo, mut hi) = (rows, rows.saturating_add(deleted.len()));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let kept = mid - if mid == 0 { 0 } else { deleted.rank(mid - 1) };
        if kept >= rows {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The rows of a file a resumed scan reads: `mask` without the first `rows` it keeps.
fn rows_after(mask: RowMask, rows: u64) -> RowMask {
    if rows == 0 {
        return mask;
    }
    let p = position_after(&mask, rows);
    match mask {
        RowMask::All | RowMask::From(_) => RowMask::From(p),
        RowMask::Without(mut d) => {
            d.insert_range(0..p);
            RowMask::Without(d)
        }
        RowMask::Only(mut k) => {
            k.remove_range(0..p);
            RowMask::Only(k)
        }
    }
}

impl Scan<'_> {
    /// Run the scan over the files `progress` has not finished, after the rows already
    /// returned from the one it stopped in, and record how far this run got. Returns the
    /// metrics and whether every file has now been read (nothing more to resume).
    pub async fn execute_resuming(
        &self,
        progress: &mut ScanProgress,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<(ScanMetrics, bool)> {
        let mut m = ScanMetrics::default();
        let counted = self.options.filter.is_some();
        for add in self.files() {
            if progress.done.contains(&add.path) {
                continue;
            }
            if self.options.limit.is_some_and(|l| m.rows_returned >= l) {
                return Ok((m, false));
            }
            let stats = self.file_stats(add);
            if self.prunes_file(&stats) {
                m.files_skipped += 1;
                progress.done.insert(add.path.clone());
                continue;
            }
            let before = match &progress.stopped_in {
                Some(s) if s.path == add.path => s.rows,
                _ => 0,
            };
            let mask = self.row_mask(add).await?;
            // without a filter the rows returned before are left out by position; with
            // one they are read again and dropped here
            let (rows, skip) = if counted {
                (mask, before)
            } else {
                (rows_after(mask, before as u64), 0)
            };
            let file = FileRead {
                path: &add.path,
                size: add.size,
                partition_values: &add.partition_values,
                rows,
            };
            let mut seen = 0usize;
            let mut sink_stopped = false;
            let mut skipping = |b: RecordBatch| -> Result<bool> {
                let n = b.num_rows();
                let from = skip.saturating_sub(seen).min(n);
                seen += n;
                if from == n {
                    return Ok(true);
                }
                let go = sink(b.slice(from, n - from))?;
                sink_stopped = !go;
                Ok(go)
            };
            let read_all = self
                .read_file(&file, Some(&stats), &mut m, &mut skipping)
                .await?;
            // the limit may have cut the file's last row group: then the file counts as
            // stopped in (a limit met at its very end costs one more read of it)
            let at_limit = self.options.limit.is_some_and(|l| m.rows_returned >= l);
            if read_all && !at_limit {
                progress.done.insert(add.path.clone());
                if progress
                    .stopped_in
                    .as_ref()
                    .is_some_and(|s| s.path == add.path)
                {
                    progress.stopped_in = None;
                }
            } else {
                let rows = if counted {
                    seen.max(before)
                } else {
                    before + seen
                };
                progress.stopped_in = Some(StoppedIn {
                    path: add.path.clone(),
                    rows,
                    counted,
                });
                if sink_stopped || at_limit {
                    return Ok((m, false));
                }
            }
        }
        Ok((m, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use roaring::RoaringTreemap;

    #[test]
    fn a_fresh_progress_skips_nothing() {
        let p = ScanProgress::default();
        assert_eq!(p.rows_to_skip(), 0);
        assert_eq!(p.files_done(), 0);
    }

    #[test]
    fn the_position_after_rows_kept_by_a_deletion_vector() {
        assert_eq!(position_after(&RowMask::All, 7), 7);
        let d: RoaringTreemap = [0u64, 1, 5, 6, 7, 20].into_iter().collect();
        let mask = RowMask::Without(d);
        // kept rows: 2 3 4 8 9 10 ...
        assert_eq!(position_after(&mask, 0), 0);
        assert_eq!(position_after(&mask, 1), 3);
        assert_eq!(position_after(&mask, 3), 5);
        assert_eq!(position_after(&mask, 4), 9);
        // past every deleted row: plain arithmetic, no overflow
        assert_eq!(position_after(&mask, 100), 106);
        assert_eq!(position_after(&mask, u64::MAX), u64::MAX);
        match rows_after(mask, 3) {
            RowMask::Without(d) => {
                assert!((0..5).all(|r| d.contains(r)));
                assert!(!d.contains(8));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(rows_after(RowMask::All, 4), RowMask::From(4)));
    }
}

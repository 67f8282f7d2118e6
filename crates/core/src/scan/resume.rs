//! Resuming a scan where an earlier one stopped: the explorer's grid loads rows as the
//! user scrolls, reading each data file once (only the file a page stopped in is read
//! again, its returned rows skipped), instead of re-running a longer scan each time.

use std::collections::BTreeSet;

use arrow_array::RecordBatch;

use super::{FileRead, Scan, ScanMetrics};
use crate::error::Result;

/// How far scans of one version have got: the files read to their end, and the file a
/// scan stopped in with the rows it returned from it. Files are named by path, so a
/// later scan may be planned over more files (a preview's snapshot holds only the first
/// files of the log) and still return each row once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanProgress {
    done: BTreeSet<String>,
    stopped_in: Option<(String, usize)>,
}

impl ScanProgress {
    /// Rows of the file the last scan stopped in that were returned already: a resumed
    /// scan reads them again and drops them, so plan it with
    /// `limit: Some(n + rows_to_skip())` to get `n` new rows.
    pub fn rows_to_skip(&self) -> usize {
        self.stopped_in.as_ref().map_or(0, |(_, n)| *n)
    }

    /// Files read to their end.
    pub fn files_done(&self) -> usize {
        self.done.len()
    }
}

impl Scan<'_> {
    /// Run the scan over the files `progress` has not finished, skipping the rows already
    /// returned from the one it stopped in, and record how far this run got. Returns the
    /// metrics and whether every file has now been read (nothing more to resume).
    pub async fn execute_resuming(
        &self,
        progress: &mut ScanProgress,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<(ScanMetrics, bool)> {
        let mut m = ScanMetrics::default();
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
            let skip = match &progress.stopped_in {
                Some((p, n)) if *p == add.path => *n,
                _ => 0,
            };
            let file = FileRead {
                path: &add.path,
                size: add.size,
                partition_values: &add.partition_values,
                rows: self.row_mask(add).await?,
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
                    .is_some_and(|(p, _)| *p == add.path)
                {
                    progress.stopped_in = None;
                }
            } else {
                progress.stopped_in = Some((add.path.clone(), seen.max(skip)));
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

    #[test]
    fn a_fresh_progress_skips_nothing() {
        let p = ScanProgress::default();
        assert_eq!(p.rows_to_skip(), 0);
        assert_eq!(p.files_done(), 0);
    }
}

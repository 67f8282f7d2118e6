//! Table health over history: the [`Health`] report read at a few versions spread over the
//! commits in the history, reduced to the figures that tell a trend — files and size,
//! the share of small files, of rows hidden by deletion vectors and of files without
//! statistics, partition skew, the log's tail and the tombstones — so a front end can
//! chart how the table got where it is (`deltalens health --series N`, the explorer's
//! Overview tab).
//!
//! Each point is a full read of its version (log replay and file listing), so the number
//! of points is a limit ([`MAX_SERIES_POINTS`]) checked before any is read. A version that
//! cannot be read (its commits cleaned up, a checkpoint missing) is listed in
//! [`HealthSeries::unavailable`] with the reason, and the others are still read.

use deltalens_core::{HistoryEntry, Table, VersionSpec};
use serde::Serialize;

use crate::error::{PresentError, Result};
use crate::health::{Health, Severity};
use crate::text::{table, terminal_safe};
use crate::value::{bytes, timestamp};

/// Points read when the caller does not say.
pub const SERIES_POINTS: usize = 8;
/// Most points one series reads (each is a full read of a version).
pub const MAX_SERIES_POINTS: usize = 32;

/// The health figures of one version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HealthPoint {
    /// The version.
    pub version: u64,
    /// Its commit time (ms since the epoch), when the history has it.
    pub timestamp: Option<i64>,
    /// Active files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// `numRecords` summed (deleted rows included).
    pub records: u64,
    /// Files under 32 MiB over files; `None` for an empty version.
    pub small_file_share: Option<f64>,
    /// Rows hidden by deletion vectors over records; `None` without records.
    pub deleted_row_share: Option<f64>,
    /// Files without statistics over files; `None` for an empty version.
    pub files_without_stats_share: Option<f64>,
    /// Largest partition's bytes over the median's; `None` unpartitioned or median 0.
    pub largest_partition_to_median: Option<f64>,
    /// Commits a reader replays as JSON after the checkpoint.
    pub commits_since_checkpoint: u64,
    /// Removed files the log still names.
    pub tombstones: u64,
    /// Ids of the findings that need attention (`warn`) at this version.
    pub warnings: Vec<&'static str>,
}

/// A version of the series that could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unavailable {
    /// The version.
    pub version: u64,
    /// Why (the reader's error).
    pub reason: String,
}

/// Health at versions spread over the history, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HealthSeries {
    /// The table's location, as given.
    pub location: String,
    /// The points read, oldest version first.
    pub points: Vec<HealthPoint>,
    /// Versions that could not be read.
    pub unavailable: Vec<Unavailable>,
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

impl HealthPoint {
    /// The trend figures of a report; `timestamp` from the history.
    pub fn of(h: &Health, timestamp: Option<i64>) -> HealthPoint {
        let f = &h.files;
        HealthPoint {
            version: h.version,
            timestamp,
            files: f.files,
            bytes: f.bytes,
            records: f.records,
            small_file_share: share(f.files_under_32_mib, f.files),
            deleted_row_share: share(f.rows_hidden_by_deletion_vectors, f.records),
            files_without_stats_share: share(f.files_without_stats, f.files),
            largest_partition_to_median: h.partitions.as_ref().and_then(|p| p.largest_to_median),
            commits_since_checkpoint: h.checkpoint.commits_since,
            tombstones: h.tombstones.tombstones,
            warnings: h
                .findings
                .iter()
                .filter(|x| x.severity == Severity::Warn)
                .map(|x| x.id)
                .collect(),
        }
    }
}

/// `points` of `versions` (any order, duplicates allowed) spread evenly from the oldest to
/// the newest, both included, ascending.
pub fn sample_versions(versions: &[u64], points: usize) -> Vec<u64> {
    let mut all = versions.to_vec();
    all.sort_unstable();
    all.dedup();
    if points == 0 || all.is_empty() {
        return Vec::new();
    }
    if all.len() <= points {
        return all;
    }
    let last = all.len() - 1;
    let mut out: Vec<u64> = (0..points)
        .map(|i| {
            all[if points == 1 {
                last
            } else {
                i * last / (points - 1)
            }]
        })
        .collect();
    out.dedup();
    out
}

impl HealthSeries {
    /// Read `points` versions spread over `history` (newest first, as
    /// [`Table::history`] returns it), ending at `newest` when given (versions after it
    /// are left out). At most [`MAX_SERIES_POINTS`], checked first.
    pub async fn read(
        table: &Table,
        history: &[HistoryEntry],
        newest: Option<u64>,
        points: usize,
        now_ms: i64,
    ) -> Result<HealthSeries> {
        if points > MAX_SERIES_POINTS {
            return Err(PresentError::Core(deltalens_core::Error::InvalidArgument {
                message: format!(
                    "a health series reads at most {MAX_SERIES_POINTS} versions \
                     (MAX_SERIES_POINTS), each in full; {points} asked: ask for fewer"
                ),
            }));
        }
        let within = |v: u64| newest.is_none_or(|n| v <= n);
        let mut versions: Vec<u64> = history
            .iter()
            .map(|e| e.version)
            .filter(|v| within(*v))
            .collect();
        versions.extend(newest);
        let mut series = HealthSeries {
            location: table.location().to_string(),
            points: Vec::new(),
            unavailable: Vec::new(),
        };
        for v in sample_versions(&versions, points) {
            let when = history
                .iter()
                .find(|e| e.version == v)
                .and_then(|e| e.timestamp);
            let read = async {
                let info = table.version_info(VersionSpec::Version(v)).await?;
                Health::read(table.location(), &info, history, now_ms).await
            };
            match read.await {
                Ok(h) => series.points.push(HealthPoint::of(&h, when)),
                Err(e) => series.unavailable.push(Unavailable {
                    version: v,
                    reason: e.to_string(),
                }),
            }
        }
        Ok(series)
    }

    /// A table of the points for a terminal, one version per line (the CLI's one aligned
    /// table writer, [`crate::text::table`]); the location and reasons shown
    /// [`terminal_safe`].
    pub fn text(&self) -> String {
        let pct = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{:.1}%", s * 100.0));
        let rows: Vec<Vec<String>> = self
            .points
            .iter()
            .map(|p| {
                vec![
                    p.version.to_string(),
                    if p.timestamp.is_some() {
                        timestamp(p.timestamp)
                    } else {
                        "-".into()
                    },
                    p.files.to_string(),
                    bytes(i64::try_from(p.bytes).unwrap_or(i64::MAX)),
                    pct(p.small_file_share),
                    pct(p.deleted_row_share),
                    pct(p.files_without_stats_share),
                    p.largest_partition_to_median
                        .map_or("-".to_string(), |r| format!("{r:.1}x")),
                    p.commits_since_checkpoint.to_string(),
                    p.tombstones.to_string(),
                    if p.warnings.is_empty() {
                        "-".to_string()
                    } else {
                        p.warnings.join(", ")
                    },
                ]
            })
            .collect();
        let mut out = format!(
            "health of {} over {} versions\n",
            terminal_safe(&self.location, false),
            self.points.len()
        );
        out.push_str(&table(
            &[
                "version",
                "committed",
                "files",
                "size",
                "small",
                "dv-rows",
                "no-stats",
                "skew",
                "tail",
                "tombstones",
                "attention",
            ],
            &rows,
        ));
        for u in &self.unavailable {
            out.push_str(&format!(
                "version {} not read: {}\n",
                u.version,
                terminal_safe(&u.reason, false)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_spread_from_oldest_to_newest() {
        let v: Vec<u64> = (0..=100).rev().collect();
        assert_eq!(sample_versions(&v, 5), [0, 25, 50, 75, 100]);
        assert_eq!(sample_versions(&v, 1), [100]);
        assert_eq!(sample_versions(&v, 0), Vec::<u64>::new());
        assert_eq!(sample_versions(&[3, 1, 3, 2], 8), [1, 2, 3]);
        assert_eq!(sample_versions(&[7, 9, 10, 11], 3), [7, 9, 11]);
        assert!(sample_versions(&[], 4).is_empty());
        let many: Vec<u64> = (0..1000).collect();
        let s = sample_versions(&many, MAX_SERIES_POINTS);
        assert_eq!((s.len(), s[0], s[s.len() - 1]), (MAX_SERIES_POINTS, 0, 999));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}

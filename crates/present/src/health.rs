//! Table health — "is this table in good shape?" — computed once for every front end
//! (`deltalens health`, `GET /v1/health`, the explorer's Overview tab): file sizes, partition
//! skew, deletion vectors, statistics, checkpoints, maintenance in the history and
//! tombstones, each a [`Finding`] with its figures, a severity, what it means and the usual
//! remedy, plus the typed figures behind them (a file-size histogram and the largest
//! partitions, for charts).
//!
//! No I/O and no clock: [`HealthTally`] is fed the active files and the tombstones one at a
//! time (memory follows the number of partitions, not of files), [`Health::build`] adds the
//! version's facts and the commit history the front end already read, and the caller
//! passes `now_ms`. [`Health::read`] streams both out of a [`VersionInfo`];
//! [`Health::of_table`] also reads the version and the history.
//!
//! Sizes and counts come from a log that may be corrupt or hostile: negative sizes, row
//! counts and cardinalities count as zero and are reported in [`Health::warnings`]; sums
//! never wrap (they saturate at `u64::MAX`, also reported).

use std::collections::BTreeMap;

use deltalens_core::actions::{Add, Metadata, Remove};
use deltalens_core::tombstones::deleted_file_retention;
use deltalens_core::{HistoryEntry, Table, VersionInfo, VersionSpec};
use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::value::{bytes, timestamp};

const MIB: i64 = 1024 * 1024;

/// Files under this size are small: most engines aim at 128 MiB – 1 GiB, and OPTIMIZE's
/// bin-packing rewrites files under its target.
pub const SMALL_FILE_BYTES: i64 = 32 * MIB;
/// Files under this size are under the usual target size of OPTIMIZE.
pub const UNDER_TARGET_FILE_BYTES: i64 = 128 * MIB;
/// The small-files finding warns from this many active files (fewer are cheap to list and
/// open whatever their size) …
pub const SMALL_FILES_MIN_COUNT: u64 = 100;
/// … when more than this share of them is under [`SMALL_FILE_BYTES`].
pub const SMALL_FILES_WARN_SHARE: f64 = 0.5;
/// Partition skew warns when the largest partition holds this many times the median's
/// bytes …
pub const SKEW_WARN_RATIO: f64 = 10.0;
/// … and is reported (info) from this ratio.
pub const SKEW_INFO_RATIO: f64 = 3.0;
/// Partitions listed by name in [`PartitionFigures::top`]; the rest make one "other".
pub const TOP_PARTITIONS: usize = 10;
/// Deletion vectors warn when they hide more than this share of the rows.
pub const DV_WARN_SHARE: f64 = 0.1;
/// Files without statistics warn above this share of the files (info below).
pub const NO_STATS_WARN_SHARE: f64 = 0.1;
/// A reader replaying this many commits after the checkpoint (or from version 0 without
/// one) spends most of its open time on JSON: the checkpoint finding warns.
pub const LONG_TAIL_COMMITS: u64 = 100;
/// Commits of history the front ends read for the maintenance finding (the newest).
pub const HISTORY_COMMITS: usize = 100;

/// How much a finding needs attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Nothing to do.
    Ok,
    /// Worth knowing; no action needed yet.
    Info,
    /// Costs reads (or storage) now; the remedy is usually worth running.
    Warn,
}

impl Severity {
    /// `ok`, `info` or `warn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Warn => "warn",
        }
    }
}

/// One figure of a finding, as text (the typed value is in the report's sections).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// What is measured (`files under 32 MiB`).
    pub label: &'static str,
    /// The value as shown (`93 of 100 (93.0%)`).
    pub value: String,
}

/// One thing checked about the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Stable identifier: `small_files`, `partition_skew`, `deletion_vectors`,
    /// `files_without_stats`, `checkpoint`, `maintenance`, `tombstones`.
    pub id: &'static str,
    /// Short title (`small files`).
    pub title: &'static str,
    /// How much it needs attention.
    pub severity: Severity,
    /// The headline figure in one sentence.
    pub summary: String,
    /// The figures behind it.
    pub figures: Vec<Figure>,
    /// What the figures mean for readers and writers.
    pub meaning: String,
    /// The usual remedy.
    pub remedy: String,
}

/// Sums over the active files.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FileFigures {
    /// Active files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// `numRecords` summed over the files with statistics (deleted rows included).
    pub records: u64,
    /// Files without `numRecords` in their statistics.
    pub files_without_stats: u64,
    /// Files under [`SMALL_FILE_BYTES`] (32 MiB) and their bytes.
    pub files_under_32_mib: u64,
    /// Bytes of the files under 32 MiB.
    pub bytes_under_32_mib: u64,
    /// Files under [`UNDER_TARGET_FILE_BYTES`] (128 MiB).
    pub files_under_128_mib: u64,
    /// Bytes of the files under 128 MiB.
    pub bytes_under_128_mib: u64,
    /// Files carrying a deletion vector.
    pub files_with_deletion_vectors: u64,
    /// Rows their deletion vectors hide (the cardinalities summed).
    pub rows_hidden_by_deletion_vectors: u64,
}

/// One bar of the file-size histogram.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeBucket {
    /// The range as shown (`8–32 MiB`).
    pub label: &'static str,
    /// Smallest size in the bucket, in bytes.
    pub min_bytes: u64,
    /// Size the bucket stops before; `None` for the last.
    pub max_bytes: Option<u64>,
    /// Files in the bucket.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// One partition (or the "other" bucket) of the partition chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionSlice {
    /// The partition as `col=value/col=value`, or `other (N partitions)`.
    pub partition: String,
    /// Partitions in the slice: 1, or those of "other".
    pub partitions: u64,
    /// Active files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Rows (statistics minus deletion vectors); `None` when a file has no statistics.
    pub rows: Option<u64>,
}

/// Partition skew of a partitioned table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionFigures {
    /// The partition columns, in order.
    pub columns: Vec<String>,
    /// Partitions with at least one active file.
    pub partitions: u64,
    /// Bytes of the largest partition.
    pub largest_bytes: u64,
    /// Median bytes per partition.
    pub median_bytes: u64,
    /// Largest over median; `None` when the median is 0 bytes.
    pub largest_to_median: Option<f64>,
    /// The largest partition's share of the bytes; `None` for an empty table.
    pub largest_share: Option<f64>,
    /// The [`TOP_PARTITIONS`] largest partitions by bytes, largest first.
    pub top: Vec<PartitionSlice>,
    /// The rest together; `None` when every partition is in `top`.
    pub other: Option<PartitionSlice>,
}

/// The log's tail after the last checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointFigures {
    /// Version of the checkpoint the version is read from; `None` without one.
    pub version: Option<u64>,
    /// Commits a reader replays as JSON: after the checkpoint, or all without one.
    pub commits_since: u64,
    /// `delta.checkpointInterval` as set on the table; `None` when unset.
    pub interval: Option<String>,
    /// The checkpoint's version's commit, when it is in the history read.
    pub written: Option<Event>,
}

/// A maintenance commit found in the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The commit's version.
    pub version: u64,
    /// `commitInfo.operation`.
    pub operation: String,
    /// Commit time in ms since the epoch (`inCommitTimestamp` where there is one).
    pub timestamp: Option<i64>,
    /// `now_ms` minus `timestamp`; `None` without a time.
    pub age_ms: Option<i64>,
}

/// Maintenance operations in the history read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaintenanceFigures {
    /// Commits of the history at or before the version that were looked at.
    pub commits_read: u64,
    /// The oldest version among them.
    pub oldest_version_read: Option<u64>,
    /// The newest `OPTIMIZE` (bin-packing or Z-ORDER).
    pub last_optimize: Option<Event>,
    /// The newest `VACUUM START`.
    pub last_vacuum_start: Option<Event>,
    /// The newest `VACUUM END`.
    pub last_vacuum_end: Option<Event>,
}

/// Removed files still named by the log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TombstoneFigures {
    /// The retention as written (`delta.deletedFileRetentionDuration`, or the default).
    pub retention: String,
    /// It in milliseconds; `None` when it cannot be read (`retention_error` says why).
    pub retention_ms: Option<i64>,
    /// Why the retention cannot be read.
    pub retention_error: Option<String>,
    /// Tombstones (removes whose file was not added back).
    pub tombstones: u64,
    /// Their bytes (those with a `size`).
    pub bytes: u64,
    /// Tombstones removed less than the retention ago: VACUUM keeps their files.
    /// `None` when the retention is unknown.
    pub within_retention: Option<u64>,
    /// Their bytes.
    pub within_retention_bytes: Option<u64>,
    /// Tombstones without a `size`.
    pub without_size: u64,
    /// Tombstones without a `deletionTimestamp` (counted as expired).
    pub without_timestamp: u64,
}

/// The health report of one table version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Health {
    /// The table's location, as given.
    pub location: String,
    /// The version described.
    pub version: u64,
    /// The time the ages and the retention window are measured from (ms since the epoch).
    pub now_ms: i64,
    /// Every finding, in a fixed order.
    pub findings: Vec<Finding>,
    /// Sums over the active files.
    pub files: FileFigures,
    /// Files by size: <1 MiB, 1–8, 8–32, 32–128, 128–512 MiB, 512 MiB–1 GiB, ≥1 GiB.
    pub size_histogram: Vec<SizeBucket>,
    /// Partition skew; `None` when the table is not partitioned.
    pub partitions: Option<PartitionFigures>,
    /// The log's tail after the checkpoint.
    pub checkpoint: CheckpointFigures,
    /// Maintenance in the history read.
    pub maintenance: MaintenanceFigures,
    /// Tombstones and the retention window.
    pub tombstones: TombstoneFigures,
    /// Values of the log that are impossible (negative sizes, sums past 64 bits).
    pub warnings: Vec<String>,
}

/// The histogram's buckets: (label, lower bound in bytes).
const BUCKETS: [(&str, i64); 7] = [
    ("<1 MiB", 0),
    ("1–8 MiB", MIB),
    ("8–32 MiB", 8 * MIB),
    ("32–128 MiB", 32 * MIB),
    ("128–512 MiB", 128 * MIB),
    ("512 MiB–1 GiB", 512 * MIB),
    ("≥1 GiB", 1024 * MIB),
];

/// A sum that saturates instead of wrapping (each addend is at most `i64::MAX`).
#[derive(Debug, Clone, Copy, Default)]
struct Sum(u128);

impl Sum {
    fn add(&mut self, v: u64) {
        self.0 = self.0.saturating_add(u128::from(v));
    }
    /// The sum, and whether it passed 64 bits.
    fn get(self, saturated: &mut bool) -> u64 {
        u64::try_from(self.0).unwrap_or_else(|_| {
            *saturated = true;
            u64::MAX
        })
    }
}

#[derive(Debug, Clone, Default)]
struct PartitionTally {
    name: String,
    files: u64,
    bytes: Sum,
    rows: Option<Sum>,
}

/// The active files and tombstones of a version added up one at a time (see the module
/// documentation); [`Health::build`] turns it into the report.
#[derive(Debug, Clone)]
pub struct HealthTally {
    now_ms: i64,
    retention: String,
    retention_ms: std::result::Result<i64, String>,
    files: u64,
    bytes: Sum,
    records: Sum,
    without_stats: u64,
    under_32: (u64, Sum),
    under_128: (u64, Sum),
    dv_files: u64,
    dv_rows: Sum,
    buckets: [(u64, Sum); 7],
    partitions: BTreeMap<String, PartitionTally>,
    tombstones: u64,
    tombstone_bytes: Sum,
    within: u64,
    within_bytes: Sum,
    without_size: u64,
    without_timestamp: u64,
    negative: BTreeMap<&'static str, u64>,
}

/// `v` as a count or size: negative values count as 0 and are remembered.
fn non_negative(v: i64, what: &'static str, negative: &mut BTreeMap<&'static str, u64>) -> u64 {
    u64::try_from(v).unwrap_or_else(|_| {
        *negative.entry(what).or_default() += 1;
        0
    })
}

impl HealthTally {
    /// Nothing counted yet, for a version whose metadata is `metadata` (its tombstone
    /// retention), measured at `now_ms`.
    pub fn new(metadata: &Metadata, now_ms: i64) -> HealthTally {
        let (retention, ms) = deleted_file_retention(metadata);
        HealthTally::with_retention(retention, ms.map_err(|e| e.to_string()), now_ms)
    }

    fn with_retention(
        retention: String,
        retention_ms: std::result::Result<i64, String>,
        now_ms: i64,
    ) -> HealthTally {
        HealthTally {
            now_ms,
            retention,
            retention_ms,
            files: 0,
            bytes: Sum::default(),
            records: Sum::default(),
            without_stats: 0,
            under_32: Default::default(),
            under_128: Default::default(),
            dv_files: 0,
            dv_rows: Sum::default(),
            buckets: Default::default(),
            partitions: BTreeMap::new(),
            tombstones: 0,
            tombstone_bytes: Sum::default(),
            within: 0,
            within_bytes: Sum::default(),
            without_size: 0,
            without_timestamp: 0,
            negative: BTreeMap::new(),
        }
    }

    /// Count active file `f`; `partition` is its typed partition values (`None` when the
    /// table is not partitioned).
    pub fn file(&mut self, f: &Add, partition: Option<&serde_json::Map<String, Value>>) {
        let size = non_negative(f.size, "file sizes", &mut self.negative);
        self.files = self.files.saturating_add(1);
        self.bytes.add(size);
        let records = f
            .num_records()
            .map(|n| non_negative(n, "row counts (numRecords)", &mut self.negative));
        match records {
            Some(n) => self.records.add(n),
            None => self.without_stats = self.without_stats.saturating_add(1),
        }
        let hidden = f.deletion_vector.as_ref().map(|d| {
            non_negative(
                d.cardinality,
                "deletion vector cardinalities",
                &mut self.negative,
            )
        });
        if let Some(h) = hidden {
            self.dv_files = self.dv_files.saturating_add(1);
            self.dv_rows.add(h);
        }
        for (limit, (n, b)) in [
            (SMALL_FILE_BYTES, &mut self.under_32),
            (UNDER_TARGET_FILE_BYTES, &mut self.under_128),
        ] {
            if f.size < limit {
                *n = n.saturating_add(1);
                b.add(size);
            }
        }
        let bucket = BUCKETS
            .iter()
            .rposition(|(_, lower)| size >= *lower as u64)
            .unwrap_or(0);
        if let Some((n, b)) = self.buckets.get_mut(bucket) {
            *n = n.saturating_add(1);
            b.add(size);
        }
        if let Some(values) = partition {
            let key = serde_json::to_string(values).unwrap_or_default();
            let p = self
                .partitions
                .entry(key)
                .or_insert_with(|| PartitionTally {
                    name: partition_name(values),
                    rows: Some(Sum::default()),
                    ..PartitionTally::default()
                });
            p.files = p.files.saturating_add(1);
            p.bytes.add(size);
            p.rows = match (p.rows, records) {
                (Some(mut sum), Some(n)) => {
                    sum.add(n.saturating_sub(hidden.unwrap_or(0)));
                    Some(sum)
                }
                _ => None,
            };
        }
    }

    /// Count tombstone `r` (a `remove` still in the log).
    pub fn tombstone(&mut self, r: &Remove) {
        self.tombstones = self.tombstones.saturating_add(1);
        let size = r
            .size
            .map(|s| non_negative(s, "tombstone sizes", &mut self.negative));
        match size {
            Some(s) => self.tombstone_bytes.add(s),
            None => self.without_size = self.without_size.saturating_add(1),
        }
        if r.deletion_timestamp.is_none() {
            self.without_timestamp = self.without_timestamp.saturating_add(1);
        }
        if let (Ok(retention), Some(at)) = (&self.retention_ms, r.deletion_timestamp) {
            // kept while deleted after now - retention (no wrap on hostile times)
            let since = i128::from(self.now_ms) - i128::from(*retention);
            if i128::from(at) > since {
                self.within = self.within.saturating_add(1);
                self.within_bytes.add(size.unwrap_or(0));
            }
        }
    }
}

/// `col=value/col=value` for a chart label (strings without quotes).
fn partition_name(values: &serde_json::Map<String, Value>) -> String {
    values
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// What a version is, for the report: from a [`VersionInfo`] or a snapshot.
#[derive(Debug, Clone, Copy)]
pub struct VersionFacts<'a> {
    /// The table's location, as given.
    pub location: &'a str,
    /// The version.
    pub version: u64,
    /// Its metadata (partition columns, properties).
    pub metadata: &'a Metadata,
    /// The checkpoint it is read from.
    pub checkpoint_version: Option<u64>,
}

impl<'a> VersionFacts<'a> {
    /// The facts of `v`, read from `location`.
    pub fn of(location: &'a str, v: &'a VersionInfo) -> VersionFacts<'a> {
        VersionFacts {
            location,
            version: v.version,
            metadata: &v.metadata,
            checkpoint_version: v.checkpoint_version,
        }
    }
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn percent(s: Option<f64>) -> String {
    s.map_or_else(|| "–".into(), |s| format!("{:.1}%", s * 100.0))
}

fn size(n: u64) -> String {
    bytes(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `ms` as a short duration (`3 d 4 h`, `12 min`, `5 s`); negative as `in the future`.
pub fn duration(ms: i64) -> String {
    if ms < 0 {
        return "in the future".into();
    }
    let s = ms / 1000;
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

fn event_text(e: &Option<Event>, n: u64) -> String {
    match e {
        None => format!("not in the last {n} commits"),
        Some(e) => match e.age_ms {
            Some(age) => format!(
                "version {} at {} ({} ago)",
                e.version,
                timestamp(e.timestamp),
                duration(age)
            ),
            None => format!("version {} (no time recorded)", e.version),
        },
    }
}

impl Health {
    /// Read the report of version `at` of `table`: the version without its files, the
    /// newest [`HISTORY_COMMITS`] commits of history, then the files and tombstones
    /// streamed ([`Health::read`]). What `deltalens health` and `GET /v1/health` run.
    pub async fn of_table(table: &Table, at: VersionSpec, now_ms: i64) -> Result<Health> {
        let v = table.version_info(at).await?;
        let history = table.history(Some(HISTORY_COMMITS)).await?;
        Health::read(table.location(), &v, &history, now_ms).await
    }

    /// Read the report of `v` (from `location`): its active files and tombstones are
    /// streamed; `history` is the newest commits the front end read (newest first, e.g.
    /// [`HISTORY_COMMITS`] of them), `now_ms` the caller's clock.
    pub async fn read(
        location: &str,
        v: &VersionInfo,
        history: &[HistoryEntry],
        now_ms: i64,
    ) -> Result<Health> {
        let mut tally = HealthTally::new(&v.metadata, now_ms);
        let partitioned = !v.partition_columns().is_empty();
        v.for_each_file(&mut |f| {
            let values = partitioned
                .then(|| v.partition_values_json(&f))
                .transpose()?;
            tally.file(&f, values.as_ref());
            Ok(true)
        })
        .await?;
        v.for_each_tombstone(&mut |r| {
            tally.tombstone(&r);
            Ok(true)
        })
        .await?;
        Ok(Health::build(
            VersionFacts::of(location, v),
            tally,
            history,
            now_ms,
        ))
    }

    /// The report from the counted files and tombstones, the version's facts and the
    /// history read (entries after the version are ignored).
    pub fn build(
        v: VersionFacts<'_>,
        tally: HealthTally,
        history: &[HistoryEntry],
        now_ms: i64,
    ) -> Health {
        let mut saturated = false;
        let t = tally;
        let files = FileFigures {
            files: t.files,
            bytes: t.bytes.get(&mut saturated),
            records: t.records.get(&mut saturated),
            files_without_stats: t.without_stats,
            files_under_32_mib: t.under_32.0,
            bytes_under_32_mib: t.under_32.1.get(&mut saturated),
            files_under_128_mib: t.under_128.0,
            bytes_under_128_mib: t.under_128.1.get(&mut saturated),
            files_with_deletion_vectors: t.dv_files,
            rows_hidden_by_deletion_vectors: t.dv_rows.get(&mut saturated),
        };
        let size_histogram = BUCKETS
            .iter()
            .enumerate()
            .map(|(i, (label, lower))| SizeBucket {
                label,
                min_bytes: *lower as u64,
                max_bytes: BUCKETS.get(i + 1).map(|(_, next)| *next as u64),
                files: t.buckets[i].0,
                bytes: t.buckets[i].1.get(&mut saturated),
            })
            .collect();
        let tombstones = tombstone_figures(&t, &mut saturated);
        let partitions = (!v.metadata.partition_columns.is_empty()).then(|| {
            partition_figures(
                &v.metadata.partition_columns,
                t.partitions.into_values().collect(),
                files.bytes,
                &mut saturated,
            )
        });
        let (checkpoint, maintenance) = history_figures(&v, history, now_ms);
        let mut warnings: Vec<String> = t
            .negative
            .iter()
            .map(|(what, n)| {
                format!("{n} negative {what} in the log, counted as 0: the log is corrupt")
            })
            .collect();
        if saturated {
            warnings.push(
                "a sum passes 64 bits and is shown as its largest value: the log's sizes are corrupt"
                    .into(),
            );
        }
        let mut h = Health {
            location: v.location.to_string(),
            version: v.version,
            now_ms,
            findings: Vec::new(),
            files,
            size_histogram,
            partitions,
            checkpoint,
            maintenance,
            tombstones,
            warnings,
        };
        h.findings = vec![
            small_files(&h.files),
            partition_skew(h.partitions.as_ref()),
            deletion_vectors(&h.files),
            files_without_stats(&h.files),
            checkpoint_finding(&h.checkpoint),
            maintenance_finding(&h.maintenance),
            tombstone_finding(&h.tombstones),
        ];
        h
    }

    /// The report as aligned text: each finding with its figures, meaning and remedy,
    /// then the size histogram and the largest partitions.
    pub fn text(&self) -> String {
        let mut out = format!(
            "table health of {} at version {} (as of {})\n\n",
            self.location,
            self.version,
            timestamp(Some(self.now_ms))
        );
        let rows: Vec<Vec<String>> = self
            .findings
            .iter()
            .map(|f| {
                vec![
                    f.severity.as_str().to_uppercase(),
                    f.title.to_string(),
                    f.summary.clone(),
                ]
            })
            .collect();
        out.push_str(&crate::text::table(&["", "finding", "summary"], &rows));
        for f in &self.findings {
            out.push_str(&format!(
                "\n[{}] {}: {}\n",
                f.severity.as_str(),
                f.title,
                f.summary
            ));
            let mut pairs: Vec<(&str, String)> = f
                .figures
                .iter()
                .map(|g| (g.label, g.value.clone()))
                .collect();
            pairs.push(("what it means", f.meaning.clone()));
            pairs.push(("usual remedy", f.remedy.clone()));
            for line in crate::text::pairs(&pairs).lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push_str("\nfile sizes:\n");
        let rows: Vec<Vec<String>> = self
            .size_histogram
            .iter()
            .map(|b| vec![b.label.to_string(), b.files.to_string(), size(b.bytes)])
            .collect();
        out.push_str(&crate::text::table(&["size", "files", "bytes"], &rows));
        if let Some(p) = &self.partitions {
            out.push_str("\nlargest partitions:\n");
            let rows: Vec<Vec<String>> = p
                .top
                .iter()
                .chain(&p.other)
                .map(|s| {
                    vec![
                        s.partition.clone(),
                        s.files.to_string(),
                        size(s.bytes),
                        s.rows.map_or_else(|| "unknown".into(), |r| r.to_string()),
                    ]
                })
                .collect();
            out.push_str(&crate::text::table(
                &["partition", "files", "bytes", "rows"],
                &rows,
            ));
        }
        for w in &self.warnings {
            out.push_str(&format!("\nwarning: {w}\n"));
        }
        out
    }
}

/// The checkpoint's and maintenance's figures of version `v` from the `history` read
/// (entries after the version ignored), ages counted to `now_ms`.
fn history_figures(
    v: &VersionFacts<'_>,
    history: &[HistoryEntry],
    now_ms: i64,
) -> (CheckpointFigures, MaintenanceFigures) {
    let commits_since = match v.checkpoint_version {
        Some(cp) => v.version.saturating_sub(cp),
        None => v.version.saturating_add(1),
    };
    let entries: Vec<&HistoryEntry> = history.iter().filter(|e| e.version <= v.version).collect();
    let event = |e: &HistoryEntry| {
        let at = e.in_commit_timestamp.or(e.timestamp);
        Event {
            version: e.version,
            operation: e.operation.clone().unwrap_or_default(),
            timestamp: at,
            age_ms: at.and_then(|t| now_ms.checked_sub(t)),
        }
    };
    let newest = |ops: &[&str]| {
        entries
            .iter()
            .filter(|e| {
                e.operation
                    .as_deref()
                    .is_some_and(|o| ops.iter().any(|op| o.eq_ignore_ascii_case(op)))
            })
            .max_by_key(|e| e.version)
            .map(|e| event(e))
    };
    let checkpoint = CheckpointFigures {
        version: v.checkpoint_version,
        commits_since,
        interval: v
            .metadata
            .property("delta.checkpointInterval")
            .map(str::to_string),
        written: v
            .checkpoint_version
            .and_then(|cp| entries.iter().find(|e| e.version == cp))
            .map(|e| event(e)),
    };
    let maintenance = MaintenanceFigures {
        commits_read: entries.len() as u64,
        oldest_version_read: entries.iter().map(|e| e.version).min(),
        last_optimize: newest(&["OPTIMIZE"]),
        last_vacuum_start: newest(&["VACUUM START"]),
        last_vacuum_end: newest(&["VACUUM END"]),
    };
    (checkpoint, maintenance)
}

/// The tombstones' figures of `t` (`saturated` set when a sum passes 64 bits).
fn tombstone_figures(t: &HealthTally, saturated: &mut bool) -> TombstoneFigures {
    let retention_ms = t.retention_ms.as_ref().ok().copied();
    TombstoneFigures {
        retention: t.retention.clone(),
        retention_ms,
        retention_error: t.retention_ms.as_ref().err().cloned(),
        tombstones: t.tombstones,
        bytes: t.tombstone_bytes.get(saturated),
        within_retention: retention_ms.map(|_| t.within),
        within_retention_bytes: retention_ms.map(|_| t.within_bytes.get(saturated)),
        without_size: t.without_size,
        without_timestamp: t.without_timestamp,
    }
}

fn partition_figures(
    columns: &[String],
    mut all: Vec<PartitionTally>,
    total_bytes: u64,
    saturated: &mut bool,
) -> PartitionFigures {
    let mut sized: Vec<(u64, PartitionTally)> =
        all.drain(..).map(|p| (p.bytes.get(saturated), p)).collect();
    // largest first; ties by name, so the report is the same every time
    sized.sort_by(|(a, pa), (b, pb)| b.cmp(a).then_with(|| pa.name.cmp(&pb.name)));
    let n = sized.len();
    let median = match n {
        0 => 0,
        _ if n % 2 == 1 => sized[n / 2].0,
        _ => ((u128::from(sized[n / 2 - 1].0) + u128::from(sized[n / 2].0)) / 2) as u64,
    };
    let largest = sized.first().map_or(0, |(b, _)| *b);
    let slice = |bytes: u64, p: PartitionTally, saturated: &mut bool| PartitionSlice {
        partition: p.name,
        partitions: 1,
        files: p.files,
        bytes,
        rows: p.rows.map(|r| r.get(saturated)),
    };
    let rest = sized.split_off(n.min(TOP_PARTITIONS));
    let top: Vec<PartitionSlice> = sized
        .into_iter()
        .map(|(b, p)| slice(b, p, saturated))
        .collect();
    let other = (!rest.is_empty()).then(|| {
        let (mut bytes, mut rows, mut files) = (Sum::default(), Some(Sum::default()), 0u64);
        let partitions = rest.len() as u64;
        for (b, p) in rest {
            bytes.add(b);
            files = files.saturating_add(p.files);
            rows = match (rows, p.rows) {
                (Some(mut r), Some(pr)) => {
                    r.add(pr.get(saturated));
                    Some(r)
                }
                _ => None,
            };
        }
        PartitionSlice {
            partition: format!("other ({partitions} partitions)"),
            partitions,
            files,
            bytes: bytes.get(saturated),
            rows: rows.map(|r| r.get(saturated)),
        }
    });
    PartitionFigures {
        columns: columns.to_vec(),
        partitions: n as u64,
        largest_bytes: largest,
        median_bytes: median,
        largest_to_median: (median > 0).then(|| largest as f64 / median as f64),
        largest_share: share(largest, total_bytes),
        top,
        other,
    }
}

fn small_files(f: &FileFigures) -> Finding {
    let by_count = share(f.files_under_32_mib, f.files);
    let severity = match by_count {
        Some(s) if s > SMALL_FILES_WARN_SHARE && f.files >= SMALL_FILES_MIN_COUNT => Severity::Warn,
        Some(s) if s > SMALL_FILES_WARN_SHARE => Severity::Info,
        _ => Severity::Ok,
    };
    Finding {
        id: "small_files",
        title: "small files",
        severity,
        summary: if f.files == 0 {
            "no active files".into()
        } else {
            format!(
                "{} of {} files ({}) are under 32 MiB",
                f.files_under_32_mib,
                f.files,
                percent(by_count)
            )
        },
        figures: vec![
            Figure {
                label: "files under 32 MiB",
                value: format!(
                    "{} ({} of files, {} of bytes)",
                    f.files_under_32_mib,
                    percent(by_count),
                    percent(share(f.bytes_under_32_mib, f.bytes))
                ),
            },
            Figure {
                label: "files under 128 MiB",
                value: format!(
                    "{} ({} of files, {} of bytes)",
                    f.files_under_128_mib,
                    percent(share(f.files_under_128_mib, f.files)),
                    percent(share(f.bytes_under_128_mib, f.bytes))
                ),
            },
            Figure {
                label: "average file size",
                value: f.bytes.checked_div(f.files).map_or_else(|| "–".into(), size),
            },
        ],
        meaning: format!(
            "Every file costs a listing entry, an open and a footer read, and its statistics a log entry: many small files make scans and log replay slow. Warns from {SMALL_FILES_MIN_COUNT} files when more than half are under 32 MiB."
        ),
        remedy: "Run OPTIMIZE (bin-packing into ~128 MiB–1 GiB files), or enable optimized writes / auto compaction so writers produce larger files; with Z-ORDER or liquid clustering the compaction also clusters rows for data skipping.".into(),
    }
}

fn partition_skew(p: Option<&PartitionFigures>) -> Finding {
    let meaning = format!(
        "A partition far larger than the others makes one task do most of a scan's work, and a filter on the partition columns prunes unevenly; many tiny partitions mean small files. Warns when the largest partition holds {SKEW_WARN_RATIO}x the median's bytes."
    );
    let remedy = "Partition by a column of lower skew (or coarser granularity), or drop partitioning for liquid clustering (CLUSTER BY), which balances file sizes itself; OPTIMIZE the small partitions.".to_string();
    let Some(p) = p else {
        return Finding {
            id: "partition_skew",
            title: "partition skew",
            severity: Severity::Ok,
            summary: "not partitioned".into(),
            figures: Vec::new(),
            meaning,
            remedy: "Nothing to do; large tables that are always filtered on one column may benefit from liquid clustering or Z-ORDER on it.".into(),
        };
    };
    let severity = match p.largest_to_median {
        Some(r) if p.partitions >= 2 && r >= SKEW_WARN_RATIO => Severity::Warn,
        Some(r) if p.partitions >= 2 && r >= SKEW_INFO_RATIO => Severity::Info,
        _ => Severity::Ok,
    };
    let ratio = p
        .largest_to_median
        .map_or_else(|| "–".into(), |r| format!("{r:.1}x"));
    Finding {
        id: "partition_skew",
        title: "partition skew",
        severity,
        summary: format!(
            "{} partitions; the largest holds {} of the bytes, {ratio} the median",
            p.partitions,
            percent(p.largest_share)
        ),
        figures: vec![
            Figure {
                label: "partition columns",
                value: p.columns.join(", "),
            },
            Figure {
                label: "partitions",
                value: p.partitions.to_string(),
            },
            Figure {
                label: "largest partition",
                value: format!(
                    "{} ({})",
                    p.top.first().map_or("", |s| s.partition.as_str()),
                    size(p.largest_bytes)
                ),
            },
            Figure {
                label: "median partition",
                value: size(p.median_bytes),
            },
            Figure {
                label: "largest / median",
                value: ratio,
            },
        ],
        meaning,
        remedy,
    }
}

fn deletion_vectors(f: &FileFigures) -> Finding {
    let hidden = share(f.rows_hidden_by_deletion_vectors, f.records);
    let severity = match hidden {
        Some(s) if s > DV_WARN_SHARE => Severity::Warn,
        _ if f.files_with_deletion_vectors > 0 => Severity::Info,
        _ => Severity::Ok,
    };
    Finding {
        id: "deletion_vectors",
        title: "deletion vectors",
        severity,
        summary: if f.files_with_deletion_vectors == 0 {
            "no file carries a deletion vector".into()
        } else {
            format!(
                "{} rows ({} of the rows) hidden by deletion vectors in {} files",
                f.rows_hidden_by_deletion_vectors,
                percent(hidden),
                f.files_with_deletion_vectors
            )
        },
        figures: vec![
            Figure {
                label: "files with deletion vectors",
                value: format!(
                    "{} of {} ({})",
                    f.files_with_deletion_vectors,
                    f.files,
                    percent(share(f.files_with_deletion_vectors, f.files))
                ),
            },
            Figure {
                label: "rows hidden",
                value: format!(
                    "{} of {} ({})",
                    f.rows_hidden_by_deletion_vectors,
                    f.records,
                    percent(hidden)
                ),
            },
        ],
        meaning: format!(
            "DELETE, UPDATE and MERGE mark rows deleted in deletion vectors instead of rewriting files: every read still decodes the hidden rows and then drops them, and the files keep their bytes. Warns when more than {:.0}% of the rows are hidden.",
            DV_WARN_SHARE * 100.0
        ),
        remedy: "Run REORG TABLE … APPLY (PURGE) (or OPTIMIZE, which rewrites the files it compacts) to rewrite the files without their deleted rows; VACUUM then removes the old files.".into(),
    }
}

fn files_without_stats(f: &FileFigures) -> Finding {
    let s = share(f.files_without_stats, f.files);
    let severity = match s {
        Some(s) if s > NO_STATS_WARN_SHARE => Severity::Warn,
        _ if f.files_without_stats > 0 => Severity::Info,
        _ => Severity::Ok,
    };
    Finding {
        id: "files_without_stats",
        title: "files without statistics",
        severity,
        summary: format!(
            "{} of {} files ({}) have no row count in their statistics",
            f.files_without_stats,
            f.files,
            percent(s)
        ),
        figures: vec![Figure {
            label: "files without numRecords",
            value: f.files_without_stats.to_string(),
        }],
        meaning: "Data skipping prunes files by their statistics (row count, min/max, null counts); a file without them is read by every query, and row counts and COUNT(*) need to open it.".into(),
        remedy: "Collect statistics: make sure writers write them (delta.dataSkippingNumIndexedCols / delta.dataSkippingStatsColumns cover the filtered columns), recompute them for old files (ANALYZE TABLE … COMPUTE DELTA STATISTICS), or rewrite the files with OPTIMIZE.".into(),
    }
}

fn checkpoint_finding(c: &CheckpointFigures) -> Finding {
    let severity = if c.commits_since >= LONG_TAIL_COMMITS {
        Severity::Warn
    } else {
        Severity::Ok
    };
    let summary = match c.version {
        Some(v) => format!(
            "{} commit{} since the checkpoint at version {v}",
            c.commits_since,
            if c.commits_since == 1 { "" } else { "s" }
        ),
        None => format!(
            "no checkpoint: opening the table replays {} commits",
            c.commits_since
        ),
    };
    let mut figures = vec![
        Figure {
            label: "last checkpoint",
            value: c.version.map_or_else(|| "none".into(), |v| v.to_string()),
        },
        Figure {
            label: "commits since",
            value: c.commits_since.to_string(),
        },
        Figure {
            label: "delta.checkpointInterval",
            value: c.interval.clone().unwrap_or_else(|| "not set".into()),
        },
    ];
    if c.version.is_some() {
        figures.push(Figure {
            label: "checkpoint written",
            value: match &c.written {
                Some(_) => event_text(&c.written, 0),
                None => "its commit is not in the history read".into(),
            },
        });
    }
    Finding {
        id: "checkpoint",
        title: "checkpoint",
        severity,
        summary,
        figures,
        meaning: format!(
            "A reader opens the table from the newest checkpoint and replays every JSON commit after it; {LONG_TAIL_COMMITS} or more commits to replay make every open slow."
        ),
        remedy: "Write a checkpoint (most writers do every delta.checkpointInterval commits: check it is set, e.g. 10 or 100, and that the writer checkpoints at all; delta-rs: create_checkpoint()).".into(),
    }
}

fn maintenance_finding(m: &MaintenanceFigures) -> Finding {
    let n = m.commits_read;
    let severity = if m.last_optimize.is_none() || m.last_vacuum_end.is_none() {
        Severity::Info
    } else {
        Severity::Ok
    };
    Finding {
        id: "maintenance",
        title: "maintenance in history",
        severity,
        summary: format!(
            "OPTIMIZE: {}; VACUUM: {}",
            event_text(&m.last_optimize, n),
            event_text(
                if m.last_vacuum_end.is_some() {
                    &m.last_vacuum_end
                } else {
                    &m.last_vacuum_start
                },
                n
            )
        ),
        figures: vec![
            Figure {
                label: "commits read",
                value: match m.oldest_version_read {
                    Some(v) => format!("{n} (back to version {v})"),
                    None => "0".into(),
                },
            },
            Figure {
                label: "last OPTIMIZE",
                value: event_text(&m.last_optimize, n),
            },
            Figure {
                label: "last VACUUM START",
                value: event_text(&m.last_vacuum_start, n),
            },
            Figure {
                label: "last VACUUM END",
                value: event_text(&m.last_vacuum_end, n),
            },
        ],
        meaning: "Tables that take frequent small writes, deletes or updates need compaction (OPTIMIZE) and their removed files deleted (VACUUM); a table with neither in its recent history accumulates small files and storage.".into(),
        remedy: "Schedule OPTIMIZE (with Z-ORDER BY the filtered columns, or liquid clustering) and VACUUM (after the retention, delta.deletedFileRetentionDuration) regularly, e.g. daily or weekly.".into(),
    }
}

fn tombstone_finding(t: &TombstoneFigures) -> Finding {
    let severity = match (&t.retention_error, t.tombstones) {
        (Some(_), _) => Severity::Warn,
        (None, 0) => Severity::Ok,
        _ => Severity::Info,
    };
    let retention = match (&t.retention_error, t.retention_ms) {
        (Some(e), _) => format!("{:?} (unknown: {e})", t.retention),
        (None, Some(ms)) => format!("{} ({})", t.retention, duration(ms)),
        (None, None) => t.retention.clone(),
    };
    let within = match (t.within_retention, t.within_retention_bytes) {
        (Some(n), Some(b)) => format!("{n} ({})", size(b)),
        _ => "unknown (the retention cannot be read)".into(),
    };
    Finding {
        id: "tombstones",
        title: "tombstones",
        severity,
        summary: format!(
            "{} removed files still in the log ({}); {} within the retention window",
            t.tombstones,
            size(t.bytes),
            t.within_retention
                .map_or_else(|| "unknown".into(), |n| n.to_string())
        ),
        figures: vec![
            Figure {
                label: "retention",
                value: retention,
            },
            Figure {
                label: "tombstones",
                value: format!("{} ({})", t.tombstones, size(t.bytes)),
            },
            Figure {
                label: "within retention",
                value: within,
            },
            Figure {
                label: "without size",
                value: t.without_size.to_string(),
            },
        ],
        meaning: "Removed files stay in storage until VACUUM deletes them, and VACUUM keeps those removed less than delta.deletedFileRetentionDuration ago (so readers of recent versions and time travel keep working): those within the window are storage VACUUM cannot free yet; older ones it can, unless it already did.".into(),
        remedy: "Run VACUUM regularly to delete expired files; shorten delta.deletedFileRetentionDuration only if no reader or time travel needs older versions (never below the longest running query).".into(),
    }
}

#[cfg(test)]
mod tests;

//! Scan planning for many workers: a version's files that can hold matching rows (the
//! filter against partition values and file statistics), grouped into [`Split`]s balanced
//! by bytes. Each split carries what a reader needs besides the data files — the version,
//! protocol and metadata (schema, partition columns, column mapping) and its files with
//! their partition values, statistics and deletion vectors — so any build executes it on
//! its own, without reading the log again. The shape of Iceberg's REST scan planning
//! (plan → tasks) and of delta-kernel-rs' scan files.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::actions::{Add, Metadata, Protocol};
use crate::error::{Error, Result};
use crate::protocol::check_readable;
use crate::scan::{ScanMetrics, ScanOptions};
use crate::schema::TableSchema;
use crate::snapshot::Snapshot;
use crate::table::Table;
use crate::version_info::VersionInfo;

/// Default bytes of data files per split (Spark's `maxPartitionBytes`).
pub const DEFAULT_TARGET_BYTES: u64 = 128 * 1024 * 1024;
/// Default most splits in a plan.
pub const DEFAULT_MAX_SPLITS: usize = 10_000;

/// How to cut a scan into splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOptions {
    /// Bytes of data files a split aims at: the plan has `ceil(total / target)` splits
    /// (at most [`Self::max_splits`], at most one per file).
    pub target_bytes: u64,
    /// The most splits a plan may have; a larger table gets larger splits.
    pub max_splits: usize,
    /// Exactly this many splits (at most one per file, at most `max_splits`) instead of a
    /// byte target: a fan-out to a given number of workers.
    pub splits: Option<usize>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            target_bytes: DEFAULT_TARGET_BYTES,
            max_splits: DEFAULT_MAX_SPLITS,
            splits: None,
        }
    }
}

/// One unit of a planned scan: files a worker reads on its own (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Split {
    /// Position of the split in its plan (0-based).
    pub id: usize,
    /// The table version planned.
    pub version: u64,
    /// The protocol in force at that version.
    pub protocol: Protocol,
    /// The metadata in force at that version (schema, partition columns, properties).
    pub metadata: Metadata,
    /// The data files, sorted by path.
    pub files: Vec<Add>,
    /// Bytes of the files (negative sizes in a log count as 0).
    pub bytes: u64,
    /// Rows the files hold by their statistics, less deletion-vector cardinalities;
    /// `None` when a file has no `numRecords`.
    pub estimated_rows: Option<u64>,
}

/// A planned scan: its splits and totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScanPlan {
    /// The table version planned.
    pub version: u64,
    /// Files kept after pruning, in all splits.
    pub files: usize,
    /// Bytes of those files.
    pub bytes: u64,
    /// The bytes each split aimed at.
    pub target_bytes: u64,
    /// The splits, largest first.
    pub splits: Vec<Split>,
}

fn file_bytes(f: &Add) -> u64 {
    u64::try_from(f.size).unwrap_or(0)
}

fn live_rows(f: &Add) -> Option<u64> {
    let n = f.num_records()?;
    let deleted = f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
    Some(u64::try_from(n.saturating_sub(deleted)).unwrap_or(0))
}

/// `files` in `n` groups balanced by bytes (largest file first into the lightest group,
/// ties by path: the same plan every time), each sorted by path; empty groups dropped.
fn balance(mut files: Vec<Add>, n: usize) -> Vec<Vec<Add>> {
    files.sort_by(|a, b| {
        file_bytes(b)
            .cmp(&file_bytes(a))
            .then_with(|| a.path.cmp(&b.path))
    });
    let n = n.clamp(1, files.len().max(1));
    let mut groups: Vec<Vec<Add>> = (0..n).map(|_| Vec::new()).collect();
    let mut lightest: BinaryHeap<Reverse<(u64, usize)>> = (0..n).map(|i| Reverse((0, i))).collect();
    for f in files {
        let Some(Reverse((bytes, i))) = lightest.pop() else {
            break;
        };
        let bytes = bytes.saturating_add(file_bytes(&f));
        if let Some(g) = groups.get_mut(i) {
            g.push(f);
        }
        lightest.push(Reverse((bytes, i)));
    }
    for g in &mut groups {
        g.sort_by(|a, b| a.path.cmp(&b.path));
    }
    groups.retain(|g| !g.is_empty());
    groups
}

impl PlanOptions {
    fn check(&self) -> Result<()> {
        if self.target_bytes == 0 {
            return Err(Error::InvalidArgument {
                message: "the split target must be at least 1 byte (target bytes)".into(),
            });
        }
        if self.max_splits == 0 {
            return Err(Error::InvalidArgument {
                message: "a plan needs room for at least 1 split (max splits)".into(),
            });
        }
        Ok(())
    }
}

impl VersionInfo {
    /// Plan a scan of this version for many workers: the files `scan`'s filter can match
    /// (partition values and file statistics; the scan's limit is not applied: it is the
    /// executor's), in splits balanced by bytes. Unknown columns and a filter that does
    /// not fit the schema are refused here, as [`Snapshot::scan`] refuses them.
    pub async fn plan(&self, scan: &ScanOptions, options: &PlanOptions) -> Result<ScanPlan> {
        options.check()?;
        let unlimited = ScanOptions {
            limit: None,
            ..scan.clone()
        };
        let snapshot = self.snapshot_for_scan(&unlimited).await?;
        snapshot.scan(unlimited)?;
        let files = snapshot.files;
        let bytes = files.iter().map(file_bytes).fold(0u64, u64::saturating_add);
        let n = match options.splits {
            Some(n) => n,
            None => usize::try_from(bytes.div_ceil(options.target_bytes)).unwrap_or(usize::MAX),
        }
        .clamp(1, options.max_splits);
        let count = files.len();
        let mut splits: Vec<Split> = balance(files, n)
            .into_iter()
            .map(|files| Split {
                id: 0,
                version: self.version,
                protocol: self.protocol.clone(),
                metadata: self.metadata.clone(),
                bytes: files.iter().map(file_bytes).fold(0, u64::saturating_add),
                estimated_rows: files
                    .iter()
                    .map(live_rows)
                    .try_fold(0u64, |acc, r| r.map(|r| acc.saturating_add(r))),
                files,
            })
            .collect();
        splits.sort_by_key(|s| Reverse(s.bytes));
        for (i, s) in splits.iter_mut().enumerate() {
            s.id = i;
        }
        Ok(ScanPlan {
            version: self.version,
            files: count,
            bytes,
            target_bytes: options.target_bytes,
            splits,
        })
    }
}

impl Split {
    /// The split as a snapshot of `table` holding only its files (checked: a protocol
    /// this reader cannot read and a schema it cannot parse are refused, as when the log
    /// is read).
    pub fn snapshot(&self, table: Table) -> Result<Snapshot> {
        check_readable(&self.protocol)?;
        let schema = TableSchema::parse(&self.metadata.schema_string)?;
        let mut files = self.files.clone();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Snapshot {
            table,
            version: self.version,
            protocol: self.protocol.clone(),
            metadata: self.metadata.clone(),
            schema,
            files,
            txns: Default::default(),
            domain_metadata: Default::default(),
            commit_info: None,
            checkpoint_version: None,
        })
    }

    /// Read the split's rows from `table` (its storage and location) with `options` —
    /// columns, filter, batch size, decoded-bytes budget; a limit applies to this split
    /// alone — handing each batch to `sink` as [`crate::scan::Scan::execute`] does. Nothing
    /// is read from the log.
    pub async fn execute(
        &self,
        table: Table,
        options: ScanOptions,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<ScanMetrics> {
        let snapshot = self.snapshot(table)?;
        let scan = snapshot.scan(options)?;
        scan.execute(sink).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(path: &str, size: i64) -> Add {
        deltalens_json::from_value(serde_json::json!({
            "path": path, "partitionValues": {}, "size": size, "modificationTime": 0,
            "dataChange": true, "stats": format!("{{\"numRecords\":{}}}", size / 10)
        }))
        .unwrap()
    }

    #[test]
    fn groups_are_balanced_by_bytes_and_keep_every_file_once() {
        let files: Vec<Add> = (0..50)
            .map(|i| add(&format!("f{i:02}"), 1 + (i * 37) % 101))
            .collect();
        let total: u64 = files.iter().map(file_bytes).sum();
        let largest = files.iter().map(file_bytes).max().unwrap();
        for n in [1, 2, 3, 7, 50, 80] {
            let groups = balance(files.clone(), n);
            assert_eq!(groups.len(), n.min(50));
            let mut paths: Vec<&str> = groups.iter().flatten().map(|f| f.path.as_str()).collect();
            paths.sort();
            paths.dedup();
            assert_eq!(paths.len(), 50, "every file exactly once with {n} groups");
            // greedy largest-first: no group exceeds the mean by more than the largest file
            let mean = total.div_ceil(groups.len() as u64);
            for g in &groups {
                let b: u64 = g.iter().map(file_bytes).sum();
                assert!(b <= mean + largest, "{b} bytes in a group, mean {mean}");
                assert!(
                    g.windows(2).all(|w| w[0].path < w[1].path),
                    "sorted by path"
                );
            }
        }
        assert!(balance(Vec::new(), 4).is_empty());
    }

    #[test]
    fn hostile_sizes_count_as_zero_and_bad_options_are_named() {
        let groups = balance(vec![add("a", -5), add("b", i64::MAX), add("c", 3)], 2);
        assert_eq!(groups.iter().map(Vec::len).sum::<usize>(), 3);
        let zero = PlanOptions {
            target_bytes: 0,
            ..Default::default()
        };
        assert!(
            zero.check()
                .unwrap_err()
                .to_string()
                .contains("target bytes")
        );
        let none = PlanOptions {
            max_splits: 0,
            ..Default::default()
        };
        assert!(none.check().unwrap_err().to_string().contains("max splits"));
    }
}

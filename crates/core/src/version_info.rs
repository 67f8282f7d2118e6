//! A table version without its files: protocol, metadata, schema, properties and the
//! version's commit — what `schema`, `$properties`, history and time travel need — read
//! from the commits after the checkpoint and the checkpoint's `protocol`/`metaData`
//! columns only (a few kilobytes of a 243 MB checkpoint). The files are streamed
//! ([`VersionInfo::for_each_file`], [`VersionInfo::file_totals`]) or loaded
//! ([`VersionInfo::snapshot`]) only when a question needs them.

use std::collections::BTreeMap;

use crate::actions::{Add, Metadata, Protocol, Remove, StringMap};
use crate::active_files::for_each_active_file;
use crate::error::Result;
use crate::file_totals::FileTotals;
use crate::log::LogSegment;
use crate::metadata::load_head;
use crate::partition_values::file_partition_values;
use crate::scan::ScanOptions;
use crate::schema::TableSchema;
use crate::skipping::{FileStats, PartitionStats, could_match};
use crate::snapshot::Snapshot;
use crate::table::{Table, VersionSpec};
use crate::tombstones::for_each_tombstone;

/// Files counted between two progress reports of [`VersionInfo::file_totals`].
pub const PROGRESS_EVERY_FILES: u64 = 50_000;

/// A table version without its files (see the module documentation).
#[derive(Debug, Clone)]
pub struct VersionInfo {
    table: Table,
    segment: LogSegment,
    /// The version.
    pub version: u64,
    /// The protocol in force (checked readable).
    pub protocol: Protocol,
    /// The table metadata in force.
    pub metadata: Metadata,
    /// The schema of `metadata`, parsed.
    pub schema: TableSchema,
    /// The `commitInfo` of this version's commit, when its commit file still exists.
    pub commit_info: Option<serde_json::Map<String, serde_json::Value>>,
    /// The version of the checkpoint the version is read from, if any.
    pub checkpoint_version: Option<u64>,
}

impl Table {
    /// The version `spec` names, without its files.
    pub async fn version_info(&self, spec: VersionSpec) -> Result<VersionInfo> {
        let mut segment = self.segment(spec).await?;
        let head = load_head(self.storage().as_ref(), &segment).await?;
        std::sync::Arc::make_mut(&mut segment.prefetched).extend(head.commits_read);
        Ok(VersionInfo {
            table: self.clone(),
            version: segment.version,
            schema: TableSchema::parse(&head.metadata.schema_string)?,
            protocol: head.protocol,
            metadata: head.metadata,
            commit_info: head.commit_info,
            checkpoint_version: segment.checkpoint.as_ref().map(|c| c.version),
            segment,
        })
    }
}

impl VersionInfo {
    /// The table this version was read from.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The partition columns, in order.
    pub fn partition_columns(&self) -> &[String] {
        &self.metadata.partition_columns
    }

    /// Table properties with a value (Trino's `$properties`).
    pub fn properties(&self) -> BTreeMap<String, String> {
        self.metadata.properties()
    }

    /// The partition values of `file`, typed and keyed by logical column name.
    pub fn partition_values_json(
        &self,
        file: &Add,
    ) -> Result<serde_json::Map<String, serde_json::Value>> {
        file_partition_values(&self.schema, &self.metadata, file)
    }

    /// Hand every active file to `on_file` (checkpoint order, then the newer commits'),
    /// until it returns false; memory follows a batch of the checkpoint, not the file
    /// count.
    pub async fn for_each_file(&self, on_file: &mut dyn FnMut(Add) -> Result<bool>) -> Result<()> {
        for_each_active_file(self.table.storage().as_ref(), &self.segment, None, on_file).await
    }

    /// Hand every tombstone (`remove` still in the log: the newer commits', then the
    /// checkpoint's) to `on_remove`, until it returns false; memory follows a batch of the
    /// checkpoint, not the tombstone count ([`crate::tombstones`]).
    pub async fn for_each_tombstone(
        &self,
        on_remove: &mut dyn FnMut(Remove) -> Result<bool>,
    ) -> Result<()> {
        for_each_tombstone(self.table.storage().as_ref(), &self.segment, on_remove).await
    }

    /// Totals over the active files, streamed; `on_progress` sees the totals so far every
    /// [`PROGRESS_EVERY_FILES`] files (and returns false to stop: the totals are then
    /// partial).
    pub async fn file_totals(
        &self,
        on_progress: &mut dyn FnMut(&FileTotals) -> bool,
    ) -> Result<FileTotals> {
        let mut totals = FileTotals::new();
        self.for_each_file(&mut |f| {
            totals.add(&f);
            Ok(!totals.files.is_multiple_of(PROGRESS_EVERY_FILES) || on_progress(&totals))
        })
        .await?;
        Ok(totals)
    }

    /// The active files from `offset`, at most `limit` of them (all with `None`), in the
    /// order of [`VersionInfo::for_each_file`]; reading stops once the page is full.
    pub async fn files_page(&self, offset: usize, limit: Option<usize>) -> Result<Vec<Add>> {
        let mut page = Vec::new();
        let mut skipped = 0;
        if limit == Some(0) {
            return Ok(page);
        }
        self.for_each_file(&mut |f| {
            if skipped < offset {
                skipped += 1;
                return Ok(true);
            }
            page.push(f);
            Ok(limit.is_none_or(|l| page.len() < l))
        })
        .await?;
        Ok(page)
    }

    /// The snapshot of this version: every active file, in memory.
    pub async fn snapshot(&self) -> Result<Snapshot> {
        Snapshot::load(&self.table, &self.segment).await
    }

    /// The snapshot a scan with `options` needs, its files chosen while they stream:
    /// those the filter rules out by partition values or statistics are never kept,
    /// and without a filter a `limit` ends the stream once the kept files' row counts
    /// (statistics minus deletion vectors) cover it. A preview of a million-file table
    /// keeps a handful of files; a partition filter keeps that partition's. Which rows a
    /// `limit` returns may differ from a scan of [`VersionInfo::snapshot`] (both are the
    /// first rows of some files); the set under a filter does not.
    pub async fn snapshot_for_scan(&self, options: &ScanOptions) -> Result<Snapshot> {
        let prune = options.filter.as_ref().filter(|_| options.prune);
        let fields = self.schema.fields();
        let partition_columns = self.partition_columns();
        let mut files = Vec::new();
        let mut rows: i64 = 0;
        // a filter on partition columns is first tried on the checkpoint's partition
        // values alone: the adds it rules out are never decoded (nor their pages fetched)
        let on_partitions = prune.filter(|p| {
            p.columns().iter().any(|c| {
                c.len() == 1
                    && partition_columns
                        .iter()
                        .any(|pc| pc.eq_ignore_ascii_case(&c[0]))
            })
        });
        let keep_partition = |values: &StringMap| {
            on_partitions.is_none_or(|p| {
                let stats = PartitionStats {
                    fields,
                    partition_columns,
                    values,
                };
                could_match(p, &stats, false)
            })
        };
        let keep: Option<&dyn Fn(&StringMap) -> bool> =
            on_partitions.map(|_| &keep_partition as &dyn Fn(&StringMap) -> bool);
        let storage = self.table.storage();
        for_each_active_file(storage.as_ref(), &self.segment, keep, &mut |f| {
            if let Some(p) = prune
                && !could_match(p, &FileStats::new(fields, partition_columns, &f), false)
            {
                return Ok(true);
            }
            if options.filter.is_none()
                && let Some(n) = f.num_records()
            {
                let deleted = f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
                rows = rows.saturating_add(n.saturating_sub(deleted).max(0));
            }
            files.push(f);
            let covered = options.filter.is_none()
                && options
                    .limit
                    .is_some_and(|l| u64::try_from(rows).is_ok_and(|r| r >= l as u64));
            Ok(!covered)
        })
        .await?;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        // a part of the version: no transactions or domain metadata, which scans ignore
        Ok(Snapshot {
            table: self.table.clone(),
            version: self.version,
            protocol: self.protocol.clone(),
            metadata: self.metadata.clone(),
            schema: self.schema.clone(),
            files,
            txns: BTreeMap::new(),
            domain_metadata: BTreeMap::new(),
            commit_info: self.commit_info.clone(),
            checkpoint_version: self.checkpoint_version,
        })
    }
}

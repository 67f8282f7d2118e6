//! A table version: its protocol, metadata, schema and active files.

use std::collections::BTreeMap;

use crate::actions::{Action, Add, DomainMetadata, Metadata, Protocol, Txn, parse_actions};
use crate::checkpoint::{CheckpointRead, read_checkpoint};
use crate::error::{Error, Result};
use crate::log::prefetch::WithPrefetched;
use crate::log::{Discover, find_log};
use crate::log::{LogSegment, read_files};
use crate::metadata::require;
use crate::partition_values::file_partition_values;
use crate::protocol::check_readable;
use crate::replay::Replay;
use crate::schema::TableSchema;
use crate::table::{Table, VersionSpec};

/// The state of a table at one version, with the table it was read from: a snapshot
/// scans its own files ([`Snapshot::scan`], in `scan`).
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The table read (crate-visible so that a version read without its files can be
    /// completed with some of them: `VersionInfo::snapshot_for_scan`).
    pub(crate) table: Table,
    /// The table version this snapshot is at.
    pub version: u64,
    /// The table's `protocol` at this version.
    pub protocol: Protocol,
    /// The table's `metaData` at this version.
    pub metadata: Metadata,
    /// The table schema parsed from `metadata.schema_string`.
    pub schema: TableSchema,
    /// Active data files, sorted by path.
    pub files: Vec<Add>,
    /// The newest transaction identifier of each application, by `appId`.
    pub txns: BTreeMap<String, Txn>,
    /// Live metadata domains (tombstones dropped), by domain name.
    pub domain_metadata: BTreeMap<String, DomainMetadata>,
    /// The `commitInfo` of this version's commit, when its commit file still exists.
    pub commit_info: Option<serde_json::Map<String, serde_json::Value>>,
    /// The version of the checkpoint the snapshot was built from, if any.
    pub checkpoint_version: Option<u64>,
}

fn commit_info_of(actions: &[Action]) -> Option<serde_json::Map<String, serde_json::Value>> {
    actions.iter().find_map(|a| match a {
        Action::CommitInfo(c) => Some(c.clone()),
        _ => None,
    })
}

impl Snapshot {
    /// Replay `segment` of `table`'s log: its JSON commits (fetched concurrently) and
    /// checkpoint (read concurrently with them, with column projection).
    pub async fn load(table: &Table, segment: &LogSegment) -> Result<Snapshot> {
        let storage = &WithPrefetched {
            inner: table.storage().as_ref(),
            pre: &segment.prefetched,
        };
        let commits = read_files(storage, segment.commits.iter().map(|f| f.path()));
        let checkpoint = async {
            match &segment.checkpoint {
                Some(cp) => read_checkpoint(storage, &cp.parts, CheckpointRead::Snapshot)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        };
        let (commits, checkpoint) = futures::join!(commits, checkpoint);
        let (commits, checkpoint) = (commits?, checkpoint?);

        let mut replay = Replay::new();
        let mut commit_info = None;
        for (f, data) in segment.commits.iter().zip(commits).rev() {
            let actions = parse_actions(f.path(), &data)?;
            if f.version == segment.version {
                commit_info = commit_info_of(&actions);
            }
            replay.commit(actions);
        }
        if let Some(actions) = checkpoint {
            replay.checkpoint(actions);
        }
        let r = replay.finish();
        let protocol = require(r.protocol, segment, "protocol")?;
        check_readable(&protocol)?;
        let metadata = require(r.metadata, segment, "metaData")?;
        let schema = TableSchema::parse(&metadata.schema_string)?;
        let mut files = r.files;
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Snapshot {
            table: table.clone(),
            version: segment.version,
            protocol,
            metadata,
            schema,
            files,
            txns: r.txns,
            domain_metadata: r.domain_metadata,
            commit_info,
            checkpoint_version: segment.checkpoint.as_ref().map(|c| c.version),
        })
    }

    /// The table this snapshot was read from.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The same version read through `table` (another storage for the same location:
    /// a per-request budget, a store holding the files in memory).
    pub fn with_table(mut self, table: Table) -> Snapshot {
        self.table = table;
        self
    }

    /// Number of active files.
    pub fn num_files(&self) -> usize {
        self.files.len()
    }

    /// Total size of the active files in bytes (checked: a log whose sizes overflow a
    /// 64-bit sum is [`Error::Overflow`], not a wrapped negative total).
    pub fn size_bytes(&self) -> Result<i64> {
        self.files
            .iter()
            .try_fold(0i64, |acc, f| acc.checked_add(f.size))
            .ok_or(Error::Overflow { what: "size" })
    }

    /// Rows in the table from file statistics (minus deletion-vector cardinalities);
    /// `Ok(None)` when any file lacks `numRecords`; checked like [`Self::size_bytes`].
    pub fn num_rows(&self) -> Result<Option<i64>> {
        let mut total = 0i64;
        for f in &self.files {
            let Some(n) = f.num_records() else {
                return Ok(None);
            };
            let dv = f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
            total = n
                .checked_sub(dv)
                .and_then(|live| total.checked_add(live))
                .ok_or(Error::Overflow { what: "row count" })?;
        }
        Ok(Some(total))
    }

    /// Names of the partition columns (logical names), in order.
    pub fn partition_columns(&self) -> &[String] {
        &self.metadata.partition_columns
    }

    /// The partition values of `file`, typed by the partition columns' Delta types and
    /// keyed by logical column name (column-mapped tables store physical names).
    pub fn partition_values_json(
        &self,
        file: &Add,
    ) -> Result<serde_json::Map<String, serde_json::Value>> {
        file_partition_values(&self.schema, &self.metadata, file)
    }

    /// Table properties with a value (Trino's `$properties`).
    pub fn properties(&self) -> BTreeMap<String, String> {
        self.metadata.properties()
    }
}

impl Table {
    /// The snapshot at `spec`: its protocol, metadata and every active file, in memory.
    /// [`Table::version_info`] reads a version without its files.
    pub async fn snapshot(&self, spec: VersionSpec) -> Result<Snapshot> {
        let segment = self.segment(spec).await?;
        Snapshot::load(self, &segment).await
    }

    /// The files that reconstruct the version `spec` names.
    pub(crate) async fn segment(&self, spec: VersionSpec) -> Result<LogSegment> {
        let storage = self.storage().as_ref();
        let (listing, version) = match spec {
            VersionSpec::Latest => (
                find_log(storage, self.location(), Discover::Latest).await?,
                None,
            ),
            VersionSpec::Version(v) => (self.full_listing().await?, Some(v)),
            VersionSpec::Timestamp(ts) => {
                let listing = self.full_listing().await?;
                let v = self.version_at(&listing, ts).await?;
                (listing, Some(v))
            }
        };
        listing.segment(version, self.location())
    }
}

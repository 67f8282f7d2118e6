//! The table overview (`deltalens info`, the explorer's Overview tab, `GET /v1/info`) and
//! the warnings a user should read before trusting its numbers.

use deltalens_core::actions::{Metadata, Protocol};
use deltalens_core::file_totals::FileTotals;
use deltalens_core::{Snapshot, VersionInfo};
use serde::Serialize;
use serde_json::Value;

use crate::value::{bytes, timestamp};

/// What the file fields say when the files were not counted (`info --no-files`, the
/// explorer before its totals arrive).
pub const NOT_COUNTED: &str = "not counted";

/// The parts of a version an overview shows, from a snapshot or a version without files.
struct Parts<'a> {
    version: u64,
    protocol: &'a Protocol,
    metadata: &'a Metadata,
    commit_info: Option<&'a serde_json::Map<String, Value>>,
    checkpoint_version: Option<u64>,
}

/// The protocol a reader and a writer need.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtocolSummary {
    /// Minimum Delta reader protocol version needed to read the table.
    pub min_reader_version: i32,
    /// Minimum Delta writer protocol version needed to write the table.
    pub min_writer_version: i32,
    /// Reader table features; `None` unless the reader version is 3.
    pub reader_features: Option<Vec<String>>,
    /// Writer table features; `None` unless the writer version is 7.
    pub writer_features: Option<Vec<String>>,
}

/// What a table is at one version: size, protocol, properties, partitioning, warnings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overview {
    /// The table's location, as given.
    pub location: String,
    /// The table version described.
    pub version: u64,
    /// The commit's time in milliseconds (`inCommitTimestamp` where the table has it).
    pub commit_timestamp: Option<i64>,
    /// Number of active data files; `None` when the files were not counted.
    pub num_files: Option<u64>,
    /// Their total size in bytes; `None` (with a warning) when a corrupt log's sizes
    /// overflow the sum, or when the files were not counted.
    pub size_bytes: Option<i64>,
    /// `None` when a file has no statistics, or (with a warning) the sum overflows.
    pub num_rows: Option<i64>,
    /// The table's `protocol`.
    pub protocol: ProtocolSummary,
    /// Table properties with a value (Trino's `$properties`).
    pub properties: std::collections::BTreeMap<String, String>,
    /// Names of the partition columns, in order.
    pub partition_columns: Vec<String>,
    /// `metaData.createdTime` in milliseconds since the epoch; `None` when absent.
    pub created_time: Option<i64>,
    /// The table's user-given name; `None` when absent.
    pub name: Option<String>,
    /// The table's user-given description; `None` when absent.
    pub description: Option<String>,
    /// The table's unique id (`metaData.id`).
    pub id: String,
    /// Version of the checkpoint the snapshot was read from; `None` without one.
    pub checkpoint_version: Option<u64>,
    /// What a reader should know before trusting the numbers ([`warnings`]).
    pub warnings: Vec<String>,
}

impl Overview {
    /// The overview of `s`, read from `location`.
    pub fn of(location: &str, s: &Snapshot) -> Overview {
        let totals = FileTotals::of(&s.files);
        Overview::build(
            location,
            Parts {
                version: s.version,
                protocol: &s.protocol,
                metadata: &s.metadata,
                commit_info: s.commit_info.as_ref(),
                checkpoint_version: s.checkpoint_version,
            },
            Some(&totals),
        )
    }

    /// The overview of a version read without its files, with the totals streamed over
    /// them (`None`: not counted, the file fields are null).
    pub fn of_version(location: &str, v: &VersionInfo, totals: Option<&FileTotals>) -> Overview {
        Overview::build(
            location,
            Parts {
                version: v.version,
                protocol: &v.protocol,
                metadata: &v.metadata,
                commit_info: v.commit_info.as_ref(),
                checkpoint_version: v.checkpoint_version,
            },
            totals,
        )
    }

    fn build(location: &str, v: Parts<'_>, totals: Option<&FileTotals>) -> Overview {
        let (md, p) = (v.metadata, v.protocol);
        Overview {
            location: location.to_string(),
            version: v.version,
            commit_timestamp: v
                .commit_info
                .and_then(|c| c.get("inCommitTimestamp").or_else(|| c.get("timestamp")))
                .and_then(Value::as_i64),
            num_files: totals.map(|t| t.files),
            size_bytes: totals.and_then(|t| t.size_bytes),
            num_rows: totals.and_then(|t| t.rows),
            protocol: ProtocolSummary {
                min_reader_version: p.min_reader_version,
                min_writer_version: p.min_writer_version,
                reader_features: p.reader_features.clone(),
                writer_features: p.writer_features.clone(),
            },
            properties: md.properties(),
            partition_columns: md.partition_columns.clone(),
            created_time: md.created_time,
            name: md.name.clone(),
            description: md.description.clone(),
            id: md.id.clone(),
            checkpoint_version: v.checkpoint_version,
            warnings: warnings_of(v.version, v.checkpoint_version, totals),
        }
    }

    /// The overview as labelled lines, the same in the terminal and the explorer
    /// (properties and warnings are listed apart).
    pub fn lines(&self) -> Vec<(&'static str, String)> {
        let list = |v: &Option<Vec<String>>| v.as_ref().map(|f| f.join(", ")).unwrap_or_default();
        let p = &self.protocol;
        vec![
            ("location", self.location.clone()),
            ("version", self.version.to_string()),
            ("commit time", timestamp(self.commit_timestamp)),
            (
                "files",
                self.num_files
                    .map_or_else(|| NOT_COUNTED.into(), |n| n.to_string()),
            ),
            (
                "size",
                match (self.num_files, self.size_bytes) {
                    (None, _) => NOT_COUNTED.into(),
                    (_, None) => "unknown (the sizes overflow: see the warnings)".into(),
                    (_, Some(n)) => format!("{} ({n} bytes)", bytes(n)),
                },
            ),
            (
                "rows",
                match (self.num_files, self.num_rows) {
                    (None, _) => NOT_COUNTED.into(),
                    (_, None) => "unknown (files without statistics, or see the warnings)".into(),
                    (_, Some(n)) => n.to_string(),
                },
            ),
            ("partition columns", self.partition_columns.join(", ")),
            (
                "protocol",
                format!(
                    "reader {}, writer {}",
                    p.min_reader_version, p.min_writer_version
                ),
            ),
            ("reader features", list(&p.reader_features)),
            ("writer features", list(&p.writer_features)),
            ("id", self.id.clone()),
            ("name", self.name.clone().unwrap_or_default()),
            ("description", self.description.clone().unwrap_or_default()),
            ("created", timestamp(self.created_time)),
            (
                "checkpoint",
                self.checkpoint_version
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            ),
        ]
    }
}

/// Things a user should know before trusting the numbers of `s`.
pub fn warnings(s: &Snapshot) -> Vec<String> {
    warnings_of(
        s.version,
        s.checkpoint_version,
        Some(&FileTotals::of(&s.files)),
    )
}

/// Things a user should know before trusting the numbers: sums that overflow, files
/// without statistics or with deletion vectors, many small files, no checkpoint.
pub fn warnings_of(
    version: u64,
    checkpoint: Option<u64>,
    totals: Option<&FileTotals>,
) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(t) = totals {
        w.extend(t.overflows().iter().map(ToString::to_string));
        if t.files_without_stats > 0 {
            w.push(format!(
                "{} of {} files have no statistics: the row count is unknown and filters cannot skip them",
                t.files_without_stats, t.files
            ));
        }
        if t.files_with_deletion_vectors > 0 {
            w.push(format!(
                "{} files carry deletion vectors: rows are deleted without rewriting files (run OPTIMIZE/PURGE to compact)",
                t.files_with_deletion_vectors
            ));
        }
        if t.files >= 100 && t.small_files * 2 > t.files {
            w.push(format!(
                "{} of {} files are under 1 MiB: consider OPTIMIZE",
                t.small_files, t.files
            ));
        }
    }
    if checkpoint.is_none() && version >= 100 {
        w.push(format!(
            "no checkpoint: opening the table replays {} commits",
            version + 1
        ));
    }
    w
}

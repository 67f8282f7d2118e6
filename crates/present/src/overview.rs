//! The table overview (`deltalens info`, the explorer's Overview tab, `GET /v1/info`) and
//! the warnings a user should read before trusting its numbers.

use deltalens_core::Snapshot;
use serde::Serialize;
use serde_json::Value;

use crate::value::{bytes, timestamp};

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
    /// Number of active data files.
    pub num_files: usize,
    /// `None` (with a warning) when a corrupt log's sizes overflow the sum.
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
        let md = &s.metadata;
        let p = &s.protocol;
        Overview {
            location: location.to_string(),
            version: s.version,
            commit_timestamp: s
                .commit_info
                .as_ref()
                .and_then(|c| c.get("inCommitTimestamp").or_else(|| c.get("timestamp")))
                .and_then(Value::as_i64),
            num_files: s.num_files(),
            size_bytes: s.size_bytes().ok(),
            num_rows: s.num_rows().ok().flatten(),
            protocol: ProtocolSummary {
                min_reader_version: p.min_reader_version,
                min_writer_version: p.min_writer_version,
                reader_features: p.reader_features.clone(),
                writer_features: p.writer_features.clone(),
            },
            properties: s.properties(),
            partition_columns: s.partition_columns().to_vec(),
            created_time: md.created_time,
            name: md.name.clone(),
            description: md.description.clone(),
            id: md.id.clone(),
            checkpoint_version: s.checkpoint_version,
            warnings: warnings(s),
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
            ("files", self.num_files.to_string()),
            (
                "size",
                self.size_bytes.map_or_else(
                    || "unknown (the sizes overflow: see the warnings)".into(),
                    |n| format!("{} ({n} bytes)", bytes(n)),
                ),
            ),
            (
                "rows",
                self.num_rows.map_or_else(
                    || "unknown (files without statistics, or see the warnings)".into(),
                    |n| n.to_string(),
                ),
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

/// Things a user should know before trusting the numbers.
pub fn warnings(s: &Snapshot) -> Vec<String> {
    let mut w = Vec::new();
    for e in [s.size_bytes().err(), s.num_rows().err()]
        .into_iter()
        .flatten()
    {
        w.push(e.to_string());
    }
    let no_stats = s.files.iter().filter(|f| f.num_records().is_none()).count();
    if no_stats > 0 {
        w.push(format!(
            "{no_stats} of {} files have no statistics: the row count is unknown and filters cannot skip them",
            s.num_files()
        ));
    }
    let with_dv = s
        .files
        .iter()
        .filter(|f| f.deletion_vector.is_some())
        .count();
    if with_dv > 0 {
        w.push(format!(
            "{with_dv} files carry deletion vectors: rows are deleted without rewriting files (run OPTIMIZE/PURGE to compact)"
        ));
    }
    let small = s.files.iter().filter(|f| f.size < 1024 * 1024).count();
    if s.num_files() >= 100 && small * 2 > s.num_files() {
        w.push(format!(
            "{small} of {} files are under 1 MiB: consider OPTIMIZE",
            s.num_files()
        ));
    }
    if s.checkpoint_version.is_none() && s.version >= 100 {
        w.push(format!(
            "no checkpoint: opening the table replays {} commits",
            s.version + 1
        ));
    }
    w
}

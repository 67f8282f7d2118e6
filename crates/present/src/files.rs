//! The active files (`deltalens files`, the explorer's Files tab, `GET /v1/files`).

use deltalens_core::Snapshot;
use deltalens_core::actions::{Add, DeletionVectorDescriptor};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::value::{bytes, cell, timestamp};

/// One active data file with its partition values, statistics and deletion vector.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileRow {
    /// The data file's path as in the log (URI-encoded, relative or absolute).
    pub path: String,
    /// The file's size in bytes.
    pub size: i64,
    /// When the file was created, in milliseconds since the epoch.
    pub modification_time: i64,
    /// `numRecords` from the file statistics; `None` without statistics.
    pub num_records: Option<i64>,
    /// Typed by the partition columns' types, keyed by logical column name.
    pub partition_values: Map<String, Value>,
    /// The file statistics as JSON; `None` when absent or unparsable.
    pub stats: Option<Value>,
    /// The file's deletion vector; `None` when no rows are deleted.
    pub deletion_vector: Option<DeletionVectorDescriptor>,
    /// Rows the deletion vector deletes (its cardinality); `None` without one.
    pub deleted_rows: Option<i64>,
}

impl FileRow {
    /// Every active file of `s`, in the snapshot's order.
    pub fn all(s: &Snapshot) -> Result<Vec<FileRow>> {
        s.files
            .iter()
            .map(|f| Ok(FileRow::new(f, s.partition_values_json(f)?)))
            .collect()
    }

    /// The row of `f`, whose typed partition values are `partition_values`
    /// (`Snapshot::partition_values_json`, `VersionInfo::partition_values_json`).
    pub fn new(f: &Add, partition_values: Map<String, Value>) -> FileRow {
        FileRow {
            path: f.path.clone(),
            size: f.size,
            modification_time: f.modification_time,
            num_records: f.num_records(),
            partition_values,
            stats: f.stats_json(),
            deletion_vector: f.deletion_vector.clone(),
            deleted_rows: f.deletion_vector.as_ref().map(|d| d.cardinality),
        }
    }

    /// `col=value,…` (empty when the table is not partitioned).
    pub fn partition_text(&self) -> String {
        self.partition_values
            .iter()
            .map(|(k, v)| format!("{k}={}", cell(v)))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The columns of [`FileRow::text_row`].
    pub const TEXT_HEADERS: [&'static str; 6] = [
        "path",
        "size",
        "rows",
        "partition",
        "deleted rows",
        "modified",
    ];

    /// The file as text cells under [`FileRow::TEXT_HEADERS`].
    pub fn text_row(&self) -> Vec<String> {
        vec![
            self.path.clone(),
            bytes(self.size),
            self.num_records.map(|n| n.to_string()).unwrap_or_default(),
            self.partition_text(),
            self.deleted_rows.map(|n| n.to_string()).unwrap_or_default(),
            timestamp(Some(self.modification_time)),
        ]
    }
}

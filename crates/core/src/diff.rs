//! The difference between two versions of a table, with or without change data feed:
//! files added and removed, schema, protocol and property changes, and the rows inserted
//! and deleted (from the files and deletion vectors that differ).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, SchemaRef};
use serde::Serialize;

use crate::actions::{Add, Protocol};
use crate::deletion_vector::deleted_rows;
use crate::error::{Error, Result};
use crate::scan::{FileRead, RowMask, ScanMetrics, ScanOptions};
use crate::snapshot::Snapshot;
use crate::table::{Table, VersionSpec};

/// How a column differs between the two versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnChange {
    /// The top-level column's name.
    pub column: String,
    /// `added`, `dropped`, `type_changed` or `nullability_changed`.
    pub change: &'static str,
    /// Type (or nullability) in `from`; `None` when the column was added.
    pub from: Option<String>,
    /// Type (or nullability) in `to`; `None` when the column was dropped.
    pub to: Option<String>,
}

/// How a table property differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PropertyChange {
    /// The property's key.
    pub key: String,
    /// The value in `from`; `None` when unset or null there.
    pub from: Option<String>,
    /// The value in `to`; `None` when unset or null there.
    pub to: Option<String>,
}

/// A file whose deletion vector differs between the versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeletionVectorChange {
    /// The data file's path as in the log.
    pub path: String,
    /// Rows its deletion vector deletes in `from` (0 without one).
    pub deleted_rows_from: i64,
    /// Rows its deletion vector deletes in `to` (0 without one).
    pub deleted_rows_to: i64,
}

/// Everything that differs between two versions.
#[derive(Debug, Clone)]
pub struct TableDiff {
    /// The snapshot at the first version given.
    pub from: Snapshot,
    /// The snapshot at the second version given.
    pub to: Snapshot,
    /// Files in `to` whose path is not in `from`.
    pub files_added: Vec<Add>,
    /// Files in `from` whose path is not in `to`.
    pub files_removed: Vec<Add>,
    /// Files in both whose deletion vector differs.
    pub deletion_vectors_changed: Vec<DeletionVectorChange>,
    /// Top-level columns added, dropped or changed in type or nullability.
    pub schema_changes: Vec<ColumnChange>,
    /// Whether the partition columns differ.
    pub partition_columns_changed: bool,
    /// Table properties whose value differs, by key.
    pub property_changes: Vec<PropertyChange>,
    /// `Some((from, to))` when the protocol changed.
    pub protocol_change: Option<(Protocol, Protocol)>,
}

fn columns(s: &Snapshot) -> BTreeMap<String, (String, bool)> {
    s.schema
        .fields()
        .iter()
        .map(|f| (f.name.clone(), (f.data_type.type_string(), f.nullable)))
        .collect()
}

impl TableDiff {
    /// Compare `from` and `to` (any order of versions).
    pub async fn new(table: &Table, from: u64, to: u64) -> Result<TableDiff> {
        let a = table.snapshot(VersionSpec::Version(from)).await?;
        let b = table.snapshot(VersionSpec::Version(to)).await?;
        let by_path = |s: &Snapshot| -> BTreeMap<String, Add> {
            s.files
                .iter()
                .map(|f| (f.path.clone(), f.clone()))
                .collect()
        };
        let (fa, fb) = (by_path(&a), by_path(&b));
        let files_added = fb
            .iter()
            .filter(|(p, _)| !fa.contains_key(*p))
            .map(|(_, f)| f.clone())
            .collect();
        let files_removed = fa
            .iter()
            .filter(|(p, _)| !fb.contains_key(*p))
            .map(|(_, f)| f.clone())
            .collect();
        let card = |f: &Add| f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
        let deletion_vectors_changed = fb
            .iter()
            .filter_map(|(p, fbv)| {
                let fav = fa.get(p)?;
                (fav.deletion_vector != fbv.deletion_vector).then(|| DeletionVectorChange {
                    path: p.clone(),
                    deleted_rows_from: card(fav),
                    deleted_rows_to: card(fbv),
                })
            })
            .collect();
        let (ca, cb) = (columns(&a), columns(&b));
        let mut schema_changes = Vec::new();
        for (name, (ty, nullable)) in &cb {
            match ca.get(name) {
                None => schema_changes.push(ColumnChange {
                    column: name.clone(),
                    change: "added",
                    from: None,
                    to: Some(ty.clone()),
                }),
                Some((t0, _)) if t0 != ty => schema_changes.push(ColumnChange {
                    column: name.clone(),
                    change: "type_changed",
                    from: Some(t0.clone()),
                    to: Some(ty.clone()),
                }),
                Some((_, n0)) if n0 != nullable => schema_changes.push(ColumnChange {
                    column: name.clone(),
                    change: "nullability_changed",
                    from: Some(if *n0 { "nullable" } else { "not null" }.into()),
                    to: Some(if *nullable { "nullable" } else { "not null" }.into()),
                }),
                _ => {}
            }
        }
        for (name, (ty, _)) in &ca {
            if !cb.contains_key(name) {
                schema_changes.push(ColumnChange {
                    column: name.clone(),
                    change: "dropped",
                    from: Some(ty.clone()),
                    to: None,
                });
            }
        }
        let (pa, pb) = (a.properties(), b.properties());
        let mut keys: Vec<&String> = pa.keys().chain(pb.keys()).collect();
        keys.sort();
        keys.dedup();
        let property_changes = keys
            .into_iter()
            .filter(|k| pa.get(*k) != pb.get(*k))
            .map(|k| PropertyChange {
                key: k.clone(),
                from: pa.get(k).cloned(),
                to: pb.get(k).cloned(),
            })
            .collect();
        let protocol_change =
            (a.protocol != b.protocol).then(|| (a.protocol.clone(), b.protocol.clone()));
        let partition_columns_changed = a.partition_columns() != b.partition_columns();
        Ok(TableDiff {
            from: a,
            to: b,
            files_added,
            files_removed,
            deletion_vectors_changed,
            schema_changes,
            partition_columns_changed,
            property_changes,
            protocol_change,
        })
    }

    /// The schema of the row-level diff: the `to` version's columns plus `_change_type`.
    pub fn row_schema(&self, options: &ScanOptions) -> Result<SchemaRef> {
        let scan = self.to.scan(options.clone())?;
        Ok(scan.schema_with([Field::new("_change_type", ArrowType::Utf8, false)]))
    }

    /// Rows inserted and deleted between the versions (read with the `to` schema),
    /// handed to `sink` with `_change_type` `insert` or `delete`.
    pub async fn rows(
        &self,
        options: &ScanOptions,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<ScanMetrics> {
        let table = self.to.table();
        let storage = table.storage().as_ref();
        let location = table.location();
        let scan = self.to.scan(options.clone())?;
        let schema = self.row_schema(options)?;
        let mut reads: Vec<(&Add, RowMask, &'static str)> = Vec::new();
        for f in &self.files_removed {
            reads.push((
                f,
                RowMask::without(
                    deleted_rows(storage, f.deletion_vector.as_ref(), location).await?,
                ),
                "delete",
            ));
        }
        let old: BTreeMap<&str, &Add> = self
            .from
            .files
            .iter()
            .map(|f| (f.path.as_str(), f))
            .collect();
        for f in &self.to.files {
            if let Some(o) = old.get(f.path.as_str())
                && o.deletion_vector != f.deletion_vector
            {
                {
                    let (before, after) = (
                        deleted_rows(storage, o.deletion_vector.as_ref(), location).await?,
                        deleted_rows(storage, f.deletion_vector.as_ref(), location).await?,
                    );
                    let deleted = &after - &before;
                    let restored = &before - &after;
                    if !deleted.is_empty() {
                        reads.push((f, RowMask::Only(deleted), "delete"));
                    }
                    if !restored.is_empty() {
                        reads.push((f, RowMask::Only(restored), "insert"));
                    }
                }
            }
        }
        for f in &self.files_added {
            reads.push((
                f,
                RowMask::without(
                    deleted_rows(storage, f.deletion_vector.as_ref(), location).await?,
                ),
                "insert",
            ));
        }
        let mut m = ScanMetrics::default();
        let mut returned = 0usize;
        for (f, rows, change) in reads {
            let read = FileRead {
                path: &f.path,
                size: f.size,
                partition_values: &f.partition_values,
                rows,
            };
            let mut sub = ScanMetrics::default();
            let go = scan
                .read_file(&read, None, &mut sub, &mut |b| {
                    let b = match options.limit {
                        Some(l) if returned + b.num_rows() > l => b.slice(0, l - returned),
                        _ => b,
                    };
                    let n = b.num_rows();
                    returned += n;
                    let mut cols: Vec<ArrayRef> = b.columns().to_vec();
                    cols.push(Arc::new(StringArray::from(vec![change; n])));
                    let out = RecordBatch::try_new(schema.clone(), cols).map_err(|e| {
                        Error::DataFile {
                            path: f.path.clone(),
                            message: e.to_string(),
                        }
                    })?;
                    Ok(sink(out)? && options.limit.is_none_or(|l| returned < l))
                })
                .await?;
            m.rows_returned = returned;
            m.files_read += sub.files_read;
            if !go || options.limit.is_some_and(|l| returned >= l) {
                break;
            }
        }
        Ok(m)
    }
}

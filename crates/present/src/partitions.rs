//! `$partitions`: files, bytes, rows and min/max per partition, as Trino shows them.

use std::collections::BTreeMap;

use deltalens_core::Snapshot;
use deltalens_core::actions::Add;
use serde::Serialize;
use serde_json::Value;

use crate::error::{PresentError, Result};

/// One partition in the style of Trino's `$partitions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionRow {
    /// Partition values by column (JSON-typed; null for a null partition).
    pub partition: BTreeMap<String, Value>,
    /// Number of active files in the partition.
    pub file_count: usize,
    /// Sum of the files' sizes, in bytes.
    pub total_size: i64,
    /// Rows from statistics minus deleted rows; `None` when a file has no statistics.
    pub record_count: Option<i64>,
    /// Per data column: the smallest `minValues` over the files (nested ones left out).
    pub min: BTreeMap<String, Value>,
    /// Per data column: the largest `maxValues` over the files (nested ones left out).
    pub max: BTreeMap<String, Value>,
}

fn less(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.as_f64().unwrap_or(f64::NAN) < y.as_f64().unwrap_or(f64::NAN)
        }
        (Value::String(x), Value::String(y)) => x < y,
        _ => false,
    }
}

/// The partition as `col=value,…` for messages.
fn key_text(partition: &BTreeMap<String, Value>) -> String {
    partition
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `$partitions`: files, bytes, rows and min/max per partition (one row when the table
/// is not partitioned).
pub fn partitions(s: &Snapshot) -> Result<Vec<PartitionRow>> {
    let mut totals = PartitionTotals::default();
    for f in &s.files {
        totals.add(s.partition_values_json(f)?, f)?;
    }
    Ok(totals.finish())
}

/// `$partitions` added up one file at a time (from a snapshot or a stream of files):
/// memory follows the number of partitions, not of files.
#[derive(Debug, Default)]
pub struct PartitionTotals {
    by_key: BTreeMap<String, PartitionRow>,
}

impl PartitionTotals {
    /// Count file `f`, whose typed partition values are `partition_values`.
    pub fn add(&mut self, partition_values: serde_json::Map<String, Value>, f: &Add) -> Result<()> {
        let partition: BTreeMap<String, Value> = partition_values.into_iter().collect();
        let key = serde_json::to_string(&partition).unwrap_or_default();
        let row = self.by_key.entry(key).or_insert_with(|| PartitionRow {
            partition,
            file_count: 0,
            total_size: 0,
            record_count: Some(0),
            min: BTreeMap::new(),
            max: BTreeMap::new(),
        });
        row.file_count += 1;
        let deleted = f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
        let records = match (row.record_count, f.num_records()) {
            (Some(a), Some(n)) => a
                .checked_add(n)
                .and_then(|t| t.checked_sub(deleted))
                .map(Some),
            _ => Some(None),
        };
        match (row.total_size.checked_add(f.size), records) {
            (Some(total), Some(records)) => {
                row.total_size = total;
                row.record_count = records;
            }
            (total, _) => {
                return Err(PresentError::Overflow {
                    what: if total.is_none() {
                        "total_size"
                    } else {
                        "record_count"
                    },
                    partition: key_text(&row.partition),
                });
            }
        }
        let stats = f.stats_json();
        for (side, into) in [("minValues", &mut row.min), ("maxValues", &mut row.max)] {
            let Some(Value::Object(vals)) = stats.as_ref().and_then(|s| s.get(side)) else {
                continue;
            };
            for (col, v) in vals {
                if v.is_object() || v.is_null() {
                    continue; // nested statistics are not summarised
                }
                match into.get(col) {
                    Some(cur) if side == "minValues" && !less(v, cur) => {}
                    Some(cur) if side == "maxValues" && !less(cur, v) => {}
                    _ => {
                        into.insert(col.clone(), v.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// The partitions, ordered by their values.
    pub fn finish(self) -> Vec<PartitionRow> {
        self.by_key.into_values().collect()
    }
}

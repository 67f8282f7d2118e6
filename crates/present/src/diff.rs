//! What changed between two versions, as one document (`deltalens diff --json`, `GET
//! /v1/diff`, the npm package's `diff`): files added and removed, deletion vectors,
//! schema, partition columns, protocol and properties, the rows inserted and deleted as
//! estimated from the files' statistics, and the changed rows themselves.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltalens_core::actions::Add;
use deltalens_core::diff::TableDiff;
use serde_json::{Value, json};

use crate::error::{PresentError, Result};
use crate::rows::{Format, encode};

/// Rows inserted and deleted between the two versions, from the files' statistics:
/// `None` when a file has no row count (or the sums do not fit an `i64`, which only a
/// hostile log can make).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowEstimate {
    /// Rows in the files added, less the rows deletion vectors newly hide.
    pub inserted: Option<i64>,
    /// Rows in the files removed, plus the rows deletion vectors newly hide.
    pub deleted: Option<i64>,
}

/// The live rows of `files` (their counts less their deletion vectors'), checked.
fn live_rows(files: &[Add]) -> Option<i64> {
    files.iter().try_fold(0i64, |acc, f| {
        let dv = f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
        acc.checked_add(f.num_records()?.checked_sub(dv)?)
    })
}

/// The rows inserted and deleted by `d`, from statistics.
pub fn row_estimate(d: &TableDiff) -> RowEstimate {
    let dv: Option<i64> = d.deletion_vectors_changed.iter().try_fold(0i64, |acc, c| {
        acc.checked_add(c.deleted_rows_to.checked_sub(c.deleted_rows_from)?)
    });
    let (Some(dv), added, removed) = (dv, live_rows(&d.files_added), live_rows(&d.files_removed))
    else {
        return RowEstimate {
            inserted: None,
            deleted: None,
        };
    };
    RowEstimate {
        inserted: added.and_then(|n| n.checked_sub(dv.min(0))),
        deleted: removed.and_then(|n| n.checked_add(dv.max(0))),
    }
}

/// The JSON document of `d`, with the changed `rows` (of `schema`).
pub fn diff_document(d: &TableDiff, schema: &SchemaRef, rows: &[RecordBatch]) -> Result<Value> {
    let file = |f: &Add| json!({"path": f.path, "size": f.size, "num_records": f.num_records()});
    let est = row_estimate(d);
    let rows: Value =
        deltalens_json::from_slice(&encode(Format::Json, schema, rows)?).map_err(|e| {
            PresentError::Encode {
                format: "json",
                source: arrow_schema::ArrowError::JsonError(e.to_string()),
            }
        })?;
    Ok(json!({
        "from": d.from.version,
        "to": d.to.version,
        "files_added": d.files_added.iter().map(file).collect::<Vec<_>>(),
        "files_removed": d.files_removed.iter().map(file).collect::<Vec<_>>(),
        "deletion_vectors_changed": d.deletion_vectors_changed,
        "schema_changes": d.schema_changes,
        "partition_columns": {"from": d.from.partition_columns(), "to": d.to.partition_columns()},
        "protocol": d.protocol_change.as_ref().map(|(a, b)| json!({"from": a, "to": b})),
        "property_changes": d.property_changes,
        "rows_inserted": est.inserted,
        "rows_deleted": est.deleted,
        "rows": rows,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(records: &str) -> Add {
        deltalens_json::from_value(json!({
            "path": "a.parquet", "partitionValues": {}, "size": 1, "modificationTime": 0,
            "dataChange": true, "stats": format!("{{\"numRecords\":{records}}}"),
        }))
        .unwrap()
    }

    #[test]
    fn live_rows_are_summed_with_checks() {
        assert_eq!(live_rows(&[add("3"), add("4")]), Some(7));
        assert_eq!(live_rows(&[]), Some(0));
        // a hostile log: counts whose sum overflows an i64 give no estimate, not a panic
        // or a wrapped number
        let big = i64::MAX.to_string();
        assert_eq!(live_rows(&[add(&big), add("1")]), None);
    }
}

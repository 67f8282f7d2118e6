//! The documents deltalens' front ends show — the CLI prints them, the web app renders
//! them, the worker serializes them — built once here from core snapshots so that every
//! front end says the same thing. No I/O: callers load snapshots with the core.

use std::collections::BTreeMap;

use deltalens_core::Snapshot;
use deltalens_core::schema::{DataType, StructField, to_arrow_type};
use serde::Serialize;
use serde_json::{Value, json};

/// Table overview (`deltalens info`, the web app's Overview tab, `GET /v1/info`).
pub fn overview(location: &str, s: &Snapshot) -> Value {
    let md = &s.metadata;
    let p = &s.protocol;
    json!({
        "location": location,
        "version": s.version,
        "commit_timestamp": s.commit_info.as_ref().and_then(|c| c.get("inCommitTimestamp").or_else(|| c.get("timestamp"))).and_then(Value::as_i64),
        "num_files": s.num_files(),
        // null (with a warning) when a corrupt log's values overflow the sum
        "size_bytes": s.size_bytes().ok(),
        "num_rows": s.num_rows().ok().flatten(),
        "protocol": {
            "min_reader_version": p.min_reader_version,
            "min_writer_version": p.min_writer_version,
            "reader_features": p.reader_features,
            "writer_features": p.writer_features,
        },
        "properties": s.properties(),
        "partition_columns": s.partition_columns(),
        "created_time": md.created_time,
        "name": md.name,
        "description": md.description,
        "id": md.id,
        "checkpoint_version": s.checkpoint_version,
        "warnings": warnings(s),
    })
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

/// One row of the schema tree, flattened depth-first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaRow {
    /// Dotted path (`a.b.element.c`), unique in the tree.
    pub path: String,
    pub name: String,
    pub depth: usize,
    pub has_children: bool,
    pub delta_type: String,
    pub arrow_type: String,
    pub nullable: bool,
    pub partition: bool,
    pub physical_name: Option<String>,
    pub field_id: Option<i64>,
    pub comment: Option<String>,
    /// Other field metadata (column-mapping keys and comment excluded), as JSON.
    pub metadata: Option<String>,
}

fn children(t: &DataType) -> Vec<(String, DataType, bool, Option<&StructField>)> {
    match t {
        DataType::Primitive(_) => Vec::new(),
        DataType::Struct(s) => s
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.data_type.clone(), f.nullable, Some(f)))
            .collect(),
        DataType::Array(a) => vec![(
            "element".into(),
            a.element_type.clone(),
            a.contains_null,
            None,
        )],
        DataType::Map(m) => vec![
            ("key".into(), m.key_type.clone(), false, None),
            (
                "value".into(),
                m.value_type.clone(),
                m.value_contains_null,
                None,
            ),
        ],
    }
}

/// One node of the schema tree: name, type, nullability and (for struct fields) the field.
type Node<'a> = (&'a str, &'a DataType, bool, Option<&'a StructField>);

fn push_rows(
    out: &mut Vec<SchemaRow>,
    prefix: &str,
    depth: usize,
    (name, t, nullable, field): Node<'_>,
    partition: &[String],
) {
    let path = if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    };
    let kids = children(t);
    let metadata = field.and_then(|f| {
        let rest: serde_json::Map<String, Value> = f
            .metadata
            .iter()
            .filter(|(k, _)| !k.starts_with("delta.columnMapping") && k.as_str() != "comment")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (!rest.is_empty()).then(|| Value::Object(rest).to_string())
    });
    out.push(SchemaRow {
        path: path.clone(),
        name: name.to_string(),
        depth,
        has_children: !kids.is_empty(),
        delta_type: t.type_string(),
        arrow_type: to_arrow_type(t)
            .map(|a| a.to_string())
            .unwrap_or_else(|e| format!("unsupported: {e}")),
        nullable,
        partition: depth == 0 && partition.contains(&name.to_string()),
        physical_name: field.and_then(|f| f.physical_name().map(str::to_string)),
        field_id: field.and_then(|f| f.field_id()),
        comment: field.and_then(|f| f.comment().map(str::to_string)),
        metadata,
    });
    for (n, ct, cn, cf) in &kids {
        push_rows(out, &path, depth + 1, (n, ct, *cn, *cf), partition);
    }
}

/// The schema as a depth-first list of rows (nested fields below their parent).
pub fn schema_rows(s: &Snapshot) -> Vec<SchemaRow> {
    let mut out = Vec::new();
    let partition = s.partition_columns();
    for f in s.schema.fields() {
        push_rows(
            &mut out,
            "",
            0,
            (&f.name, &f.data_type, f.nullable, Some(f)),
            partition,
        );
    }
    out
}

/// The active files with partition values, statistics and deletion vectors.
pub fn files(s: &Snapshot) -> Result<Vec<Value>, deltalens_core::Error> {
    let mut docs = Vec::with_capacity(s.files.len());
    for f in &s.files {
        docs.push(json!({
            "path": f.path,
            "size": f.size,
            "modification_time": f.modification_time,
            "num_records": f.num_records(),
            "partition_values": s.partition_values_json(f)?,
            "stats": f.stats_json(),
            "deletion_vector": f.deletion_vector,
            "deleted_rows": f.deletion_vector.as_ref().map(|d| d.cardinality),
        }));
    }
    Ok(docs)
}

/// One partition in the style of Trino's `$partitions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionRow {
    /// Partition values by column (JSON-typed; null for a null partition).
    pub partition: BTreeMap<String, Value>,
    pub file_count: usize,
    pub total_size: i64,
    /// Rows from statistics minus deleted rows; `None` when a file has no statistics.
    pub record_count: Option<i64>,
    /// Per data column: the smallest `minValues` and largest `maxValues` over the files.
    pub min: BTreeMap<String, Value>,
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

/// `$partitions`: files, bytes, rows and min/max per partition (one row when the table
/// is not partitioned).
pub fn partitions(s: &Snapshot) -> Result<Vec<PartitionRow>, deltalens_core::Error> {
    let mut by_key: BTreeMap<String, PartitionRow> = BTreeMap::new();
    for f in &s.files {
        let pv = s.partition_values_json(f)?;
        let partition: BTreeMap<String, Value> = pv.into_iter().collect();
        let key = serde_json::to_string(&partition).unwrap_or_default();
        let row = by_key.entry(key).or_insert_with(|| PartitionRow {
            partition,
            file_count: 0,
            total_size: 0,
            record_count: Some(0),
            min: BTreeMap::new(),
            max: BTreeMap::new(),
        });
        row.file_count += 1;
        row.total_size += f.size;
        let deleted = f.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
        row.record_count = match (row.record_count, f.num_records()) {
            (Some(a), Some(n)) => Some(a + n - deleted),
            _ => None,
        };
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
    }
    Ok(by_key.into_values().collect())
}

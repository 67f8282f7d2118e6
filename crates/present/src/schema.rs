//! The schema as a tree of rows (`deltalens schema`, the explorer's Schema tab).

use deltalens_core::Snapshot;
use deltalens_core::schema::{DataType, StructField, TableSchema, to_arrow_type};
use serde::Serialize;
use serde_json::Value;

/// One row of the schema tree, flattened depth-first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaRow {
    /// Dotted path (`a.b.element.c`), unique in the tree.
    pub path: String,
    /// The field's name (`element`, `key` or `value` inside arrays and maps).
    pub name: String,
    /// Nesting depth: 0 for a top-level column.
    pub depth: usize,
    /// Whether nested rows follow (struct, array or map).
    pub has_children: bool,
    /// The Delta type string (`long`, `array<struct<a:integer>>`).
    pub delta_type: String,
    /// The Arrow type it is read as, or `unsupported: …`.
    pub arrow_type: String,
    /// Whether the value can be null.
    pub nullable: bool,
    /// Whether it is a partition column (top level only).
    pub partition: bool,
    /// Column-mapping physical name; `None` without column mapping.
    pub physical_name: Option<String>,
    /// Column-mapping field id; `None` without column mapping.
    pub field_id: Option<i64>,
    /// The field's `comment` metadata; `None` when absent.
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
    schema_rows_of(&s.schema, s.partition_columns())
}

/// The rows of `schema` whose top-level `partition` columns are marked.
pub fn schema_rows_of(schema: &TableSchema, partition: &[String]) -> Vec<SchemaRow> {
    let mut out = Vec::new();
    for f in schema.fields() {
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

//! Arrow values as text cells: the one formatter behind the explorer's grid, the CLI's
//! aligned table and every text output format (CSV, JSON).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, FieldRef, Schema};

use crate::error::{PresentError, Result};

fn utc_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Timestamp(unit, Some(tz)) if tz.as_ref() == "UTC" || tz.as_ref() == "Etc/UTC" => {
            Some(DataType::Timestamp(*unit, Some("+00:00".into())))
        }
        _ => None,
    }
}

/// `batch` with its `Timestamp(_, "UTC")` columns relabelled `+00:00`.
///
/// Delta's timestamps are `Timestamp(µs, "UTC")`; writing them as text needs a time-zone
/// database for the name "UTC", which the wasm builds leave out (it is large), so the
/// explorer showed them as blank cells. The same instants labelled with the offset
/// `+00:00` print identically (`…Z`) without it.
pub fn utc_as_offset(batch: &RecordBatch) -> Result<RecordBatch> {
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| utc_type(f.data_type()).is_some())
    {
        return Ok(batch.clone());
    }
    let encode = |source| PresentError::Encode {
        format: "text",
        source,
    };
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (f, a) in batch.schema().fields().iter().zip(batch.columns()) {
        match utc_type(f.data_type()) {
            Some(t) => {
                let data = a
                    .to_data()
                    .into_builder()
                    .data_type(t.clone())
                    .build()
                    .map_err(encode)?;
                arrays.push(arrow_array::make_array(data));
                fields.push(
                    Field::new(f.name(), t, f.is_nullable()).with_metadata(f.metadata().clone()),
                );
            }
            None => {
                arrays.push(a.clone());
                fields.push(f.as_ref().clone());
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(encode)
}

/// `t` with every map's keys as strings (`None` when no map has other keys): JSON objects
/// have string keys, so a map keyed by numbers or dates is written with its keys as text,
/// as Spark's `to_json` does.
fn with_string_map_keys(t: &DataType) -> Option<DataType> {
    let field = |f: &FieldRef| {
        with_string_map_keys(f.data_type()).map(|d| Arc::new(f.as_ref().clone().with_data_type(d)))
    };
    match t {
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return None;
            };
            let (k, v) = (kv.first()?, kv.get(1)?);
            let key_changed = !matches!(k.data_type(), DataType::Utf8 | DataType::LargeUtf8);
            let key = Arc::new(k.as_ref().clone().with_data_type(DataType::Utf8));
            let value = field(v);
            if !key_changed && value.is_none() {
                return None;
            }
            let k = if key_changed { key } else { k.clone() };
            let v = value.unwrap_or_else(|| v.clone());
            let entries = entries
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(vec![k, v].into()));
            Some(DataType::Map(Arc::new(entries), *sorted))
        }
        DataType::Struct(fields) => {
            let changed: Vec<Option<FieldRef>> = fields.iter().map(field).collect();
            changed.iter().any(Option::is_some).then(|| {
                DataType::Struct(
                    fields
                        .iter()
                        .zip(changed)
                        .map(|(f, c)| c.unwrap_or_else(|| f.clone()))
                        .collect::<Vec<_>>()
                        .into(),
                )
            })
        }
        DataType::List(f) => field(f).map(DataType::List),
        DataType::LargeList(f) => field(f).map(DataType::LargeList),
        _ => None,
    }
}

/// `batch` as JSON can be written: maps keyed by other types than strings get their keys
/// as text (see [`with_string_map_keys`]); other columns as they are.
pub fn json_ready(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let targets: Vec<Option<DataType>> = schema
        .fields()
        .iter()
        .map(|f| with_string_map_keys(f.data_type()))
        .collect();
    if targets.iter().all(Option::is_none) {
        return Ok(batch.clone());
    }
    let encode = |source| PresentError::Encode {
        format: "json",
        source,
    };
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for ((f, a), t) in schema.fields().iter().zip(batch.columns()).zip(targets) {
        match t {
            Some(t) => {
                arrays.push(arrow_cast::cast(a, &t).map_err(encode)?);
                fields.push(f.as_ref().clone().with_data_type(t));
            }
            None => {
                arrays.push(a.clone());
                fields.push(f.as_ref().clone());
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(encode)
}

/// Every row of `batch` as text cells, nulls written as `null`.
pub fn text_rows(batch: &RecordBatch, null: &str) -> Result<Vec<Vec<String>>> {
    let batch = utc_as_offset(batch)?;
    let opts = FormatOptions::default().with_null(null);
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| PresentError::Encode {
            format: "text",
            source,
        })?;
    Ok((0..batch.num_rows())
        .map(|r| formatters.iter().map(|f| f.value(r).to_string()).collect())
        .collect())
}

/// Every row of `batch` as text cells: a null value `null_cell`, a null inside a nested
/// value `null` (as the aligned table writes both), so a grid can mark an empty cell
/// without changing how nested values read.
pub fn text_cells(batch: &RecordBatch, null_cell: &str) -> Result<Vec<Vec<String>>> {
    let mut rows = text_rows(batch, "null")?;
    for (j, col) in batch.columns().iter().enumerate() {
        if col.null_count() == 0 {
            continue;
        }
        for (i, row) in rows.iter_mut().enumerate() {
            if col.is_null(i)
                && let Some(c) = row.get_mut(j)
            {
                *c = null_cell.to_string();
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray, TimestampMicrosecondArray};

    #[test]
    fn cells() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
            Field::new(
                "t",
                DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
        ]));
        let b = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None])),
                Arc::new(StringArray::from(vec![Some("a"), None])),
                Arc::new(
                    TimestampMicrosecondArray::from(vec![Some(1_569_888_000_000_000), None])
                        .with_timezone("UTC"),
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            text_rows(&b, "∅").unwrap(),
            vec![vec!["1", "a", "2019-10-01T00:00:00Z"], vec!["∅", "∅", "∅"]]
        );
        assert_eq!(
            text_cells(&b, "∅").unwrap(),
            vec![vec!["1", "a", "2019-10-01T00:00:00Z"], vec!["∅", "∅", "∅"]]
        );
    }

    #[test]
    fn nulls_inside_nested_values_read_null() {
        let inner = Arc::new(arrow_array::StructArray::from(vec![(
            Arc::new(Field::new("a", DataType::Int32, true)),
            Arc::new(Int32Array::from(vec![None, Some(2)])) as ArrayRef,
        )]));
        let schema = Arc::new(Schema::new(vec![Field::new(
            "s",
            inner.data_type().clone(),
            true,
        )]));
        let b = RecordBatch::try_new(schema, vec![inner]).unwrap();
        assert_eq!(
            text_cells(&b, "∅").unwrap(),
            vec![vec!["{a: null}"], vec!["{a: 2}"]]
        );
    }
}

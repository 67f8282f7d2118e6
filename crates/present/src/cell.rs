//! Arrow values as text cells: the one formatter behind the explorer's grid, the CLI's
//! aligned table and every text output format (CSV, JSON).

use std::fmt::Write;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, GenericListArray, MapArray, OffsetSizeTrait, RecordBatch, StructArray,
};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema};

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
                arrays.push(offset_labelled(a).map_err(encode)?);
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

/// `a` labelled `+00:00` if it is a `Timestamp(_, "UTC")` (see [`utc_as_offset`]).
fn offset_labelled(a: &ArrayRef) -> std::result::Result<ArrayRef, ArrowError> {
    let Some(t) = utc_type(a.data_type()) else {
        return Ok(a.clone());
    };
    let data = a.to_data().into_builder().data_type(t).build()?;
    Ok(arrow_array::make_array(data))
}

/// `a` as text, value by value, with the cell formatter's default options (as arrow's cast
/// to strings writes them, without linking the cast kernels for every type pair).
fn as_text(a: &ArrayRef) -> std::result::Result<ArrayRef, ArrowError> {
    let a = &offset_labelled(a)?;
    let f = ArrayFormatter::try_new(a.as_ref(), &FormatOptions::default())?;
    let mut b = StringBuilder::with_capacity(a.len(), a.len().saturating_mul(8));
    let mut text = String::new();
    for i in 0..a.len() {
        if a.is_null(i) {
            b.append_null();
        } else {
            text.clear();
            write!(text, "{}", f.value(i)).map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
            b.append_value(&text);
        }
    }
    Ok(Arc::new(b.finish()))
}

/// `f` with the type of `a`.
fn retyped(f: &FieldRef, a: &ArrayRef) -> FieldRef {
    Arc::new(f.as_ref().clone().with_data_type(a.data_type().clone()))
}

/// `a` with every map's keys as text, at any depth (`None` when no map inside has keys of
/// another type): JSON objects have string keys, so a map keyed by numbers or dates is
/// written with its keys as text, as Spark's `to_json` does.
fn map_keys_as_text(a: &ArrayRef) -> std::result::Result<Option<ArrayRef>, ArrowError> {
    match a.data_type() {
        DataType::Map(entries_field, sorted) => {
            let m = a.as_map();
            let kv = m.entries();
            let DataType::Struct(kv_fields) = entries_field.data_type() else {
                return Ok(None);
            };
            let (Some(kf), Some(vf)) = (kv_fields.first(), kv_fields.get(1)) else {
                return Ok(None);
            };
            let (keys, values) = (kv.column(0), kv.column(1));
            let new_keys = match keys.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 => None,
                _ => Some(as_text(keys)?),
            };
            let new_values = map_keys_as_text(values)?;
            if new_keys.is_none() && new_values.is_none() {
                return Ok(None);
            }
            let keys = new_keys.unwrap_or_else(|| keys.clone());
            let values = new_values.unwrap_or_else(|| values.clone());
            let fields: Fields = vec![retyped(kf, &keys), retyped(vf, &values)].into();
            let entries =
                StructArray::try_new(fields.clone(), vec![keys, values], kv.nulls().cloned())?;
            let field = Arc::new(
                entries_field
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(fields)),
            );
            let map = MapArray::try_new(
                field,
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            )?;
            Ok(Some(Arc::new(map)))
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let changed = s
                .columns()
                .iter()
                .map(map_keys_as_text)
                .collect::<std::result::Result<Vec<_>, _>>()?;
            if changed.iter().all(Option::is_none) {
                return Ok(None);
            }
            let columns: Vec<ArrayRef> = changed
                .into_iter()
                .zip(s.columns())
                .map(|(c, was)| c.unwrap_or_else(|| was.clone()))
                .collect();
            let fields: Fields = fields
                .iter()
                .zip(&columns)
                .map(|(f, c)| retyped(f, c))
                .collect();
            Ok(Some(Arc::new(StructArray::try_new(
                fields,
                columns,
                s.nulls().cloned(),
            )?)))
        }
        DataType::List(f) => list_keys_as_text(a.as_list::<i32>(), f),
        DataType::LargeList(f) => list_keys_as_text(a.as_list::<i64>(), f),
        _ => Ok(None),
    }
}

fn list_keys_as_text<O: OffsetSizeTrait>(
    l: &GenericListArray<O>,
    f: &FieldRef,
) -> std::result::Result<Option<ArrayRef>, ArrowError> {
    let Some(values) = map_keys_as_text(l.values())? else {
        return Ok(None);
    };
    let list = GenericListArray::<O>::try_new(
        retyped(f, &values),
        l.offsets().clone(),
        values,
        l.nulls().cloned(),
    )?;
    Ok(Some(Arc::new(list)))
}

/// `batch` as JSON can be written: maps keyed by other types than strings get their keys
/// as text (see [`map_keys_as_text`]); other columns as they are.
pub fn json_ready(batch: &RecordBatch) -> Result<RecordBatch> {
    let encode = |source| PresentError::Encode {
        format: "json",
        source,
    };
    let changed = batch
        .columns()
        .iter()
        .map(map_keys_as_text)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(encode)?;
    if changed.iter().all(Option::is_none) {
        return Ok(batch.clone());
    }
    let arrays: Vec<ArrayRef> = changed
        .into_iter()
        .zip(batch.columns())
        .map(|(c, was)| c.unwrap_or_else(|| was.clone()))
        .collect();
    let schema = batch.schema();
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .zip(&arrays)
        .map(|(f, a)| retyped(f, a))
        .collect();
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

    /// A map keyed by `keys` (one entry per row), inside a struct: its keys as text, each
    /// equal to arrow's cast to strings (the kernel this replaces, kept out of the
    /// explorer's wasm), sliced maps and null maps included.
    fn keys_read_as_the_cast_writes_them(keys: ArrayRef) {
        let n = keys.len();
        let values = Arc::new(StringArray::from_iter_values(
            (0..n).map(|i| format!("v{i}")),
        )) as ArrayRef;
        let entries = StructArray::from(vec![
            (
                Arc::new(Field::new("key", keys.data_type().clone(), false)),
                keys.clone(),
            ),
            (Arc::new(Field::new("value", DataType::Utf8, true)), values),
        ]);
        let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
        let offsets = arrow_buffer::OffsetBuffer::from_lengths(std::iter::repeat_n(1, n));
        let nulls = arrow_buffer::NullBuffer::from((0..n).map(|i| i % 3 != 2).collect::<Vec<_>>());
        let map = Arc::new(MapArray::try_new(field, offsets, entries, Some(nulls), false).unwrap())
            as ArrayRef;
        let outer = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("m", map.data_type().clone(), true)),
            map,
        )])) as ArrayRef;
        let sliced = outer.slice(1, n - 1);
        let got = map_keys_as_text(&sliced).unwrap().expect("keys changed");
        let got_keys = got
            .as_struct()
            .column(0)
            .as_map()
            .entries()
            .column(0)
            .clone();
        // (a UTC timestamp is written as the cells write it, labelled +00:00: "…Z")
        let want = arrow_cast::cast(&offset_labelled(&keys).unwrap(), &DataType::Utf8).unwrap();
        assert_eq!(got_keys.as_string::<i32>(), want.as_string::<i32>());
        // the map's own rows: entries of rows 1.. (a slice keeps the offsets)
        let m = got.as_struct().column(0).as_map();
        assert_eq!(m.len(), n - 1);
        assert!(m.is_null(1)); // row 2 of the unsliced map
        assert_eq!(
            m.value(0).column(0).as_string::<i32>().value(0),
            want.as_string::<i32>().value(1)
        );
    }

    #[test]
    fn map_keys_as_text_equal_arrow_cast() {
        keys_read_as_the_cast_writes_them(Arc::new(Int32Array::from(vec![1, -2, 3, i32::MAX])));
        keys_read_as_the_cast_writes_them(Arc::new(arrow_array::Float64Array::from(vec![
            0.5,
            -1e300,
            f64::NAN,
            1.0,
        ])));
        keys_read_as_the_cast_writes_them(Arc::new(arrow_array::Date32Array::from(vec![
            0, 18_000, -1, 2_932_896,
        ])));
        keys_read_as_the_cast_writes_them(Arc::new(
            TimestampMicrosecondArray::from(vec![
                0,
                1_569_888_000_000_000,
                -1,
                253_402_300_799_000_000,
            ])
            .with_timezone("UTC"),
        ));
        keys_read_as_the_cast_writes_them(Arc::new(TimestampMicrosecondArray::from(vec![
            0, 1, 2, 3,
        ])));
        keys_read_as_the_cast_writes_them(Arc::new(
            arrow_array::Decimal128Array::from(vec![12_345, -1, 0, 99])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ));
        keys_read_as_the_cast_writes_them(Arc::new(arrow_array::BooleanArray::from(vec![
            true, false, true, false,
        ])));
        // string keys: nothing to change
        let strings = Arc::new(StringArray::from(vec!["a"])) as ArrayRef;
        assert!(map_keys_as_text(&strings).unwrap().is_none());
    }
}

//! Partition values: the strings in `add.partitionValues` read with their Delta types
//! (PROTOCOL.md "Partition Value Serialization").

use chrono::NaiveDate;
use serde_json::Value;

use crate::actions::{Add, Metadata};
use crate::error::{Error, Result};
use crate::schema::{DataType, TableSchema};
use crate::text_value;
use crate::type_widening::widen;

fn bad(column: &str, raw: &str, ty: &str) -> Error {
    Error::InvalidLog {
        path: format!("partition column {column}"),
        message: format!("partition value {raw:?} is not a valid {ty}"),
    }
}

/// The partition values of `file` in a table of `schema` and `metadata`, typed by the
/// partition columns' Delta types and keyed by logical column name (column-mapped tables
/// store physical names).
pub fn file_partition_values(
    schema: &TableSchema,
    metadata: &Metadata,
    file: &Add,
) -> Result<serde_json::Map<String, Value>> {
    metadata
        .partition_columns
        .iter()
        .map(|col| {
            let field = schema
                .index_of_exact(col)
                .and_then(|i| schema.fields().get(i))
                .ok_or_else(|| Error::InvalidSchema {
                    message: format!("partition column {col} is not in the schema"),
                })?;
            let key = field.physical_name().unwrap_or(col);
            let raw = file
                .partition_values
                .get(key)
                .or_else(|| file.partition_values.get(col))
                .and_then(|v| v.as_deref());
            Ok((
                col.clone(),
                partition_value_json(col, raw, &field.data_type)?,
            ))
        })
        .collect()
}

/// A partition value as a typed JSON value: numbers and booleans as JSON, decimals and
/// dates as strings, timestamps as ISO-8601 strings (UTC for `timestamp`; wall clock for
/// `timestamp_ntz`), `null` for null and for the empty string.
pub fn partition_value_json(column: &str, raw: Option<&str>, ty: &DataType) -> Result<Value> {
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(Value::Null);
    };
    let DataType::Primitive(p) = ty else {
        return Err(bad(column, raw, &ty.type_string()));
    };
    let err = || bad(column, raw, p);
    Ok(match p.as_str() {
        "string" | "binary" => Value::String(raw.to_string()),
        "byte" | "short" | "integer" | "long" => {
            Value::from(raw.trim().parse::<i64>().map_err(|_| err())?)
        }
        "float" | "double" => {
            let f: f64 = raw.trim().parse().map_err(|_| err())?;
            serde_json::Number::from_f64(f)
                .map_or_else(|| Value::String(raw.to_string()), Value::Number)
        }
        "boolean" => match raw.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(err()),
        },
        "date" => {
            let d = NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").map_err(|_| err())?;
            Value::String(d.format("%Y-%m-%d").to_string())
        }
        "timestamp" => {
            let ms = parse_timestamp_us(raw).ok_or_else(err)?;
            Value::String(format_us(ms, true))
        }
        "timestamp_ntz" => {
            let us = parse_timestamp_us(raw).ok_or_else(err)?;
            Value::String(format_us(us, false))
        }
        d if d.starts_with("decimal(") => {
            raw.trim().parse::<f64>().map_err(|_| err())?;
            Value::String(raw.trim().to_string())
        }
        _ => Value::String(raw.to_string()),
    })
}

/// Microseconds since the epoch of a partition timestamp (`2021-09-08 11:11:11.123456`,
/// ISO-8601 with zone, or without zone = UTC).
pub fn parse_timestamp_us(raw: &str) -> Option<i64> {
    text_value::timestamp_us(raw.trim())
}

fn format_us(us: i64, zone: bool) -> String {
    let dt = chrono::DateTime::from_timestamp_micros(us).map(|d| d.naive_utc());
    match dt {
        Some(d) => {
            let base = d.format("%Y-%m-%dT%H:%M:%S%.6f").to_string();
            if zone { format!("{base}Z") } else { base }
        }
        None => us.to_string(),
    }
}

/// A column of `n` copies of a partition value, typed as the table declares it.
pub fn partition_array(
    column: &str,
    raw: Option<&str>,
    ty: &DataType,
    target: &arrow_schema::DataType,
    n: usize,
) -> Result<arrow_array::ArrayRef> {
    use arrow_array::{ArrayRef, BinaryArray, UInt32Array};
    use arrow_schema::TimeUnit;
    use std::sync::Arc;
    let Some(raw) = raw.filter(|r| !r.is_empty()) else {
        return Ok(arrow_array::new_null_array(target, n));
    };
    let p = match ty {
        DataType::Primitive(p) => p.as_str(),
        other => return Err(bad(column, raw, &other.type_string())),
    };
    let one: ArrayRef = match p {
        "binary" => Arc::new(BinaryArray::from(vec![raw.as_bytes()])),
        "timestamp" | "timestamp_ntz" => {
            let us = parse_timestamp_us(raw).ok_or_else(|| bad(column, raw, p))?;
            let zone = (p == "timestamp").then(|| "UTC".into());
            text_value::timestamp_array(us, TimeUnit::Microsecond, zone)
        }
        _ => text_value::one_row(raw, target).map_err(|_| bad(column, raw, p))?,
    };
    let one = widen(&one, target).map_err(|_| bad(column, raw, p))?;
    let idx = UInt32Array::from(vec![0u32; n]);
    arrow_select::take::take(&one, &idx, None).map_err(|_| bad(column, raw, p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn p(t: &str) -> DataType {
        DataType::Primitive(t.to_string())
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn typed_values() {
        let v = |raw: Option<&str>, t: &str| partition_value_json("c", raw, &p(t)).unwrap();
        assert_eq!(v(Some("12"), "integer"), Value::from(12));
        assert_eq!(v(Some("-3"), "long"), Value::from(-3));
        assert_eq!(v(Some("1.5"), "double"), Value::from(1.5));
        assert_eq!(v(Some("true"), "boolean"), Value::Bool(true));
        assert_eq!(v(Some("2021-09-08"), "date"), Value::from("2021-09-08"));
        assert_eq!(v(Some("12.340"), "decimal(10,3)"), Value::from("12.340"));
        assert_eq!(v(Some("a b"), "string"), Value::from("a b"));
        assert_eq!(v(Some(""), "string"), Value::Null);
        assert_eq!(v(None, "integer"), Value::Null);
        assert_eq!(
            v(Some("2021-09-08 11:11:11"), "timestamp"),
            Value::from("2021-09-08T11:11:11.000000Z")
        );
        assert_eq!(
            v(Some("2021-09-08 11:11:11.5"), "timestamp_ntz"),
            Value::from("2021-09-08T11:11:11.500000")
        );
        assert!(partition_value_json("c", Some("x"), &p("integer")).is_err());
        assert!(partition_value_json("c", Some("maybe"), &p("boolean")).is_err());
    }
}

//! The conformance corpus' canonical row format (../shared/conformance/README.md):
//! one compact JSON array per row in Delta schema order, lines sorted bytewise.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use deltalens_core::schema::{DataType, StructField};
use serde_json::Value;

fn float_str(s: String) -> Value {
    Value::String(s)
}

fn value(a: &ArrayRef, i: usize, ty: &DataType) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    match ty {
        DataType::Primitive(p) => match p.as_str() {
            "byte" | "short" | "integer" | "long" => {
                let c = arrow_cast::cast(&a.slice(i, 1), &ArrowType::Int64).unwrap();
                Value::from(c.as_primitive::<Int64Type>().value(0))
            }
            "float" => {
                let v = a.as_primitive::<Float32Type>().value(i);
                float_str(if v.is_nan() {
                    "NaN".into()
                } else {
                    format!("{v:e}")
                })
            }
            "double" => {
                let v = a.as_primitive::<Float64Type>().value(i);
                float_str(if v.is_nan() {
                    "NaN".into()
                } else {
                    format!("{v:e}")
                })
            }
            "boolean" => Value::Bool(a.as_boolean().value(i)),
            "string" => Value::String(a.as_string::<i32>().value(i).to_string()),
            "binary" => {
                let b = a.as_binary::<i32>().value(i);
                Value::String(b.iter().map(|x| format!("{x:02x}")).collect())
            }
            "date" => {
                let d = a.as_primitive::<Date32Type>().value(i);
                let date = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
                    + chrono::Duration::days(d as i64);
                Value::String(date.format("%Y-%m-%d").to_string())
            }
            "timestamp" | "timestamp_ntz" => {
                assert!(matches!(
                    a.data_type(),
                    ArrowType::Timestamp(TimeUnit::Microsecond, _)
                ));
                Value::from(a.as_primitive::<TimestampMicrosecondType>().value(i))
            }
            d if d.starts_with("decimal(") => {
                Value::String(a.as_primitive::<Decimal128Type>().value_as_string(i))
            }
            other => panic!("no canonical form for {other}"),
        },
        DataType::Struct(st) => {
            let s = a.as_struct();
            Value::Array(
                st.fields
                    .iter()
                    .enumerate()
                    .map(|(j, f)| value(s.column(j), i, &f.data_type))
                    .collect(),
            )
        }
        DataType::Array(at) => {
            let l = a.as_list::<i32>();
            let v = l.value(i);
            Value::Array(
                (0..v.len())
                    .map(|j| value(&v, j, &at.element_type))
                    .collect(),
            )
        }
        DataType::Map(mt) => {
            let m = a.as_map();
            let offsets = m.value_offsets();
            let (s, e) = (offsets[i] as usize, offsets[i + 1] as usize);
            let mut pairs: Vec<(String, Value)> = (s..e)
                .map(|j| {
                    let k = value(m.keys(), j, &mt.key_type);
                    let v = value(m.values(), j, &mt.value_type);
                    (serde_json::to_string(&k).unwrap(), Value::Array(vec![k, v]))
                })
                .collect();
            pairs.sort_by(|x, y| x.0.cmp(&y.0));
            Value::Array(pairs.into_iter().map(|p| p.1).collect())
        }
    }
}

/// Canonical lines (each ending in `\n`, sorted bytewise) of `batches`, whose columns are
/// `fields` in order.
pub fn canonical_lines(batches: &[RecordBatch], fields: &[StructField]) -> Vec<String> {
    let mut lines = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let row: Vec<Value> = fields
                .iter()
                .enumerate()
                .map(|(j, f)| value(b.column(j), i, &f.data_type))
                .collect();
            let mut s = serde_json::to_string(&Value::Array(row)).unwrap();
            s.push('\n');
            lines.push(s);
        }
    }
    lines.sort();
    lines
}

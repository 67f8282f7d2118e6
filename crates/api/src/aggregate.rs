//! Grouping and the aggregate functions: `COUNT(*)`, `COUNT(col)` (non-null values),
//! `SUM` (integers as BIGINT with overflow checked, floats as DOUBLE, `decimal(p,s)` as
//! `decimal(min(38,p+10),s)` — Spark's rules), `AVG` (DOUBLE), `MIN`/`MAX` (any orderable
//! type, nulls ignored). Empty input and all-null groups give NULL, `COUNT` gives 0.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Decimal128Array, Float64Array, Int64Array, UInt32Array};
use arrow_row::{OwnedRow, RowConverter, SortField};
use arrow_schema::{DataType, SortOptions};
use arrow_select::take::take;

use crate::error::{ApiError, Result};
use crate::sql::AggFunc;

/// Row indices of each group, groups in order of first appearance. No keys: one group
/// holding every row (also when there are none, so `COUNT(*)` of nothing is 0).
pub fn groups(keys: &[ArrayRef], num_rows: usize) -> Result<Vec<Vec<u32>>> {
    if keys.is_empty() {
        return Ok(vec![(0..num_rows as u32).collect()]);
    }
    let converter = RowConverter::new(
        keys.iter()
            .map(|k| SortField::new(k.data_type().clone()))
            .collect(),
    )
    .map_err(|e| ApiError::compute("the GROUP BY keys", e))?;
    let rows = converter
        .convert_columns(keys)
        .map_err(|e| ApiError::compute("the GROUP BY keys", e))?;
    let mut index: HashMap<OwnedRow, usize> = HashMap::new();
    let mut out: Vec<Vec<u32>> = Vec::new();
    for i in 0..num_rows {
        let g = *index.entry(rows.row(i).owned()).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[g].push(i as u32);
    }
    Ok(out)
}

/// The type `SUM` returns for a column of type `t`.
pub fn sum_type(t: &DataType) -> Option<DataType> {
    Some(match t {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Null => DataType::Int64,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => DataType::Float64,
        DataType::Decimal128(p, s) => DataType::Decimal128((*p + 10).min(38), *s),
        _ => return None,
    })
}

/// The result type of `func` over a column of type `t` (`None` for `COUNT(*)`).
pub fn result_type(func: AggFunc, column: &str, t: Option<&DataType>) -> Result<DataType> {
    let numeric = |what: &str| ApiError::Column {
        column: column.to_string(),
        message: format!(
            "{what} needs a numeric column, this one is {}",
            t.map_or("-".to_string(), |t| t.to_string())
        ),
    };
    Ok(match (func, t) {
        (AggFunc::Count, _) => DataType::Int64,
        (AggFunc::Sum, Some(t)) => sum_type(t).ok_or_else(|| numeric("SUM"))?,
        (AggFunc::Avg, Some(t)) => {
            sum_type(t).ok_or_else(|| numeric("AVG"))?;
            DataType::Float64
        }
        (AggFunc::Min | AggFunc::Max, Some(t)) => t.clone(),
        (_, None) => {
            return Err(ApiError::Column {
                column: "*".into(),
                message: format!("{}(*) is not defined; name a column", func.name()),
            });
        }
    })
}

fn cast(a: &ArrayRef, to: &DataType, what: &str) -> Result<ArrayRef> {
    arrow_cast::cast::cast(a, to).map_err(|e| ApiError::compute(what, e))
}

/// `func` over `arg` (`None`: `COUNT(*)`) for each group: one value per group.
pub fn aggregate(
    func: AggFunc,
    column: &str,
    arg: Option<&ArrayRef>,
    groups: &[Vec<u32>],
) -> Result<ArrayRef> {
    let what = format!("{}({column})", func.name());
    let Some(arg) = arg else {
        let counts: Int64Array = groups.iter().map(|g| Some(g.len() as i64)).collect();
        return Ok(Arc::new(counts));
    };
    let out_type = result_type(func, column, Some(arg.data_type()))?;
    Ok(match func {
        AggFunc::Count => {
            let counts: Int64Array = groups
                .iter()
                .map(|g| Some(g.iter().filter(|&&i| arg.is_valid(i as usize)).count() as i64))
                .collect();
            Arc::new(counts)
        }
        AggFunc::Sum => {
            let values = cast(arg, &out_type, &what)?;
            match &out_type {
                DataType::Int64 => {
                    let v = values.as_primitive::<Int64Type>();
                    let sums = groups
                        .iter()
                        .map(|g| sum_checked(g, v, |a, b| a.checked_add(b)))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| ApiError::compute(&what, "the sum overflows BIGINT"))?;
                    Arc::new(Int64Array::from(sums))
                }
                DataType::Float64 => {
                    let v = values.as_primitive::<Float64Type>();
                    let sums: Float64Array = groups
                        .iter()
                        .map(|g| sum_checked(g, v, |a, b| Some(a + b)).flatten())
                        .collect();
                    Arc::new(sums)
                }
                DataType::Decimal128(p, s) => {
                    let v = values.as_primitive::<Decimal128Type>();
                    let sums = groups
                        .iter()
                        .map(|g| sum_checked(g, v, |a, b| a.checked_add(b)))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| ApiError::compute(&what, "the sum overflows"))?;
                    Arc::new(
                        Decimal128Array::from(sums)
                            .with_precision_and_scale(*p, *s)
                            .map_err(|e| ApiError::compute(&what, e))?,
                    )
                }
                other => return Err(ApiError::compute(&what, format!("no sum of {other}"))),
            }
        }
        AggFunc::Avg => {
            let values = cast(arg, &DataType::Float64, &what)?;
            let v = values.as_primitive::<Float64Type>();
            let avgs: Float64Array = groups
                .iter()
                .map(|g| {
                    let (mut sum, mut n) = (0.0, 0u64);
                    for &i in g {
                        if v.is_valid(i as usize) {
                            sum += v.value(i as usize);
                            n += 1;
                        }
                    }
                    (n > 0).then(|| sum / n as f64)
                })
                .collect();
            Arc::new(avgs)
        }
        AggFunc::Min | AggFunc::Max => {
            // the values in arrow's row format, ordered so that the wanted one is the
            // smallest and nulls come last: each group's pick is its smallest row
            let options = SortOptions {
                descending: func == AggFunc::Max,
                nulls_first: false,
            };
            let rows = RowConverter::new(vec![SortField::new_with_options(
                arg.data_type().clone(),
                options,
            )])
            .and_then(|c| c.convert_columns(std::slice::from_ref(arg)))
            .map_err(|e| ApiError::compute(&what, e))?;
            // one pick per group (an empty group picks a null row past the end)
            let picks: Vec<Option<u32>> = groups
                .iter()
                .map(|g| {
                    g.iter()
                        .copied()
                        .min_by(|a, b| rows.row(*a as usize).cmp(&rows.row(*b as usize)))
                })
                .collect();
            take(arg.as_ref(), &UInt32Array::from(picks), None)
                .map_err(|e| ApiError::compute(&what, e))?
        }
    })
}

/// The sum of the non-null values at `g`: `Some(None)` when there are none, `None` on
/// overflow.
fn sum_checked<T: arrow_array::ArrowPrimitiveType>(
    g: &[u32],
    v: &arrow_array::PrimitiveArray<T>,
    add: impl Fn(T::Native, T::Native) -> Option<T::Native>,
) -> Option<Option<T::Native>> {
    let mut acc: Option<T::Native> = None;
    for &i in g {
        if v.is_valid(i as usize) {
            let x = v.value(i as usize);
            acc = Some(match acc {
                None => x,
                Some(a) => add(a, x)?,
            });
        }
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray};

    #[test]
    fn groups_in_first_seen_order() {
        let k: ArrayRef = Arc::new(StringArray::from(vec![
            Some("b"),
            Some("a"),
            None,
            Some("b"),
            None,
        ]));
        let g = groups(&[k], 5).unwrap();
        assert_eq!(g, vec![vec![0, 3], vec![1], vec![2, 4]]);
        assert_eq!(groups(&[], 0).unwrap(), vec![Vec::<u32>::new()]);
    }

    #[test]
    fn aggregates_skip_nulls() {
        let v: ArrayRef = Arc::new(Int32Array::from(vec![Some(5), None, Some(-2), Some(7)]));
        let g = vec![vec![0, 1, 2], vec![1], vec![3]];
        let run = |f| aggregate(f, "v", Some(&v), &g).unwrap();
        assert_eq!(
            run(AggFunc::Count).as_primitive::<Int64Type>().values(),
            &[2, 0, 1]
        );
        let sum = run(AggFunc::Sum);
        assert_eq!(sum.as_primitive::<Int64Type>().value(0), 3);
        assert!(sum.is_null(1));
        let min = run(AggFunc::Min);
        let min = min.as_primitive::<arrow_array::types::Int32Type>();
        assert_eq!((min.value(0), min.is_null(1), min.value(2)), (-2, true, 7));
        let max = run(AggFunc::Max);
        assert_eq!(
            max.as_primitive::<arrow_array::types::Int32Type>().value(0),
            5
        );
        let avg = run(AggFunc::Avg);
        assert_eq!(avg.as_primitive::<Float64Type>().value(0), 1.5);
        assert!(avg.is_null(1));
        let star = aggregate(AggFunc::Count, "*", None, &g).unwrap();
        assert_eq!(star.as_primitive::<Int64Type>().values(), &[3, 1, 1]);
    }

    #[test]
    fn sum_overflow_and_types_are_reported() {
        let v: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX, 1]));
        assert!(aggregate(AggFunc::Sum, "v", Some(&v), &[vec![0, 1]]).is_err());
        let s: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        assert!(matches!(
            aggregate(AggFunc::Sum, "s", Some(&s), &[vec![0]]),
            Err(ApiError::Column { .. })
        ));
        let m = aggregate(AggFunc::Max, "s", Some(&s), &[vec![0], vec![]]).unwrap();
        assert_eq!(m.as_string::<i32>().value(0), "x");
        assert!(m.is_null(1));
        let d: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(150), Some(275), None])
                .with_precision_and_scale(5, 2)
                .unwrap(),
        );
        let sum = aggregate(AggFunc::Sum, "d", Some(&d), &[vec![0, 1, 2]]).unwrap();
        assert_eq!(sum.data_type(), &DataType::Decimal128(15, 2));
        assert_eq!(sum.as_primitive::<Decimal128Type>().value(0), 425);
    }
}

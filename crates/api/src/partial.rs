//! Partial aggregation: a query answered over a share of the rows (one split of a plan)
//! as a state that merges exactly with the other shares' states into the answer the
//! whole table gives.
//!
//! - With aggregates, the state is one row per group: the `GROUP BY` keys, then per
//!   aggregate its mergeable state — `COUNT` a count, `SUM` a sum in the result type
//!   (integers as BIGINT and decimals widened, overflow an error), `MIN`/`MAX` the value,
//!   `AVG` an exact sum (integers and decimals as `decimal(38, s)`, floats as DOUBLE) and a
//!   count. Merging groups the states again and adds or compares them.
//! - Without aggregates, the state is the share's rows that can be in the answer: its
//!   first `LIMIT` rows in `ORDER BY` order (a top-N), or all of them; merging sorts them
//!   together and cuts them again.
//!
//! The single-process answer is the merge of one share, so a merge of any partition of the
//! rows equals it (float sums up to the order of the additions).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, Decimal128Array, Float64Array, Int64Array, RecordBatch, RecordBatchOptions,
    UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};

use crate::aggregate::{aggregate, groups, result_type};
use crate::error::{ApiError, Result};
use crate::sql::{AggFunc, Item, Query};

/// A share's state (see the module docs).
#[derive(Debug, Clone)]
pub enum Partial {
    /// Aggregates: one row per group, keys then states.
    Groups(RecordBatch),
    /// No aggregates: the share's rows that can be in the answer, unprojected.
    Rows(RecordBatch),
}

/// The schema metadata key that says which kind of state an IPC stream holds.
const KIND_KEY: &str = "deltalens.partial";

impl Partial {
    /// The state's rows.
    pub fn batch(&self) -> &RecordBatch {
        match self {
            Partial::Groups(b) | Partial::Rows(b) => b,
        }
    }

    /// The state as an Arrow IPC stream (one batch; the kind in the schema's metadata
    /// under `deltalens.partial`): what a worker answers its coordinator.
    pub fn to_ipc(&self) -> Result<Vec<u8>> {
        let kind = match self {
            Partial::Groups(_) => "groups",
            Partial::Rows(_) => "rows",
        };
        let b = self.batch();
        let mut metadata = b.schema().metadata().clone();
        metadata.insert(KIND_KEY.to_string(), kind.to_string());
        let schema = Arc::new(b.schema().as_ref().clone().with_metadata(metadata));
        let encode = |e: ArrowError| ApiError::Encode {
            format: "arrow",
            message: e.to_string(),
        };
        let b = b.clone().with_schema(schema.clone()).map_err(encode)?;
        let mut out = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).map_err(encode)?;
        w.write(&b).map_err(encode)?;
        w.finish().map_err(encode)?;
        drop(w);
        Ok(out)
    }

    /// A state read back from [`Self::to_ipc`]'s bytes (a worker's answer: checked, not
    /// trusted — its kind, and at most `max_rows` rows in all).
    pub fn from_ipc(bytes: &[u8], max_rows: usize) -> Result<Partial> {
        let bad = |m: String| ApiError::compute("a split's partial answer", m);
        let reader = arrow_ipc::reader::StreamReader::try_new(bytes, None)
            .map_err(|e| bad(e.to_string()))?;
        let schema = reader.schema();
        let kind = schema.metadata().get(KIND_KEY).cloned();
        let mut batches = Vec::new();
        let mut rows = 0usize;
        for b in reader {
            let b = b.map_err(|e| bad(e.to_string()))?;
            rows = rows.saturating_add(b.num_rows());
            if rows > max_rows {
                return Err(bad(format!(
                    "more than {max_rows} rows (the limit of a partial answer)"
                )));
            }
            batches.push(b);
        }
        let mut plain = schema.as_ref().clone();
        plain.metadata.remove(KIND_KEY);
        let plain = Arc::new(plain);
        let batch = arrow_select::concat::concat_batches(&schema, &batches)
            .and_then(|b| {
                RecordBatch::try_new_with_options(
                    plain,
                    b.columns().to_vec(),
                    &RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
                )
            })
            .map_err(|e| bad(e.to_string()))?;
        match kind.as_deref() {
            Some("groups") => Ok(Partial::Groups(batch)),
            Some("rows") => Ok(Partial::Rows(batch)),
            other => Err(bad(format!("not a partial state (kind {other:?})"))),
        }
    }
}

/// The prefix of state columns' names: reserved (a table column named so cannot be a
/// group key, whose column sits beside the states).
const STATE_PREFIX: &str = "__deltalens_";

/// The name of aggregate item `i`'s state column (`n`: an average's count).
fn state_name(i: usize, n: bool) -> String {
    if n {
        format!("__deltalens_n{i}")
    } else {
        format!("__deltalens_s{i}")
    }
}

fn column<'b>(batch: &'b RecordBatch, name: &str) -> Result<&'b ArrayRef> {
    batch.column_by_name(name).ok_or_else(|| ApiError::Column {
        column: name.to_string(),
        message: "no such column in the rows read".into(),
    })
}

fn cast(a: &ArrayRef, to: &DataType, what: &str) -> Result<ArrayRef> {
    arrow_cast::cast::cast(a, to).map_err(|e| ApiError::compute(what, e))
}

/// The exact sum type of an average's values: integers and decimals as `decimal(38, s)`,
/// floats as DOUBLE.
fn avg_sum_type(t: &DataType) -> DataType {
    match t {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => DataType::Float64,
        DataType::Decimal128(_, s) => DataType::Decimal128(38, *s),
        _ => DataType::Decimal128(38, 0),
    }
}

/// The rows of `batch` in groups by `q`'s GROUP BY keys (first appearance order), and
/// each key's value per group (its first row's).
fn grouped(q: &Query, batch: &RecordBatch) -> Result<(Vec<Vec<u32>>, Vec<ArrayRef>)> {
    let keys = q
        .group_by
        .iter()
        .map(|g| column(batch, g).cloned())
        .collect::<Result<Vec<_>>>()?;
    let groups = groups(&keys, batch.num_rows())?;
    let firsts = UInt32Array::from(
        groups
            .iter()
            .map(|g| g.first().copied().unwrap_or(0))
            .collect::<Vec<_>>(),
    );
    let values = q
        .group_by
        .iter()
        .zip(&keys)
        .map(|(name, k)| {
            arrow_select::take::take(k.as_ref(), &firsts, None)
                .map_err(|e| ApiError::compute(name.clone(), e))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((groups, values))
}

/// `batch` with its rows in groups: the group keys (each group's first row), then each
/// aggregate's state over the group.
pub(crate) fn states(q: &Query, batch: &RecordBatch) -> Result<RecordBatch> {
    if let Some(g) = q.group_by.iter().find(|g| g.starts_with(STATE_PREFIX)) {
        return Err(ApiError::Column {
            column: g.clone(),
            message: format!(
                "names starting with {STATE_PREFIX} are reserved for aggregate states: group by another column"
            ),
        });
    }
    let (groups, mut arrays) = grouped(q, batch)?;
    let mut fields = Vec::new();
    let schema = batch.schema();
    for (name, k) in q.group_by.iter().zip(&arrays) {
        let nullable = schema
            .field_with_name(name)
            .map(|f| f.is_nullable())
            .unwrap_or(true);
        fields.push(Field::new(name, k.data_type().clone(), nullable));
    }
    for (i, item) in q.items.iter().enumerate() {
        let Item::Agg { func, arg, .. } = item else {
            continue;
        };
        let a = arg.as_deref().map(|c| column(batch, c)).transpose()?;
        let col = arg.as_deref().unwrap_or("*");
        // the result's type checks the argument (SUM and AVG of text are refused)
        result_type(*func, col, a.map(|a| a.data_type()))?;
        let state = match (func, a) {
            (AggFunc::Avg, Some(a)) => {
                let sum_type = avg_sum_type(a.data_type());
                let exact = cast(a, &sum_type, &format!("AVG({col})"))?;
                let n = aggregate(AggFunc::Count, col, Some(a), &groups)?;
                fields.push(Field::new(state_name(i, true), DataType::Int64, true));
                arrays.push(n);
                sum_same_type(&exact, &groups, &format!("AVG({col})"))?
            }
            _ => aggregate(*func, col, a, &groups)?,
        };
        fields.push(Field::new(
            state_name(i, false),
            state.data_type().clone(),
            true,
        ));
        arrays.push(state);
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(groups.len())),
    )
    .map_err(|e| ApiError::compute("the aggregate states", e))
}

/// The sums of `values` per group in their own type (BIGINT and decimals checked for
/// overflow, DOUBLE added); a group without values sums to NULL.
fn sum_same_type(values: &ArrayRef, groups: &[Vec<u32>], what: &str) -> Result<ArrayRef> {
    fn each<T: arrow_array::ArrowPrimitiveType>(
        v: &arrow_array::PrimitiveArray<T>,
        groups: &[Vec<u32>],
        add: impl Fn(T::Native, T::Native) -> Option<T::Native>,
    ) -> Option<Vec<Option<T::Native>>> {
        groups
            .iter()
            .map(|g| {
                let mut acc = None;
                for &i in g {
                    let i = i as usize;
                    if v.is_valid(i) {
                        acc = Some(match acc {
                            None => v.value(i),
                            Some(a) => add(a, v.value(i))?,
                        });
                    }
                }
                Some(acc)
            })
            .collect()
    }
    let overflow = || ApiError::compute(what, "the sum overflows");
    Ok(match values.data_type() {
        DataType::Int64 => {
            let v = each(values.as_primitive::<Int64Type>(), groups, i64::checked_add)
                .ok_or_else(overflow)?;
            Arc::new(Int64Array::from(v))
        }
        DataType::Float64 => {
            let v = each(values.as_primitive::<Float64Type>(), groups, |a, b| {
                Some(a + b)
            })
            .ok_or_else(overflow)?;
            Arc::new(Float64Array::from(v))
        }
        DataType::Decimal128(p, s) => {
            let v = each(
                values.as_primitive::<Decimal128Type>(),
                groups,
                i128::checked_add,
            )
            .ok_or_else(overflow)?;
            Arc::new(
                Decimal128Array::from(v)
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| ApiError::compute(what, e))?,
            )
        }
        other => {
            return Err(ApiError::compute(what, format!("no sum of {other}")));
        }
    })
}

/// Refuse `parts` unless they all have the first one's columns (names and types): states
/// of another query or another build must not meet in a merge.
pub(crate) fn same_schema(parts: &[RecordBatch]) -> Result<()> {
    let Some(first) = parts.first() else {
        return Ok(());
    };
    let fields = |b: &RecordBatch| {
        b.schema()
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect::<Vec<_>>()
    };
    let want = fields(first);
    match parts.iter().position(|p| fields(p) != want) {
        None => Ok(()),
        Some(i) => Err(ApiError::compute(
            "the merge",
            format!(
                "partial answer {i} has other columns than the first (another query or build?)"
            ),
        )),
    }
}

/// States of several shares merged into one row per group (the keys' first appearance
/// in `parts`' order): counts and sums added, minima and maxima compared.
pub(crate) fn merge_states(q: &Query, parts: &[RecordBatch]) -> Result<RecordBatch> {
    let Some(first) = parts.first() else {
        return Err(ApiError::compute("the merge", "no partial states to merge"));
    };
    let schema = first.schema();
    same_schema(parts)?;
    let all = arrow_select::concat::concat_batches(&schema, parts)
        .map_err(|e| ApiError::compute("the partial states (of another query?)", e))?;
    let (groups, mut arrays) = grouped(q, &all)?;
    for (i, item) in q.items.iter().enumerate() {
        let Item::Agg { func, arg, .. } = item else {
            continue;
        };
        let what = format!("{}({})", func.name(), arg.as_deref().unwrap_or("*"));
        let s = column(&all, &state_name(i, false))?;
        if *func == AggFunc::Avg {
            arrays.push(sum_same_type(
                column(&all, &state_name(i, true))?,
                &groups,
                &what,
            )?);
        }
        arrays.push(match func {
            AggFunc::Count | AggFunc::Sum | AggFunc::Avg => sum_same_type(s, &groups, &what)?,
            AggFunc::Min | AggFunc::Max => aggregate(*func, &what, Some(s), &groups)?,
        });
    }
    RecordBatch::try_new_with_options(
        schema,
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(groups.len())),
    )
    .map_err(|e| ApiError::compute("the merged states", e))
}

/// The answer's columns from merged states: the keys, each aggregate's value (a count of
/// a group without rows is 0; an average is its exact sum over its count).
pub(crate) fn finish(q: &Query, states: &RecordBatch) -> Result<RecordBatch> {
    let schema = states.schema();
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (i, item) in q.items.iter().enumerate() {
        let name = item.output_name().unwrap_or_default();
        match item {
            Item::Column { name: col, .. } => {
                if !q.group_by.contains(col) {
                    return Err(ApiError::Column {
                        column: col.clone(),
                        message: "must be in GROUP BY or inside an aggregate".into(),
                    });
                }
                let a = column(states, col)?;
                let nullable = schema
                    .field_with_name(col)
                    .map(|f| f.is_nullable())
                    .unwrap_or(true);
                fields.push(Field::new(name, a.data_type().clone(), nullable));
                arrays.push(a.clone());
            }
            Item::Agg { func, .. } => {
                let s = column(states, &state_name(i, false))?;
                // (the states hold the result's type: checked when they were made)
                let t = match func {
                    AggFunc::Count => DataType::Int64,
                    AggFunc::Avg => DataType::Float64,
                    AggFunc::Sum | AggFunc::Min | AggFunc::Max => s.data_type().clone(),
                };
                let value = match func {
                    AggFunc::Avg => average(s, column(states, &state_name(i, true))?)?,
                    // a count over no rows is 0, not NULL
                    AggFunc::Count => Arc::new(Int64Array::from_iter(
                        int64(s, &name)?.iter().map(|c| Some(c.unwrap_or(0))),
                    )),
                    _ => s.clone(),
                };
                fields.push(Field::new(name, t, true));
                arrays.push(value);
            }
            Item::Star => {}
        }
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(states.num_rows())),
    )
    .map_err(|e| ApiError::compute("the aggregates", e))
}

/// `a` as BIGINT values, or an error naming `what` (a state of another type: not ours).
fn int64<'a>(a: &'a ArrayRef, what: &str) -> Result<&'a arrow_array::Int64Array> {
    a.as_primitive_opt::<Int64Type>().ok_or_else(|| {
        ApiError::compute(
            what.to_string(),
            format!("a count state of type {} (another build?)", a.data_type()),
        )
    })
}

/// `sum / n` as DOUBLE per row (NULL where no value was counted).
fn average(sum: &ArrayRef, n: &ArrayRef) -> Result<ArrayRef> {
    let n = int64(n, "AVG")?;
    let value = |i: usize| -> Option<f64> {
        if sum.is_null(i) {
            return None;
        }
        match sum.data_type() {
            DataType::Float64 => Some(sum.as_primitive::<Float64Type>().value(i)),
            DataType::Decimal128(_, s) => {
                let v = sum.as_primitive::<Decimal128Type>().value(i);
                Some(v as f64 / 10f64.powi(i32::from(*s)))
            }
            _ => None,
        }
    };
    let out: Float64Array = (0..sum.len())
        .map(|i| {
            let count = if n.is_valid(i) { n.value(i) } else { 0 };
            (count > 0)
                .then(|| value(i).map(|v| v / count as f64))
                .flatten()
        })
        .collect();
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, StringArray};

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    /// A table column named like a state column: an error, not a panic or a wrong count.
    #[test]
    fn a_group_key_named_like_a_state_is_refused() {
        let q = crate::sql::parse_sql(
            "SELECT `__deltalens_s1`, COUNT(*) FROM 't' GROUP BY `__deltalens_s1`",
        )
        .unwrap();
        let b = batch(vec![(
            "__deltalens_s1",
            Arc::new(StringArray::from(vec!["a", "b", "a"])) as ArrayRef,
        )]);
        let e = states(&q, &b).and_then(|s| finish(&q, &s)).unwrap_err();
        assert!(e.to_string().contains("__deltalens_"), "{e}");
    }

    /// States of another query or build (other columns, other types): an error naming
    /// the merge, never a panic.
    #[test]
    fn states_that_do_not_fit_the_query_are_refused() {
        let q = crate::sql::parse_sql("SELECT COUNT(*), MAX(x) FROM 't'").unwrap();
        let good = states(
            &q,
            &batch(vec![(
                "x",
                Arc::new(Float64Array::from(vec![1.0, 2.0])) as ArrayRef,
            )]),
        )
        .unwrap();
        // fewer columns
        let short = batch(vec![(
            "__deltalens_s0",
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
        )]);
        assert!(merge_states(&q, &[good.clone(), short.clone()]).is_err());
        assert!(merge_states(&q, &[short, good.clone()]).is_err());
        // a count that is not a count
        let wrong = batch(vec![
            (
                "__deltalens_s0",
                Arc::new(Float64Array::from(vec![1.0])) as ArrayRef,
            ),
            (
                "__deltalens_s1",
                Arc::new(Float64Array::from(vec![1.0])) as ArrayRef,
            ),
        ]);
        assert!(finish(&q, &wrong).is_err());
        assert!(merge_states(&q, &[good, wrong]).is_err());
    }
}

//! Evaluating a [`Predicate`] on a record batch with Arrow compute kernels (SQL
//! semantics: null is not true); literals are cast to their column's type.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Datum, RecordBatch, Scalar};
use arrow_schema::DataType as ArrowType;

use super::{CmpOp, Literal, Predicate, invalid};
use crate::error::{Error, Result};
use crate::text_value;

impl Predicate {
    /// Evaluate on `batch`: true where the row passes (SQL semantics: null is not true).
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let n = batch.num_rows();
        Ok(match self {
            Predicate::Const(b) => BooleanArray::from(vec![*b; n]),
            Predicate::Cmp { column, op, value } => {
                let a = resolve(batch, column)?;
                compare(
                    &a,
                    *op,
                    &literal_scalar(value, a.data_type(), column)?,
                    column,
                )?
            }
            Predicate::IsNull { column, negated } => {
                let a = resolve(batch, column)?;
                let r = if *negated {
                    arrow_arith::boolean::is_not_null(&a)
                } else {
                    arrow_arith::boolean::is_null(&a)
                };
                r.map_err(|e| kernel(column, e))?
            }
            Predicate::In {
                column,
                values,
                negated,
            } => {
                let a = resolve(batch, column)?;
                let mut acc = BooleanArray::from(vec![false; n]);
                for v in values {
                    let eq = compare(
                        &a,
                        CmpOp::Eq,
                        &literal_scalar(v, a.data_type(), column)?,
                        column,
                    )?;
                    acc = arrow_arith::boolean::or_kleene(&acc, &eq)
                        .map_err(|e| kernel(column, e))?;
                }
                if *negated {
                    arrow_arith::boolean::not(&acc).map_err(|e| kernel(column, e))?
                } else {
                    acc
                }
            }
            Predicate::Between {
                column,
                low,
                high,
                negated,
            } => {
                let a = resolve(batch, column)?;
                let ge = compare(
                    &a,
                    CmpOp::GtEq,
                    &literal_scalar(low, a.data_type(), column)?,
                    column,
                )?;
                let le = compare(
                    &a,
                    CmpOp::LtEq,
                    &literal_scalar(high, a.data_type(), column)?,
                    column,
                )?;
                let r =
                    arrow_arith::boolean::and_kleene(&ge, &le).map_err(|e| kernel(column, e))?;
                if *negated {
                    arrow_arith::boolean::not(&r).map_err(|e| kernel(column, e))?
                } else {
                    r
                }
            }
            Predicate::Like {
                column,
                pattern,
                negated,
                case_insensitive,
            } => {
                let a = resolve(batch, column)?;
                let compiled = super::like::LikePattern::new(pattern, *case_insensitive);
                let Some(r) = super::like::like(a.as_ref(), &compiled) else {
                    return Err(invalid(format!(
                        "LIKE needs a string column, but {} is {}",
                        column.join("."),
                        a.data_type()
                    )));
                };
                if *negated {
                    arrow_arith::boolean::not(&r).map_err(|e| kernel(column, e))?
                } else {
                    r
                }
            }
            Predicate::And(x, y) => {
                arrow_arith::boolean::and_kleene(&x.evaluate(batch)?, &y.evaluate(batch)?)
                    .map_err(|e| invalid(e.to_string()))?
            }
            Predicate::Or(x, y) => {
                arrow_arith::boolean::or_kleene(&x.evaluate(batch)?, &y.evaluate(batch)?)
                    .map_err(|e| invalid(e.to_string()))?
            }
            Predicate::Not(x) => arrow_arith::boolean::not(&x.evaluate(batch)?)
                .map_err(|e| invalid(e.to_string()))?,
        })
    }
}

fn kernel(column: &[String], e: impl std::fmt::Display) -> Error {
    invalid(format!(
        "cannot evaluate the filter on {}: {e}",
        column.join(".")
    ))
}

/// The array of a column path in `batch` (case-insensitive names).
pub fn resolve(batch: &RecordBatch, path: &[String]) -> Result<ArrayRef> {
    let schema = batch.schema();
    let unknown = |name: &str, among: Vec<String>| {
        invalid(format!(
            "unknown column {name:?} in filter; available: {}",
            among.join(", ")
        ))
    };
    let (first, rest) = path
        .split_first()
        .ok_or_else(|| invalid("empty column name"))?;
    let idx = schema
        .fields()
        .iter()
        .position(|f| f.name() == first)
        .or_else(|| {
            schema
                .fields()
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(first))
        })
        .ok_or_else(|| {
            unknown(
                first,
                schema.fields().iter().map(|f| f.name().clone()).collect(),
            )
        })?;
    let mut array = batch.column(idx).clone();
    for part in rest {
        let s = array.as_struct_opt().ok_or_else(|| {
            invalid(format!(
                "{} is not a struct: cannot read field {part:?}",
                path.join(".")
            ))
        })?;
        let names: Vec<String> = s.fields().iter().map(|f| f.name().clone()).collect();
        let i = names
            .iter()
            .position(|n| n == part)
            .or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(part)))
            .ok_or_else(|| unknown(&path.join("."), names.clone()))?;
        array = s.column(i).clone();
    }
    Ok(array)
}

/// A literal as a one-element array of the column's type.
pub fn literal_array(value: &Literal, ty: &ArrowType, column: &[String]) -> Result<ArrayRef> {
    let Some(text) = value.text() else {
        return Ok(arrow_array::new_null_array(ty, 1));
    };
    let mismatch = || {
        invalid(format!(
            "type mismatch: column {} is {}, it cannot be compared with {value}",
            column.join("."),
            ty
        ))
    };
    if matches!(
        ty,
        ArrowType::Struct(_) | ArrowType::List(_) | ArrowType::Map(..)
    ) {
        return Err(mismatch());
    }
    if matches!(value, Literal::Str(_)) && is_numeric(ty)
        || matches!(value, Literal::Number(_)) && is_temporal(ty)
    {
        // '5' = int column is accepted when it parses; dates must be quoted
        if matches!(value, Literal::Number(_)) {
            return Err(mismatch());
        }
    }
    if matches!(value, Literal::Bool(_)) != matches!(ty, ArrowType::Boolean) {
        return Err(mismatch());
    }
    text_value::one_row(&text, ty).map_err(|why| {
        invalid(format!(
            "type mismatch: column {} is {ty}, it cannot be compared with {value} ({why})",
            column.join("."),
        ))
    })
}

fn literal_scalar(value: &Literal, ty: &ArrowType, column: &[String]) -> Result<Scalar<ArrayRef>> {
    Ok(Scalar::new(literal_array(value, ty, column)?))
}

fn is_numeric(t: &ArrowType) -> bool {
    t.is_numeric()
}

fn is_temporal(t: &ArrowType) -> bool {
    t.is_temporal()
}

/// `a op b` element-wise.
pub fn compare(a: &dyn Datum, op: CmpOp, b: &dyn Datum, column: &[String]) -> Result<BooleanArray> {
    use arrow_ord::cmp;
    let r = match op {
        CmpOp::Eq => cmp::eq(a, b),
        CmpOp::NotEq => cmp::neq(a, b),
        CmpOp::Lt => cmp::lt(a, b),
        CmpOp::LtEq => cmp::lt_eq(a, b),
        CmpOp::Gt => cmp::gt(a, b),
        CmpOp::GtEq => cmp::gt_eq(a, b),
    };
    r.map_err(|e| kernel(column, e))
}

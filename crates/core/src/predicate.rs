//! Row filters: a SQL boolean expression (`price > 10 AND brand = 'nars' OR event_date IS
//! NULL`, `IN`, `BETWEEN`, `LIKE`, `NOT`) parsed with `sqlparser` and evaluated with Arrow
//! compute kernels. Comparisons are between a column (top-level or `struct.field`) and a
//! literal; literals take the column's type.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{Array, ArrayRef, BooleanArray, Datum, RecordBatch, Scalar, StringArray};
use arrow_schema::{DataType as ArrowType, Schema, TimeUnit};
use sqlparser::ast::{self, BinaryOperator, Expr as SqlExpr, UnaryOperator, Value};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use crate::error::{Error, Result};

/// A literal value of a filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    /// A number as written (integer, decimal or float text).
    Number(String),
    Str(String),
}

impl Literal {
    fn text(&self) -> Option<String> {
        match self {
            Literal::Null => None,
            Literal::Bool(b) => Some(b.to_string()),
            Literal::Number(n) => Some(n.clone()),
            Literal::Str(s) => Some(s.clone()),
        }
    }
}

impl std::fmt::Display for Literal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Literal::Null => write!(f, "NULL"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Number(n) => write!(f, "{n}"),
            Literal::Str(s) => write!(f, "'{s}'"),
        }
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
}

impl CmpOp {
    fn flip(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            other => other,
        }
    }

    /// The operator of `NOT (a op b)`.
    pub fn negate(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::NotEq,
            CmpOp::NotEq => CmpOp::Eq,
            CmpOp::Lt => CmpOp::GtEq,
            CmpOp::LtEq => CmpOp::Gt,
            CmpOp::Gt => CmpOp::LtEq,
            CmpOp::GtEq => CmpOp::Lt,
        }
    }
}

/// A filter over the table's columns.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    Const(bool),
    Cmp {
        column: Vec<String>,
        op: CmpOp,
        value: Literal,
    },
    IsNull {
        column: Vec<String>,
        negated: bool,
    },
    In {
        column: Vec<String>,
        values: Vec<Literal>,
        negated: bool,
    },
    Between {
        column: Vec<String>,
        low: Literal,
        high: Literal,
        negated: bool,
    },
    Like {
        column: Vec<String>,
        pattern: String,
        negated: bool,
        case_insensitive: bool,
    },
    And(Box<Predicate>, Box<Predicate>),
    Or(Box<Predicate>, Box<Predicate>),
    Not(Box<Predicate>),
}

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidArgument {
        message: message.into(),
    }
}

fn column_of(e: &SqlExpr) -> Option<Vec<String>> {
    match e {
        SqlExpr::Identifier(i) => Some(vec![i.value.clone()]),
        SqlExpr::CompoundIdentifier(parts) => Some(parts.iter().map(|i| i.value.clone()).collect()),
        SqlExpr::Nested(inner) => column_of(inner),
        _ => None,
    }
}

fn literal_of(e: &SqlExpr) -> Option<Literal> {
    match e {
        SqlExpr::Value(v) => match &v.value {
            Value::Null => Some(Literal::Null),
            Value::Boolean(b) => Some(Literal::Bool(*b)),
            Value::Number(n, _) => Some(Literal::Number(n.to_string())),
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(Literal::Str(s.clone()))
            }
            _ => None,
        },
        SqlExpr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal_of(expr)? {
            Literal::Number(n) => Some(Literal::Number(format!("-{n}"))),
            _ => None,
        },
        SqlExpr::UnaryOp {
            op: UnaryOperator::Plus,
            expr,
        } => literal_of(expr),
        SqlExpr::TypedString(t) => match &t.value.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(Literal::Str(s.clone()))
            }
            _ => None,
        },
        SqlExpr::Nested(inner) => literal_of(inner),
        _ => None,
    }
}

fn need_column(e: &SqlExpr, ctx: &str) -> Result<Vec<String>> {
    column_of(e).ok_or_else(|| invalid(format!("expected a column name in {ctx}, found `{e}`")))
}

fn need_literal(e: &SqlExpr, ctx: &str) -> Result<Literal> {
    literal_of(e).ok_or_else(|| invalid(format!("expected a literal value in {ctx}, found `{e}`")))
}

fn convert(e: &SqlExpr) -> Result<Predicate> {
    Ok(match e {
        SqlExpr::Nested(inner) => convert(inner)?,
        SqlExpr::Value(v) if matches!(v.value, Value::Boolean(_)) => {
            Predicate::Const(matches!(v.value, Value::Boolean(true)))
        }
        SqlExpr::Identifier(_) | SqlExpr::CompoundIdentifier(_) => Predicate::Cmp {
            column: need_column(e, "a condition")?,
            op: CmpOp::Eq,
            value: Literal::Bool(true),
        },
        SqlExpr::BinaryOp { left, op, right } => match op {
            BinaryOperator::And => {
                Predicate::And(Box::new(convert(left)?), Box::new(convert(right)?))
            }
            BinaryOperator::Or => {
                Predicate::Or(Box::new(convert(left)?), Box::new(convert(right)?))
            }
            BinaryOperator::Eq
            | BinaryOperator::NotEq
            | BinaryOperator::Lt
            | BinaryOperator::LtEq
            | BinaryOperator::Gt
            | BinaryOperator::GtEq => {
                let cmp = match op {
                    BinaryOperator::Eq => CmpOp::Eq,
                    BinaryOperator::NotEq => CmpOp::NotEq,
                    BinaryOperator::Lt => CmpOp::Lt,
                    BinaryOperator::LtEq => CmpOp::LtEq,
                    BinaryOperator::Gt => CmpOp::Gt,
                    _ => CmpOp::GtEq,
                };
                match (column_of(left), column_of(right)) {
                    (Some(column), None) => Predicate::Cmp {
                        column,
                        op: cmp,
                        value: need_literal(right, "a comparison")?,
                    },
                    (None, Some(column)) => Predicate::Cmp {
                        column,
                        op: cmp.flip(),
                        value: need_literal(left, "a comparison")?,
                    },
                    _ => return Err(invalid(format!("`{e}` must compare a column with a value"))),
                }
            }
            other => {
                return Err(invalid(format!(
                    "operator {other} is not supported in filters"
                )));
            }
        },
        SqlExpr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } => Predicate::Not(Box::new(convert(expr)?)),
        SqlExpr::IsNull(x) => Predicate::IsNull {
            column: need_column(x, "IS NULL")?,
            negated: false,
        },
        SqlExpr::IsNotNull(x) => Predicate::IsNull {
            column: need_column(x, "IS NOT NULL")?,
            negated: true,
        },
        SqlExpr::In {
            expr,
            target: ast::InTarget::List(list),
            negated,
            ..
        } => Predicate::In {
            column: need_column(expr, "IN")?,
            values: list
                .iter()
                .map(|v| need_literal(v, "IN"))
                .collect::<Result<_>>()?,
            negated: *negated,
        },
        SqlExpr::Between {
            expr,
            negated,
            low,
            high,
        } => Predicate::Between {
            column: need_column(expr, "BETWEEN")?,
            low: need_literal(low, "BETWEEN")?,
            high: need_literal(high, "BETWEEN")?,
            negated: *negated,
        },
        SqlExpr::Like {
            negated,
            expr,
            pattern,
            escape_char: None,
            any: false,
        }
        | SqlExpr::ILike {
            negated,
            expr,
            pattern,
            escape_char: None,
            any: false,
        } => Predicate::Like {
            column: need_column(expr, "LIKE")?,
            pattern: match need_literal(pattern, "LIKE")? {
                Literal::Str(s) => s,
                other => {
                    return Err(invalid(format!(
                        "LIKE needs a string pattern, found {other}"
                    )));
                }
            },
            negated: *negated,
            case_insensitive: matches!(e, SqlExpr::ILike { .. }),
        },
        other => return Err(invalid(format!("`{other}` is not supported in filters"))),
    })
}

impl Predicate {
    /// Parse a SQL boolean expression.
    pub fn parse(sql: &str) -> Result<Predicate> {
        let expr = Parser::new(&GenericDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| invalid(format!("cannot parse filter {sql:?}: {e}")))?;
        convert(&expr)
    }

    /// Convert an expression already parsed by `sqlparser` (a query's `WHERE`).
    pub fn from_sql_expr(expr: &SqlExpr) -> Result<Predicate> {
        convert(expr)
    }

    /// Every column path the predicate reads.
    pub fn columns(&self) -> Vec<&[String]> {
        let mut out = Vec::new();
        self.visit_columns(&mut |c| out.push(c));
        out
    }

    fn visit_columns<'a>(&'a self, f: &mut dyn FnMut(&'a [String])) {
        match self {
            Predicate::Const(_) => {}
            Predicate::Cmp { column, .. }
            | Predicate::IsNull { column, .. }
            | Predicate::In { column, .. }
            | Predicate::Between { column, .. }
            | Predicate::Like { column, .. } => f(column),
            Predicate::And(a, b) | Predicate::Or(a, b) => {
                a.visit_columns(f);
                b.visit_columns(f);
            }
            Predicate::Not(a) => a.visit_columns(f),
        }
    }

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
                let compiled = crate::like::LikePattern::new(pattern, *case_insensitive);
                let Some(r) = crate::like::like(a.as_ref(), &compiled) else {
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

    /// Check columns and literal types against `schema` without reading data.
    pub fn validate(&self, schema: &Arc<Schema>) -> Result<()> {
        self.evaluate(&RecordBatch::new_empty(schema.clone()))
            .map(|_| ())
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
    let s: ArrayRef = Arc::new(StringArray::from(vec![text.as_str()]));
    let opts = arrow_cast::CastOptions {
        safe: false,
        ..Default::default()
    };
    match ty {
        ArrowType::Timestamp(unit, Some(tz)) => {
            let naive =
                arrow_cast::cast_with_options(&s, &ArrowType::Timestamp(*unit, None), &opts)
                    .map_err(|_| mismatch())?;
            let us = arrow_cast::cast(&naive, &ArrowType::Timestamp(TimeUnit::Microsecond, None))
                .map_err(|_| mismatch())?;
            let us = us
                .as_primitive::<TimestampMicrosecondType>()
                .clone()
                .with_timezone(tz.clone());
            arrow_cast::cast(&us, ty).map_err(|_| mismatch())
        }
        ArrowType::Binary | ArrowType::LargeBinary => {
            arrow_cast::cast_with_options(&s, ty, &opts).map_err(|_| mismatch())
        }
        _ => arrow_cast::cast_with_options(&s, ty, &opts).map_err(|_| mismatch()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Date32Array, Float64Array, Int64Array};
    use arrow_schema::Field;

    fn batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("price", ArrowType::Float64, true),
            Field::new("brand", ArrowType::Utf8, true),
            Field::new("event_date", ArrowType::Date32, true),
            Field::new("id", ArrowType::Int64, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Float64Array::from(vec![
                    Some(5.0),
                    Some(12.5),
                    None,
                    Some(20.0),
                ])),
                Arc::new(StringArray::from(vec![
                    Some("nars"),
                    Some("Dior"),
                    Some("nars"),
                    None,
                ])),
                Arc::new(Date32Array::from(vec![
                    Some(19723),
                    None,
                    Some(19724),
                    Some(19725),
                ])),
                Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
            ],
        )
        .unwrap()
    }

    fn rows(sql: &str) -> Vec<i64> {
        let b = batch();
        let mask = Predicate::parse(sql).unwrap().evaluate(&b).unwrap();
        let f = arrow_select::filter::filter_record_batch(&b, &mask).unwrap();
        f.column(3)
            .as_primitive::<arrow_array::types::Int64Type>()
            .values()
            .to_vec()
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn evaluates_sql() {
        assert_eq!(
            rows("price > 10 AND brand = 'nars' OR event_date IS NULL"),
            [2]
        );
        assert_eq!(rows("price > 10"), [2, 4]);
        assert_eq!(rows("10 < price"), [2, 4]);
        assert_eq!(rows("brand IN ('nars', 'x')"), [1, 3]);
        assert_eq!(rows("brand NOT IN ('nars')"), [2]);
        assert_eq!(rows("price BETWEEN 5 AND 12.5"), [1, 2]);
        assert_eq!(rows("price NOT BETWEEN 5 AND 12.5"), [4]);
        assert_eq!(rows("brand LIKE 'na%'"), [1, 3]);
        assert_eq!(rows("brand ILIKE 'DI%'"), [2]);
        assert_eq!(rows("NOT (brand = 'nars')"), [2]);
        assert_eq!(rows("event_date >= '2024-01-02'"), [3, 4]);
        assert_eq!(rows("event_date = DATE '2024-01-01'"), [1]);
        assert_eq!(rows("brand IS NOT NULL AND id <> 1"), [2, 3]);
        assert_eq!(rows("price = NULL"), Vec::<i64>::new());
        assert_eq!(rows("id = -1 OR id = +4"), [4]);
        assert_eq!(rows("true"), [1, 2, 3, 4]);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn errors_name_the_column() {
        let schema = batch().schema();
        let e = Predicate::parse("nope = 1")
            .unwrap()
            .validate(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("unknown column \"nope\""), "{e}");
        let e = Predicate::parse("price = 'abc'")
            .unwrap()
            .validate(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("column price is Float64"), "{e}");
        let e = Predicate::parse("event_date = 5")
            .unwrap()
            .validate(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("event_date"), "{e}");
        let e = Predicate::parse("id LIKE 'a%'")
            .unwrap()
            .validate(&schema)
            .unwrap_err();
        assert!(e.to_string().contains("LIKE needs a string column"), "{e}");
        assert!(Predicate::parse("price >").is_err());
        assert!(Predicate::parse("price = brand").is_err());
        assert!(Predicate::parse("price + 1 > 2").is_err());
    }
}

//! SQL → [`Predicate`]: a boolean expression parsed by `sqlparser` (a query's `WHERE`, in
//! deltalens-api) becomes a predicate of column-versus-literal comparisons; anything else is
//! an error naming what is not supported. A filter's text is parsed by [`super::parse`]
//! (the same grammar without `sqlparser`, whose code the explorer then leaves out).

use sqlparser::ast::{self, BinaryOperator, Expr as SqlExpr, UnaryOperator, Value};

use super::{CmpOp, Literal, Predicate, invalid};
use crate::error::Result;

impl Predicate {
    /// Convert an expression already parsed by `sqlparser` (a query's `WHERE`).
    pub fn from_sql_expr(expr: &SqlExpr) -> Result<Predicate> {
        convert(expr)
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

//! DataFusion filters as deltalens predicates, for pruning files and row groups by
//! partition values and statistics.
//!
//! Filters are pushed down as *inexact*: DataFusion still applies each one above the
//! scan, so a pushed predicate may be weaker than the filter but never stronger. Under
//! `AND`, a side that does not convert is dropped (weaker); under `NOT` the inner filter
//! must convert exactly. Comparisons are between a bare column and a literal whose value
//! reads the same in both engines (integers, decimals, finite floats, strings, booleans,
//! dates); anything else (casts, functions, timestamps with time zones, `ILIKE`) stays
//! with DataFusion. A predicate is pushed only if its text reads back to itself (that is how
//! it travels in a shipped plan) within the parser's limits.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator, expr::InList};
use deltalens_core::predicate::{CmpOp, Literal, Predicate};

fn literal(v: &ScalarValue) -> Option<Literal> {
    use ScalarValue as S;
    Some(match v {
        S::Boolean(Some(b)) => Literal::Bool(*b),
        S::Int8(Some(_))
        | S::Int16(Some(_))
        | S::Int32(Some(_))
        | S::Int64(Some(_))
        | S::UInt8(Some(_))
        | S::UInt16(Some(_))
        | S::UInt32(Some(_))
        | S::UInt64(Some(_))
        | S::Decimal128(Some(_), _, _) => Literal::Number(v.to_string()),
        S::Float32(Some(f)) if f.is_finite() => Literal::Number(format!("{f:?}")),
        S::Float64(Some(f)) if f.is_finite() => Literal::Number(format!("{f:?}")),
        S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s)) => Literal::Str(s.clone()),
        // (a date beyond chrono's range prints as nothing)
        S::Date32(Some(_)) if v.to_string().len() >= 10 => Literal::Str(v.to_string()),
        _ => return None,
    })
}

fn column(e: &Expr) -> Option<Vec<String>> {
    match e {
        Expr::Column(c) => Some(vec![c.name.clone()]),
        _ => None,
    }
}

fn lit(e: &Expr) -> Option<Literal> {
    match e {
        Expr::Literal(v, _) => literal(v),
        _ => None,
    }
}

fn cmp(op: Operator) -> Option<CmpOp> {
    Some(match op {
        Operator::Eq => CmpOp::Eq,
        Operator::NotEq => CmpOp::NotEq,
        Operator::Lt => CmpOp::Lt,
        Operator::LtEq => CmpOp::LtEq,
        Operator::Gt => CmpOp::Gt,
        Operator::GtEq => CmpOp::GtEq,
        _ => return None,
    })
}

fn binary(b: &BinaryExpr, exact: bool) -> Option<Predicate> {
    let (l, r) = (convert(&b.left, exact), convert(&b.right, exact));
    match b.op {
        Operator::And => match (l, r) {
            (Some(l), Some(r)) => Some(Predicate::And(Box::new(l), Box::new(r))),
            (Some(one), None) | (None, Some(one)) if !exact => Some(one),
            _ => None,
        },
        Operator::Or => Some(Predicate::Or(Box::new(l?), Box::new(r?))),
        op => {
            let op = cmp(op)?;
            if let (Some(column), Some(value)) = (column(&b.left), lit(&b.right)) {
                Some(Predicate::Cmp { column, op, value })
            } else {
                let (column, value) = (column(&b.right)?, lit(&b.left)?);
                Some(Predicate::Cmp {
                    column,
                    op: op.flip(),
                    value,
                })
            }
        }
    }
}

fn convert(e: &Expr, exact: bool) -> Option<Predicate> {
    match e {
        Expr::Literal(ScalarValue::Boolean(Some(b)), _) => Some(Predicate::Const(*b)),
        Expr::BinaryExpr(b) => binary(b, exact),
        Expr::Not(inner) => Some(Predicate::Not(Box::new(convert(inner, true)?))),
        Expr::IsNull(c) => Some(Predicate::IsNull {
            column: column(c)?,
            negated: false,
        }),
        Expr::IsNotNull(c) => Some(Predicate::IsNull {
            column: column(c)?,
            negated: true,
        }),
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => Some(Predicate::In {
            column: column(expr)?,
            values: list.iter().map(lit).collect::<Option<_>>()?,
            negated: *negated,
        }),
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => Some(Predicate::Between {
            column: column(expr)?,
            low: lit(low)?,
            high: lit(high)?,
            negated: *negated,
        }),
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char: None | Some('\\'),
            // ILIKE stays with DataFusion: case folding differs between the engines
            // beyond ASCII (a final sigma, a dotted capital I)
            case_insensitive: false,
        }) => match lit(pattern)? {
            Literal::Str(pattern) => Some(Predicate::Like {
                column: column(expr)?,
                pattern,
                negated: *negated,
                case_insensitive: false,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// `filter` as a predicate no stronger than it, if one can be pushed.
pub fn pushable(filter: &Expr) -> Option<Predicate> {
    let p = convert(filter, false)?;
    (Predicate::parse(&p.to_string()).ok()? == p).then_some(p)
}

/// The conjunction of the filters that can be pushed, if any.
pub fn conjunction(filters: &[Expr]) -> Option<Predicate> {
    let mut parts = filters.iter().filter_map(pushable);
    let first = parts.next()?;
    let all = parts.fold(first, |a, b| Predicate::And(Box::new(a), Box::new(b)));
    // the whole must read back too (a long conjunction may pass the parser's limits)
    (Predicate::parse(&all.to_string()).ok()? == all).then_some(all)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use datafusion::logical_expr::{col, lit};

    #[test]
    fn filters_convert_no_stronger_than_they_are() {
        let p = |e: Expr| pushable(&e).map(|p| p.to_string());
        assert_eq!(p(col("a").gt(lit(5i64))).unwrap(), "\"a\" > 5");
        assert_eq!(p(lit(5i32).lt(col("a"))).unwrap(), "\"a\" > 5");
        assert_eq!(p(col("s").eq(lit("it's"))).unwrap(), "\"s\" = 'it''s'");
        // an AND keeps the side it can push; NOT needs the whole
        let f = col("a").gt(lit(5i64)).and(col("b").eq(col("c")));
        assert_eq!(p(f.clone()).unwrap(), "\"a\" > 5");
        assert_eq!(p(Expr::Not(Box::new(f))), None);
        assert_eq!(p(col("a").gt(lit(5i64)).or(col("b").eq(col("c")))), None);
        assert_eq!(
            p(col("x").in_list(vec![lit(1i64), lit(2i64)], true)).unwrap(),
            "\"x\" NOT IN (1, 2)"
        );
        assert_eq!(p(col("f").lt(lit(f64::NAN))), None);
        assert_eq!(p(col("f").lt(lit(1.5f64))).unwrap(), "\"f\" < 1.5");
        assert_eq!(p(col("x").is_not_null()).unwrap(), "\"x\" IS NOT NULL");
        assert_eq!(p(col("s").like(lit("a%"))).unwrap(), "\"s\" LIKE 'a%'");
        assert_eq!(p(col("s").ilike(lit("σασ"))), None);
    }
}

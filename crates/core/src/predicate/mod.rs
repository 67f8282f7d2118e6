//! Row filters: a SQL boolean expression (`price > 10 AND brand = 'nars' OR event_date IS
//! NULL`, `IN`, `BETWEEN`, `LIKE`, `NOT`) parsed by hand ([`parse`]) and evaluated with Arrow
//! compute kernels. Comparisons are between a column (top-level or `struct.field`) and a
//! literal; literals take the column's type.
//!
//! [`parse`] turns a filter's text into a [`Predicate`], [`sql`] a `sqlparser` expression
//! (a query's `WHERE`); [`evaluate`] runs one on a batch (with [`like`] for `LIKE`
//! patterns). Pruning by statistics is `crate::skipping`.

mod evaluate;
mod like;
mod parse;
mod sql;
mod text;

pub use evaluate::{compare, literal_array, resolve};

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::Schema;

use crate::error::{Error, Result};

/// A literal value of a filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `NULL`.
    Null,
    /// `TRUE` or `FALSE`.
    Bool(bool),
    /// A number as written (integer, decimal or float text).
    Number(String),
    /// A string literal, without its quotes.
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
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CmpOp {
    /// The operator of `b op' a` for `a op b` (`<` becomes `>`; `=` stays).
    pub fn flip(self) -> CmpOp {
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
    /// Always true or always false.
    Const(bool),
    /// `column op value`.
    Cmp {
        /// The column's path: a top-level name, then nested field names.
        column: Vec<String>,
        /// The comparison.
        op: CmpOp,
        /// The literal, read as the column's type when evaluated.
        value: Literal,
    },
    /// `column IS [NOT] NULL`.
    IsNull {
        /// The column's path: a top-level name, then nested field names.
        column: Vec<String>,
        /// `true` for `IS NOT NULL`.
        negated: bool,
    },
    /// `column [NOT] IN (values)`.
    In {
        /// The column's path: a top-level name, then nested field names.
        column: Vec<String>,
        /// The listed literals.
        values: Vec<Literal>,
        /// `true` for `NOT IN`.
        negated: bool,
    },
    /// `column [NOT] BETWEEN low AND high` (both bounds inclusive).
    Between {
        /// The column's path: a top-level name, then nested field names.
        column: Vec<String>,
        /// The lower bound.
        low: Literal,
        /// The upper bound.
        high: Literal,
        /// `true` for `NOT BETWEEN`.
        negated: bool,
    },
    /// `column [NOT] LIKE|ILIKE pattern`.
    Like {
        /// The column's path: a top-level name, then nested field names.
        column: Vec<String>,
        /// The pattern: `%` any run of characters, `_` one, `\` escapes.
        pattern: String,
        /// `true` for `NOT LIKE`.
        negated: bool,
        /// `true` for `ILIKE` (value and pattern compared lower-cased).
        case_insensitive: bool,
    },
    /// Both hold.
    And(Box<Predicate>, Box<Predicate>),
    /// Either holds.
    Or(Box<Predicate>, Box<Predicate>),
    /// The inner predicate does not hold.
    Not(Box<Predicate>),
}

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidArgument {
        message: message.into(),
    }
}

impl Predicate {
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

    /// Check columns and literal types against `schema` without reading data.
    pub fn validate(&self, schema: &Arc<Schema>) -> Result<()> {
        self.evaluate(&RecordBatch::new_empty(schema.clone()))
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::{Date32Array, Float64Array, Int64Array, StringArray};
    use arrow_schema::{DataType as ArrowType, Field};

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

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
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

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
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

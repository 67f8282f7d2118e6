//! A [`Predicate`] as filter text that [`Predicate::parse`] reads back to the same
//! predicate: how a filter travels with a plan (a DataFusion plan shipped to another
//! process, a split sent to another worker). Column names are always quoted and
//! quotes doubled, so any name and any string survive.

use std::fmt::{self, Display, Formatter};

use super::{CmpOp, Literal, Predicate};

fn column(f: &mut Formatter<'_>, path: &[String]) -> fmt::Result {
    for (i, part) in path.iter().enumerate() {
        if i > 0 {
            f.write_str(".")?;
        }
        write!(f, "\"{}\"", part.replace('"', "\"\""))?;
    }
    Ok(())
}

fn string(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    write!(f, "'{}'", s.replace('\'', "''"))
}

fn literal(f: &mut Formatter<'_>, l: &Literal) -> fmt::Result {
    match l {
        Literal::Str(s) => string(f, s),
        Literal::Null => f.write_str("NULL"),
        Literal::Bool(true) => f.write_str("TRUE"),
        Literal::Bool(false) => f.write_str("FALSE"),
        Literal::Number(n) => f.write_str(n),
    }
}

fn op(o: CmpOp) -> &'static str {
    match o {
        CmpOp::Eq => "=",
        CmpOp::NotEq => "<>",
        CmpOp::Lt => "<",
        CmpOp::LtEq => "<=",
        CmpOp::Gt => ">",
        CmpOp::GtEq => ">=",
    }
}

fn not(negated: bool) -> &'static str {
    if negated { "NOT " } else { "" }
}

/// `p` as an operand of `AND`/`OR`: in parentheses unless it is a single condition or
/// the same connective (both are associative).
fn operand(f: &mut Formatter<'_>, p: &Predicate, parent_is_and: bool) -> fmt::Result {
    let bare = match p {
        Predicate::And(..) => parent_is_and,
        Predicate::Or(..) => !parent_is_and,
        _ => true,
    };
    if bare {
        write!(f, "{p}")
    } else {
        write!(f, "({p})")
    }
}

impl Display for Predicate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Const(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Predicate::Cmp {
                column: c,
                op: o,
                value,
            } => {
                column(f, c)?;
                write!(f, " {} ", op(*o))?;
                literal(f, value)
            }
            Predicate::IsNull { column: c, negated } => {
                column(f, c)?;
                write!(f, " IS {}NULL", not(*negated))
            }
            Predicate::In {
                column: c,
                values,
                negated,
            } => {
                column(f, c)?;
                write!(f, " {}IN (", not(*negated))?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    literal(f, v)?;
                }
                f.write_str(")")
            }
            Predicate::Between {
                column: c,
                low,
                high,
                negated,
            } => {
                column(f, c)?;
                write!(f, " {}BETWEEN ", not(*negated))?;
                literal(f, low)?;
                f.write_str(" AND ")?;
                literal(f, high)
            }
            Predicate::Like {
                column: c,
                pattern,
                negated,
                case_insensitive,
            } => {
                column(f, c)?;
                let like = if *case_insensitive { "ILIKE" } else { "LIKE" };
                write!(f, " {}{like} ", not(*negated))?;
                string(f, pattern)
            }
            Predicate::And(a, b) => {
                operand(f, a, true)?;
                f.write_str(" AND ")?;
                operand(f, b, true)
            }
            Predicate::Or(a, b) => {
                operand(f, a, false)?;
                f.write_str(" OR ")?;
                operand(f, b, false)
            }
            Predicate::Not(a) => write!(f, "NOT ({a})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_parses_back_to_the_same_predicate() {
        for sql in [
            "price > 10 AND brand = 'nars' OR event_date IS NULL",
            "a = 'it''s' AND \"we\"\"ird col\" <> -3.5",
            "NOT (x IN (1, 2, NULL)) AND y NOT BETWEEN 1 AND 2",
            "s LIKE 'a\\_%' OR s NOT ILIKE '%B%' OR s.t.u IS NOT NULL",
            "(a = 1 OR b = 2) AND (c = 3 OR d = 4) AND e = TRUE",
            "a = 1 OR (b = 2 AND (c = 3 OR NOT (d = FALSE)))",
            "d >= DATE '2024-01-01'",
        ] {
            let p = Predicate::parse(sql).unwrap();
            let text = p.to_string();
            let back = Predicate::parse(&text).unwrap();
            assert_eq!(back, p, "{sql} -> {text}");
        }
    }
}

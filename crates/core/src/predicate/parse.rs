//! A filter's text → [`Predicate`], by hand: the grammar of [`Predicate::parse`] (column
//! versus literal comparisons joined by `AND`, `OR`, `NOT` and parentheses; `IS [NOT] NULL`,
//! `[NOT] IN (...)`, `[NOT] BETWEEN ... AND ...`, `[NOT] LIKE|ILIKE '...'`; literals
//! `NULL`, `TRUE`, `FALSE`, numbers, `'strings'` and typed strings `DATE '...'`), read as
//! `sqlparser`'s generic dialect reads it (precedence, quoting: `"a b"` and `` `a b` `` are
//! column names, `''` a quote in a string) without its full SQL grammar (0.67 MB of the
//! explorer's wasm). The test below compares both on a corpus. Unlike `sqlparser`'s
//! `parse_expr`, text after the expression is an error rather than ignored, and so is a
//! keyword where a column belongs (`NOT` alone).

use super::{CmpOp, Literal, Predicate, invalid};
use crate::error::Result;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word (keyword or column name), as written.
    Word(String),
    /// A `"quoted"` or `` `quoted` `` column name.
    Quoted(String),
    Str(String),
    Number(String),
    Op(&'static str),
}

fn tokenize(sql: &str) -> std::result::Result<Vec<(Tok, usize, usize)>, String> {
    let mut out = Vec::new();
    let mut it = sql.char_indices().peekable();
    while let Some(&(start, c)) = it.peek() {
        if c.is_whitespace() {
            it.next();
            continue;
        }
        // comments: `-- to the end of the line`, `/* ... */`
        let rest = &sql[start..];
        if rest.starts_with("--") || rest.starts_with("/*") {
            let close = if rest.starts_with("--") { "\n" } else { "*/" };
            let Some(len) = rest[2..].find(close).map(|i| i + 2 + close.len()) else {
                if close == "*/" {
                    return Err(format!("unterminated comment at {start}"));
                }
                break;
            };
            while it.peek().is_some_and(|&(i, _)| i < start + len) {
                it.next();
            }
            continue;
        }
        let tok = if c.is_alphabetic() || c == '_' || c == '#' || c == '@' {
            let mut w = String::new();
            while let Some(&(_, c)) = it.peek() {
                if c.is_alphabetic() || c.is_ascii_digit() || matches!(c, '_' | '$' | '#' | '@') {
                    w.push(c);
                    it.next();
                } else {
                    break;
                }
            }
            Tok::Word(w)
        } else if c.is_ascii_digit()
            || (c == '.' && sql[start + 1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            let mut n = String::new();
            let mut seen_dot = false;
            while let Some(&(_, c)) = it.peek() {
                if c.is_ascii_digit() || (c == '.' && !seen_dot) {
                    seen_dot |= c == '.';
                    n.push(c);
                    it.next();
                } else {
                    break;
                }
            }
            // an exponent: e, an optional sign, digits
            let rest = &sql[start + n.len()..];
            let mut exp = rest.chars();
            if matches!(exp.next(), Some('e' | 'E')) {
                let mut e = String::from(&rest[..1]);
                let mut tail = exp.clone().peekable();
                if let Some(&s @ ('+' | '-')) = tail.peek() {
                    e.push(s);
                    tail.next();
                }
                let digits: String = tail.take_while(|d| d.is_ascii_digit()).collect();
                if !digits.is_empty() {
                    e.push_str(&digits);
                    for _ in 0..e.chars().count() {
                        it.next();
                    }
                    n.push_str(&e);
                }
            }
            Tok::Number(n)
        } else if c == '\'' || c == '"' || c == '`' {
            it.next();
            let mut s = String::new();
            loop {
                match it.next() {
                    Some((_, q)) if q == c => {
                        if matches!(it.peek(), Some(&(_, q2)) if q2 == c) {
                            s.push(c);
                            it.next();
                        } else {
                            break;
                        }
                    }
                    Some((_, ch)) => s.push(ch),
                    None => return Err(format!("unterminated {c}quoted{c} text at {start}")),
                }
            }
            if c == '\'' {
                Tok::Str(s)
            } else {
                Tok::Quoted(s)
            }
        } else {
            let two = sql.get(start..start + 2).unwrap_or("");
            let op: &'static str = match two {
                "<=" | ">=" | "<>" | "!=" | "==" => {
                    it.next();
                    ["<=", ">=", "<>", "!=", "=="]
                        .into_iter()
                        .find(|o| *o == two)
                        .unwrap_or("=")
                }
                _ => match c {
                    '=' => "=",
                    '<' => "<",
                    '>' => ">",
                    '(' => "(",
                    ')' => ")",
                    ',' => ",",
                    '.' => ".",
                    '-' => "-",
                    '+' => "+",
                    _ => return Err(format!("unexpected character {c:?} at {start}")),
                },
            };
            if sql[start..].starts_with("<=>") {
                return Err("operator <=> is not supported in filters".into());
            }
            it.next();
            Tok::Op(op)
        };
        let end = it.peek().map_or(sql.len(), |&(i, _)| i);
        out.push((tok, start, end));
    }
    Ok(out)
}

/// An operand or condition as parsed, with its byte span in the text (for messages).
#[derive(Debug)]
enum Ex {
    Column(Vec<String>),
    Lit(Literal),
    /// A sign on something that is not a number (`-price`).
    Neg,
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Cmp(Box<Node>, CmpOp, Box<Node>),
    IsNull(Box<Node>, bool),
    In(Box<Node>, Vec<Node>, bool),
    Between(Box<Node>, Box<Node>, Box<Node>, bool),
    Like(Box<Node>, Box<Node>, bool, bool),
}

#[derive(Debug)]
struct Node {
    ex: Ex,
    start: usize,
    end: usize,
}

/// Data types `sqlparser` reads as a typed string before a quoted literal (`DATE '...'`).
const TYPED: &[&str] = &[
    "DATE",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "TIMESTAMP_NTZ",
    "DATETIME",
    "STRING",
    "VARCHAR",
    "CHAR",
    "TEXT",
    "INT",
    "INTEGER",
    "BIGINT",
    "SMALLINT",
    "TINYINT",
    "DOUBLE",
    "FLOAT",
    "REAL",
    "DECIMAL",
    "NUMERIC",
    "BOOLEAN",
];

/// Parentheses, `NOT`s and signs one inside another a filter may hold.
pub(super) const MAX_NESTING: usize = 64;
/// Conditions (comparisons, `IS`, `IN`, `BETWEEN`, `LIKE`) a filter may hold (an `IN`
/// list is one): `AND`/`OR` chains become nested predicates the scan walks recursively.
pub(super) const MAX_CONDITIONS: usize = 100;

struct Parser<'a> {
    sql: &'a str,
    toks: Vec<(Tok, usize, usize)>,
    at: usize,
    /// How deep in parentheses, `NOT`s and signs the parser is.
    depth: usize,
    /// Conditions read so far.
    conditions: usize,
}

type PResult<T> = std::result::Result<T, String>;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.at + k).map(|t| &t.0)
    }

    fn is_kw(&self, k: usize, kw: &str) -> bool {
        matches!(self.peek_at(k), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(0, kw);
        if yes {
            self.at += 1;
        }
        yes
    }

    /// One level deeper (a parenthesis, a `NOT`, a sign), within [`MAX_NESTING`].
    fn deeper(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "more than {MAX_NESTING} levels of nesting (parentheses, NOT, signs) at {}: the limit of a filter's nesting",
                self.pos()
            ));
        }
        Ok(())
    }

    fn eat_op(&mut self, op: &str) -> bool {
        let yes = matches!(self.peek(), Some(Tok::Op(o)) if *o == op);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.sql.len(), |t| t.1)
    }

    fn last_end(&self) -> usize {
        self.at
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.2)
    }

    fn found(&self) -> String {
        match self.toks.get(self.at) {
            Some((_, s, e)) => format!("`{}`", &self.sql[*s..*e]),
            None => "the end".into(),
        }
    }

    fn node(&self, ex: Ex, start: usize) -> Node {
        Node {
            ex,
            start,
            end: self.last_end(),
        }
    }

    fn or(&mut self) -> PResult<Node> {
        let start = self.pos();
        let mut left = self.and()?;
        while self.eat_kw("OR") {
            let right = self.and()?;
            left = self.node(Ex::Or(Box::new(left), Box::new(right)), start);
        }
        Ok(left)
    }

    fn and(&mut self) -> PResult<Node> {
        let start = self.pos();
        let mut left = self.not()?;
        while self.eat_kw("AND") {
            let right = self.not()?;
            left = self.node(Ex::And(Box::new(left), Box::new(right)), start);
        }
        Ok(left)
    }

    fn not(&mut self) -> PResult<Node> {
        let start = self.pos();
        if self.eat_kw("NOT") {
            self.deeper()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(self.node(Ex::Not(Box::new(inner)), start));
        }
        self.condition()
    }

    /// An operand, then at most one comparison, `IS`, `IN`, `BETWEEN` or `LIKE`.
    fn condition(&mut self) -> PResult<Node> {
        let start = self.pos();
        self.conditions += 1;
        if self.conditions > MAX_CONDITIONS {
            return Err(format!(
                "more than {MAX_CONDITIONS} conditions: the limit of a filter's conditions"
            ));
        }
        let left = self.operand()?;
        let cmp = match self.peek() {
            Some(Tok::Op("=" | "==")) => Some(CmpOp::Eq),
            Some(Tok::Op("<>" | "!=")) => Some(CmpOp::NotEq),
            Some(Tok::Op("<")) => Some(CmpOp::Lt),
            Some(Tok::Op("<=")) => Some(CmpOp::LtEq),
            Some(Tok::Op(">")) => Some(CmpOp::Gt),
            Some(Tok::Op(">=")) => Some(CmpOp::GtEq),
            _ => None,
        };
        if let Some(op) = cmp {
            self.at += 1;
            let right = self.operand()?;
            return Ok(self.node(Ex::Cmp(Box::new(left), op, Box::new(right)), start));
        }
        if self.eat_kw("IS") {
            let negated = self.eat_kw("NOT");
            if !self.eat_kw("NULL") {
                return Err(format!("expected NULL after IS, found {}", self.found()));
            }
            return Ok(self.node(Ex::IsNull(Box::new(left), negated), start));
        }
        let negated = if self.is_kw(0, "NOT")
            && ["IN", "BETWEEN", "LIKE", "ILIKE"]
                .iter()
                .any(|k| self.is_kw(1, k))
        {
            self.at += 1;
            true
        } else {
            false
        };
        if self.eat_kw("IN") {
            if !self.eat_op("(") {
                return Err(format!("expected ( after IN, found {}", self.found()));
            }
            let mut list = vec![self.operand()?];
            while self.eat_op(",") {
                list.push(self.operand()?);
            }
            if !self.eat_op(")") {
                return Err(format!("expected , or ) in IN, found {}", self.found()));
            }
            return Ok(self.node(Ex::In(Box::new(left), list, negated), start));
        }
        if self.eat_kw("BETWEEN") {
            let low = self.operand()?;
            if !self.eat_kw("AND") {
                return Err(format!("expected AND in BETWEEN, found {}", self.found()));
            }
            let high = self.operand()?;
            return Ok(self.node(
                Ex::Between(Box::new(left), Box::new(low), Box::new(high), negated),
                start,
            ));
        }
        for (kw, ci) in [("LIKE", false), ("ILIKE", true)] {
            if self.eat_kw(kw) {
                let pattern = self.operand()?;
                if self.is_kw(0, "ESCAPE") {
                    return Err("LIKE ... ESCAPE is not supported in filters".into());
                }
                return Ok(self.node(
                    Ex::Like(Box::new(left), Box::new(pattern), negated, ci),
                    start,
                ));
            }
        }
        Ok(left)
    }

    /// A column (`a`, `"a b"`, `a.b`), a literal, `-`/`+` an operand, `( expression )`.
    fn operand(&mut self) -> PResult<Node> {
        let start = self.pos();
        let Some(tok) = self.peek().cloned() else {
            return Err("expected a value or a column, found the end".into());
        };
        self.at += 1;
        let ex = match tok {
            Tok::Op("(") => {
                self.deeper()?;
                let inner = self.or()?;
                self.depth -= 1;
                if !self.eat_op(")") {
                    return Err(format!("expected ), found {}", self.found()));
                }
                // parentheses change nothing but the span
                return Ok(Node {
                    ex: inner.ex,
                    start,
                    end: self.last_end(),
                });
            }
            Tok::Op(sign @ ("-" | "+")) => {
                self.deeper()?;
                let inner = self.operand()?;
                self.depth -= 1;
                match inner.ex {
                    Ex::Lit(Literal::Number(n)) if sign == "-" => {
                        Ex::Lit(Literal::Number(format!("-{n}")))
                    }
                    Ex::Lit(l) if sign == "+" => Ex::Lit(l),
                    _ => Ex::Neg,
                }
            }
            Tok::Number(n) => Ex::Lit(Literal::Number(n)),
            Tok::Str(s) => Ex::Lit(Literal::Str(s)),
            Tok::Word(w)
                if TYPED.iter().any(|t| w.eq_ignore_ascii_case(t))
                    && matches!(self.peek(), Some(Tok::Str(_))) =>
            {
                let Some(Tok::Str(s)) = self.peek().cloned() else {
                    return Err("expected a string".into());
                };
                self.at += 1;
                Ex::Lit(Literal::Str(s))
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("NULL") => Ex::Lit(Literal::Null),
            Tok::Word(w) if w.eq_ignore_ascii_case("TRUE") => Ex::Lit(Literal::Bool(true)),
            Tok::Word(w) if w.eq_ignore_ascii_case("FALSE") => Ex::Lit(Literal::Bool(false)),
            Tok::Word(w) if is_reserved(&w) => {
                self.at -= 1;
                return Err(format!(
                    "expected a value or a column, found {}",
                    self.found()
                ));
            }
            Tok::Word(w) | Tok::Quoted(w) => {
                let mut path = vec![w];
                while self.eat_op(".") {
                    match self.peek().cloned() {
                        Some(Tok::Word(w) | Tok::Quoted(w)) => {
                            self.at += 1;
                            path.push(w);
                        }
                        _ => return Err(format!("expected a field name, found {}", self.found())),
                    }
                }
                Ex::Column(path)
            }
            Tok::Op(_) => {
                self.at -= 1;
                return Err(format!(
                    "expected a value or a column, found {}",
                    self.found()
                ));
            }
        };
        Ok(self.node(ex, start))
    }
}

/// Words that cannot start an operand.
fn is_reserved(w: &str) -> bool {
    [
        "AND", "OR", "NOT", "IS", "IN", "BETWEEN", "LIKE", "ILIKE", "ESCAPE", "SELECT", "EXISTS",
        "CASE", "INTERVAL", "CAST",
    ]
    .iter()
    .any(|k| w.eq_ignore_ascii_case(k))
}

impl Predicate {
    /// Parse a filter: a SQL boolean expression.
    pub fn parse(sql: &str) -> Result<Predicate> {
        let fail = |e: String| invalid(format!("cannot parse filter {sql:?}: {e}"));
        let toks = tokenize(sql).map_err(fail)?;
        let mut p = Parser {
            sql,
            toks,
            at: 0,
            depth: 0,
            conditions: 0,
        };
        let node = p.or().map_err(fail)?;
        if p.at < p.toks.len() {
            return Err(fail(format!("expected the end, found {}", p.found())));
        }
        convert(sql, &node)
    }
}

fn text<'a>(sql: &'a str, n: &Node) -> &'a str {
    sql.get(n.start..n.end).unwrap_or(sql).trim()
}

fn column_of(n: &Node) -> Option<Vec<String>> {
    match &n.ex {
        Ex::Column(c) => Some(c.clone()),
        _ => None,
    }
}

fn literal_of(n: &Node) -> Option<Literal> {
    match &n.ex {
        Ex::Lit(l) => Some(l.clone()),
        _ => None,
    }
}

fn need_column(sql: &str, n: &Node, ctx: &str) -> Result<Vec<String>> {
    column_of(n).ok_or_else(|| {
        invalid(format!(
            "expected a column name in {ctx}, found `{}`",
            text(sql, n)
        ))
    })
}

fn need_literal(sql: &str, n: &Node, ctx: &str) -> Result<Literal> {
    literal_of(n).ok_or_else(|| {
        invalid(format!(
            "expected a literal value in {ctx}, found `{}`",
            text(sql, n)
        ))
    })
}

fn convert(sql: &str, n: &Node) -> Result<Predicate> {
    Ok(match &n.ex {
        Ex::Lit(Literal::Bool(b)) => Predicate::Const(*b),
        Ex::Column(c) => Predicate::Cmp {
            column: c.clone(),
            op: CmpOp::Eq,
            value: Literal::Bool(true),
        },
        Ex::And(a, b) => Predicate::And(Box::new(convert(sql, a)?), Box::new(convert(sql, b)?)),
        Ex::Or(a, b) => Predicate::Or(Box::new(convert(sql, a)?), Box::new(convert(sql, b)?)),
        Ex::Not(a) => Predicate::Not(Box::new(convert(sql, a)?)),
        Ex::Cmp(left, op, right) => match (column_of(left), column_of(right)) {
            (Some(column), None) => Predicate::Cmp {
                column,
                op: *op,
                value: need_literal(sql, right, "a comparison")?,
            },
            (None, Some(column)) => Predicate::Cmp {
                column,
                op: op.flip(),
                value: need_literal(sql, left, "a comparison")?,
            },
            _ => {
                return Err(invalid(format!(
                    "`{}` must compare a column with a value",
                    text(sql, n)
                )));
            }
        },
        Ex::IsNull(x, negated) => Predicate::IsNull {
            column: need_column(sql, x, if *negated { "IS NOT NULL" } else { "IS NULL" })?,
            negated: *negated,
        },
        Ex::In(x, list, negated) => Predicate::In {
            column: need_column(sql, x, "IN")?,
            values: list
                .iter()
                .map(|v| need_literal(sql, v, "IN"))
                .collect::<Result<_>>()?,
            negated: *negated,
        },
        Ex::Between(x, low, high, negated) => Predicate::Between {
            column: need_column(sql, x, "BETWEEN")?,
            low: need_literal(sql, low, "BETWEEN")?,
            high: need_literal(sql, high, "BETWEEN")?,
            negated: *negated,
        },
        Ex::Like(x, pattern, negated, ci) => Predicate::Like {
            column: need_column(sql, x, "LIKE")?,
            pattern: match need_literal(sql, pattern, "LIKE")? {
                Literal::Str(s) => s,
                other => {
                    return Err(invalid(format!(
                        "LIKE needs a string pattern, found {other}"
                    )));
                }
            },
            negated: *negated,
            case_insensitive: *ci,
        },
        Ex::Lit(_) | Ex::Neg => {
            return Err(invalid(format!(
                "`{}` is not supported in filters",
                text(sql, n)
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hostile filters (a `filter=` parameter, a link) cannot exhaust the stack or build
    /// a tree the scan would recurse through: nesting and length have limits, named in
    /// the error.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn deep_or_long_filters_are_refused_by_name() {
        let n = 100_000;
        for deep in [
            format!("{}a = 1{}", "(".repeat(n), ")".repeat(n)),
            format!("{}a = 1", "NOT ".repeat(n)),
            // (`--` would start a comment)
            format!("a = {}1", "- ".repeat(n)),
        ] {
            let e = Predicate::parse(&deep).unwrap_err().to_string();
            assert!(
                e.contains("levels of nesting"),
                "{}",
                &e[e.len().saturating_sub(200)..]
            );
        }
        let long = vec!["a = 1"; n].join(" AND ");
        let e = Predicate::parse(&long).unwrap_err().to_string();
        assert!(
            e.contains("the limit of a filter's conditions"),
            "{}",
            &e[e.len().saturating_sub(200)..]
        );
        // within the limits: fine
        let ok = format!(
            "{}a = 1{}",
            "(".repeat(MAX_NESTING),
            ")".repeat(MAX_NESTING)
        );
        assert!(Predicate::parse(&ok).is_ok());
        assert!(Predicate::parse(&vec!["a = 1"; MAX_CONDITIONS].join(" OR ")).is_ok());
    }

    /// The same predicate as `sqlparser` (generic dialect) and the SQL conversion give, or an
    /// error from both.
    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn reads_filters_as_sqlparser_does() {
        use sqlparser::dialect::GenericDialect;
        use sqlparser::parser::Parser as SqlParser;
        let corpus = [
            "price > 10 AND brand = 'nars' OR event_date IS NULL",
            "price > 10",
            "10 < price",
            "brand IN ('nars', 'x')",
            "brand NOT IN ('nars')",
            "price BETWEEN 5 AND 12.5",
            "price NOT BETWEEN 5 AND 12.5",
            "price BETWEEN 5 AND 12.5 AND id = 1",
            "brand LIKE 'na%'",
            "brand ILIKE 'DI%'",
            "brand NOT LIKE 'na%'",
            "brand NOT ILIKE 'na%' OR id = 2",
            "NOT (brand = 'nars')",
            "NOT brand = 'nars' AND id = 1",
            "NOT NOT flag",
            "event_date >= '2024-01-02'",
            "event_date = DATE '2024-01-01'",
            "ts < TIMESTAMP '2024-01-01 10:00:00'",
            "date = '2024-01-01'",
            "brand IS NOT NULL AND id <> 1",
            "price = NULL",
            "id = -1 OR id = +4",
            "id = - 1.5e3",
            "x >= 1e-3 and y < .5",
            "true",
            "FALSE",
            "flag",
            "s.a.b = 'x'",
            "\"Customer Id\" > 1",
            "`odd name` != 'it''s'",
            "(id = 1 OR id = 2) AND (brand = 'a')",
            "((id)) = (3)",
            "a = 1 OR b = 2 AND c = 3",
            "a == 1",
            "id IN (1, -2, 3.5, NULL)",
            "nested.v IS NULL",
            "City = 'Zürich'",
            "price >",
            "price = brand",
            "price + 1 > 2",
            "1 = 1",
            "id IS TRUE",
            "5",
            "NULL",
            "-id > 1",
            "id = -flag",
            "id IN (x)",
            "id IN ()",
            "id BETWEEN a AND 3",
            "'x' LIKE 'y'",
            "id LIKE 5",
            "a LIKE 'x' ESCAPE '!'",
            "(id = 1",
            "id = 1)",
            "id = 'unterminated",
            "a <=> 1",
            "id = +'x'",
            "id = 1 -- a comment",
            "id = /* two */ 2",
            "v = INT '5'",
            "v = DECIMAL '1.50'",
            "",
        ];
        for sql in corpus {
            let ours = Predicate::parse(sql);
            let theirs = SqlParser::new(&GenericDialect {})
                .try_with_sql(sql)
                .and_then(|mut p| {
                    let e = p.parse_expr()?;
                    // our parser refuses text after the expression; so does this check
                    p.expect_token(&sqlparser::tokenizer::Token::EOF)?;
                    Ok(e)
                })
                .map_err(|e| invalid(e.to_string()))
                .and_then(|e| Predicate::from_sql_expr(&e));
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{sql}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{sql:?}: ours {ours:?}, sqlparser {theirs:?}"),
            }
        }
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn text_after_the_expression_is_an_error() {
        let e = Predicate::parse("price > 1 garbage").unwrap_err();
        assert!(
            e.to_string().contains("expected the end, found `garbage`"),
            "{e}"
        );
        // sqlparser reads a lone `NOT` as a column named NOT
        assert!(Predicate::parse("NOT").is_err());
        let e = Predicate::parse("price + 1 > 2").unwrap_err();
        assert!(e.to_string().contains("`+`"), "{e}");
    }
}

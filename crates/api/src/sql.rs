//! The SQL subset, parsed with `sqlparser` (Databricks dialect, so `VERSION AS OF` and
//! `TIMESTAMP AS OF` read as in Spark):
//!
//! ```sql
//! SELECT cols | * | COUNT(*) | COUNT/SUM/MIN/MAX/AVG(col) [AS alias], …
//! FROM '<table url>' | delta.`<table url>` [VERSION AS OF n | TIMESTAMP AS OF '<ts>']
//!    | table_changes('<table url>', from[, to])     -- versions or timestamps
//! [WHERE <filter>] [GROUP BY cols] [ORDER BY col|alias|aggregate|position [ASC|DESC]
//! [NULLS FIRST|LAST], …] [LIMIT n]
//! ```
//!
//! Anything else is a [`ApiError::Unsupported`] naming the construct.

use deltalens_core::VersionSpec;
use deltalens_core::predicate::Predicate;
use deltalens_core::time_travel::parse_timestamp;
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, LimitClause, ObjectName,
    OrderByKind, OrderBySort, Query as SqlQuery, Select, SelectItem, SetExpr, Statement,
    TableFactor, TableFunctionArgs, TableVersion, Value,
};
use sqlparser::dialect::DatabricksDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Word};

use crate::error::{ApiError, Result};

/// Where rows come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A table at a version (`VERSION AS OF` / `TIMESTAMP AS OF`, latest by default).
    Table {
        /// The table URL.
        url: String,
        /// The version to read.
        at: VersionSpec,
    },
    /// `table_changes(url, from, to)`: the change data feed, bounds inclusive.
    Changes {
        /// The table URL.
        url: String,
        /// The start of the range (inclusive): a version or a timestamp.
        from: Bound,
        /// The end of the range (inclusive); `None` for the latest version.
        to: Option<Bound>,
    },
}

/// A bound of `table_changes`: a version, or a timestamp (ms since the epoch, UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A table version.
    Version(u64),
    /// A timestamp in milliseconds since the epoch, UTC.
    Timestamp(i64),
}

impl Source {
    /// The table URL.
    pub fn url(&self) -> &str {
        match self {
            Source::Table { url, .. } | Source::Changes { url, .. } => url,
        }
    }
}

/// An aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    /// `COUNT`: non-null values, or rows for `COUNT(*)`.
    Count,
    /// `SUM` of a numeric column.
    Sum,
    /// `MIN`: the smallest value.
    Min,
    /// `MAX`: the largest value.
    Max,
    /// `AVG`: the mean of a numeric column.
    Avg,
}

impl AggFunc {
    fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "avg" => AggFunc::Avg,
            _ => return None,
        })
    }

    /// Lower-case SQL name.
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Avg => "avg",
        }
    }
}

/// One item of the `SELECT` list.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `*`: every column.
    Star,
    /// A column, optionally renamed.
    Column {
        /// The column's name.
        name: String,
        /// The `AS` name; `None` to keep the column's.
        alias: Option<String>,
    },
    /// An aggregate; `arg` is `None` for `COUNT(*)`.
    Agg {
        /// The function.
        func: AggFunc,
        /// The column aggregated; `None` for `COUNT(*)`.
        arg: Option<String>,
        /// The `AS` name; `None` for the default name ([`agg_name`]).
        alias: Option<String>,
    },
}

impl Item {
    /// The name of the output column (`*` has none).
    pub fn output_name(&self) -> Option<String> {
        match self {
            Item::Star => None,
            Item::Column { name, alias } => Some(alias.clone().unwrap_or_else(|| name.clone())),
            Item::Agg { func, arg, alias } => Some(
                alias
                    .clone()
                    .unwrap_or_else(|| agg_name(*func, arg.as_deref())),
            ),
        }
    }
}

/// The default output name of an aggregate: `count(*)`, `sum(price)`.
pub fn agg_name(func: AggFunc, arg: Option<&str>) -> String {
    format!("{}({})", func.name(), arg.unwrap_or("*"))
}

/// What an `ORDER BY` key refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderTarget {
    /// An output column (by name or alias), an input column, or an aggregate's default name.
    Name(String),
    /// `ORDER BY 2`: the second output column (1-based).
    Position(usize),
}

/// One `ORDER BY` key. Nulls sort first ascending and last descending unless stated (as
/// in Spark).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderKey {
    /// What to sort by.
    pub target: OrderTarget,
    /// `DESC`.
    pub descending: bool,
    /// Whether nulls sort first (the default applied when not stated).
    pub nulls_first: bool,
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The table (or change feed) read.
    pub source: Source,
    /// The `SELECT` list, in order.
    pub items: Vec<Item>,
    /// The `WHERE` condition; `None` without one.
    pub filter: Option<Predicate>,
    /// The `GROUP BY` columns; empty without grouping.
    pub group_by: Vec<String>,
    /// The `ORDER BY` keys, most significant first; empty when unordered.
    pub order_by: Vec<OrderKey>,
    /// The `LIMIT`; `None` without one.
    pub limit: Option<usize>,
}

impl Query {
    /// True when the query aggregates (an aggregate item or a `GROUP BY`).
    pub fn aggregates(&self) -> bool {
        !self.group_by.is_empty() || self.items.iter().any(|i| matches!(i, Item::Agg { .. }))
    }
}

const PLACEHOLDER: &str = "__deltalens_table_";

const SELECT_HINT: &str = "select columns, *, COUNT(*) or COUNT/SUM/MIN/MAX/AVG of a column";

/// Parse one query of the subset.
pub fn parse_sql(sql: &str) -> Result<Query> {
    let dialect = DatabricksDialect {};
    let (tokens, urls) = tokens_with_placeholders(&dialect, sql)?;
    let statements = Parser::new(&dialect)
        .with_tokens_with_locations(tokens)
        .parse_statements()
        .map_err(|e| syntax(&e))?;
    let q = one_query(&statements)?;
    let select = plain_select(q)?;
    Ok(Query {
        source: source_of(select, &urls)?,
        items: select
            .projection
            .iter()
            .map(item)
            .collect::<Result<Vec<_>>>()?,
        filter: match &select.selection {
            Some(e) => Some(Predicate::from_sql_expr(e)?),
            None => None,
        },
        group_by: group_by_of(select)?,
        order_by: order_by_of(q)?,
        limit: limit_of(q)?,
    })
}

fn syntax(e: &dyn std::fmt::Display) -> ApiError {
    ApiError::Syntax {
        message: e.to_string(),
    }
}

/// The tokens of `sql`, each `FROM '<url>'` made a placeholder identifier (a string
/// literal is no table name in SQL), and the URLs in placeholder order.
fn tokens_with_placeholders(
    dialect: &DatabricksDialect,
    sql: &str,
) -> Result<(Vec<TokenWithSpan>, Vec<String>)> {
    let mut tokens = Tokenizer::new(dialect, sql)
        .tokenize_with_location()
        .map_err(|e| syntax(&e))?;
    let mut urls = Vec::new();
    let mut after_from = false;
    for t in tokens.iter_mut() {
        match &t.token {
            Token::Whitespace(_) => continue,
            Token::Word(w) if w.keyword == Keyword::FROM => {
                after_from = true;
                continue;
            }
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) if after_from => {
                urls.push(s.clone());
                t.token = Token::Word(Word {
                    value: format!("{PLACEHOLDER}{}", urls.len() - 1),
                    quote_style: Some('`'),
                    keyword: Keyword::NoKeyword,
                });
            }
            _ => {}
        }
        after_from = false;
    }
    Ok((tokens, urls))
}

/// The one SELECT query of `statements`, without clauses the subset does not answer.
fn one_query(statements: &[Statement]) -> Result<&SqlQuery> {
    let [statement] = statements else {
        return Err(ApiError::unsupported(
            format!("{} statements", statements.len()),
            "send exactly one SELECT",
        ));
    };
    let Statement::Query(q) = statement else {
        return Err(ApiError::unsupported(
            first_words(&statement.to_string()),
            "deltalens is read-only: only SELECT queries are answered",
        ));
    };
    if q.with.is_some() {
        return Err(ApiError::unsupported("WITH", "inline the query"));
    }
    if q.fetch.is_some() || !q.locks.is_empty() || q.for_clause.is_some() {
        return Err(ApiError::unsupported(
            "FETCH / FOR / locking clauses",
            "use LIMIT",
        ));
    }
    if q.settings.is_some() || q.format_clause.is_some() || !q.pipe_operators.is_empty() {
        return Err(ApiError::unsupported(
            "SETTINGS / FORMAT / pipe operators",
            "use the format parameter",
        ));
    }
    Ok(q)
}

/// The SELECT of `q`, without clauses the subset does not answer.
fn plain_select(q: &SqlQuery) -> Result<&Select> {
    let select = match q.body.as_ref() {
        SetExpr::Select(s) => s,
        SetExpr::SetOperation { op, .. } => {
            return Err(ApiError::unsupported(
                op.to_string(),
                "send one SELECT at a time",
            ));
        }
        other => {
            return Err(ApiError::unsupported(
                first_words(&other.to_string()),
                "only SELECT … FROM a table is answered",
            ));
        }
    };
    if select.distinct.is_some() {
        return Err(ApiError::unsupported(
            "DISTINCT",
            "use GROUP BY on the columns",
        ));
    }
    if select.top.is_some() {
        return Err(ApiError::unsupported("TOP", "use LIMIT"));
    }
    if select.into.is_some() {
        return Err(ApiError::unsupported(
            "SELECT INTO",
            "deltalens is read-only",
        ));
    }
    if select.having.is_some() {
        return Err(ApiError::unsupported(
            "HAVING",
            "filter rows with WHERE; groups cannot be filtered",
        ));
    }
    if !select.lateral_views.is_empty()
        || select.prewhere.is_some()
        || !select.connect_by.is_empty()
        || !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
        || !select.sort_by.is_empty()
        || !select.named_window.is_empty()
        || select.qualify.is_some()
        || select.exclude.is_some()
        || select.value_table_mode.is_some()
    {
        return Err(ApiError::unsupported(
            "this SELECT clause (LATERAL VIEW, CLUSTER/DISTRIBUTE/SORT BY, WINDOW, QUALIFY, …)",
            "use WHERE, GROUP BY, ORDER BY and LIMIT",
        ));
    }
    Ok(select)
}

/// The table of `FROM` (one, without joins).
fn source_of(select: &Select, urls: &[String]) -> Result<Source> {
    match select.from.as_slice() {
        [] => Err(ApiError::unsupported(
            "SELECT without FROM",
            "read from a table: FROM '<table url>'",
        )),
        [t] if !t.joins.is_empty() => {
            Err(ApiError::unsupported("JOIN", "query one table at a time"))
        }
        [t] => source(&t.relation, urls),
        _ => Err(ApiError::unsupported(
            "several tables in FROM",
            "query one table at a time",
        )),
    }
}

/// The column names of `GROUP BY`.
fn group_by_of(select: &Select) -> Result<Vec<String>> {
    match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) => {
            if !modifiers.is_empty() {
                return Err(ApiError::unsupported(
                    "GROUP BY modifiers (ROLLUP, CUBE, …)",
                    "group by plain columns",
                ));
            }
            exprs
                .iter()
                .map(|e| match column_name(e) {
                    Some(c) => Ok(c),
                    None => Err(ApiError::unsupported(
                        format!("GROUP BY `{e}`"),
                        "group by column names",
                    )),
                })
                .collect::<Result<Vec<_>>>()
        }
        GroupByExpr::All(_) => Err(ApiError::unsupported("GROUP BY ALL", "name the columns")),
    }
}

/// The keys of `ORDER BY`.
fn order_by_of(q: &SqlQuery) -> Result<Vec<OrderKey>> {
    match &q.order_by {
        None => Ok(Vec::new()),
        Some(o) => match &o.kind {
            OrderByKind::All(_) => Err(ApiError::unsupported("ORDER BY ALL", "name the columns")),
            OrderByKind::Expressions(keys) => keys
                .iter()
                .map(|k| {
                    if k.with_fill.is_some() {
                        return Err(ApiError::unsupported("WITH FILL", "drop it"));
                    }
                    let target = order_target(&k.expr)?;
                    let descending = match &k.options.sort {
                        None | Some(OrderBySort::Asc) => false,
                        Some(OrderBySort::Desc) => true,
                        Some(other) => {
                            return Err(ApiError::unsupported(
                                format!("ORDER BY … {other:?}"),
                                "use ASC or DESC",
                            ));
                        }
                    };
                    Ok(OrderKey {
                        target,
                        descending,
                        nulls_first: k.options.nulls_first.unwrap_or(!descending),
                    })
                })
                .collect::<Result<Vec<_>>>(),
        },
    }
}

/// The number of `LIMIT`.
fn limit_of(q: &SqlQuery) -> Result<Option<usize>> {
    match &q.limit_clause {
        None => Ok(None),
        Some(LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if offset.is_some() {
                return Err(ApiError::unsupported(
                    "OFFSET",
                    "page with a filter on an ordered column instead",
                ));
            }
            if !limit_by.is_empty() {
                return Err(ApiError::unsupported("LIMIT BY", "use LIMIT n"));
            }
            match limit {
                None => Ok(None),
                Some(e) => Ok(Some(usize_of(e).ok_or_else(|| {
                    ApiError::unsupported(
                        format!("LIMIT {e}"),
                        "LIMIT takes a non-negative integer",
                    )
                })?)),
            }
        }
        Some(LimitClause::OffsetCommaLimit { .. }) => {
            Err(ApiError::unsupported("LIMIT offset, n", "use LIMIT n"))
        }
    }
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

fn number_of(e: &Expr) -> Option<&str> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Some(n),
            _ => None,
        },
        _ => None,
    }
}

fn string_of(e: &Expr) -> Option<&str> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

fn usize_of(e: &Expr) -> Option<usize> {
    number_of(e)?.parse().ok()
}

fn column_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(id) => Some(id.value.clone()),
        _ => None,
    }
}

fn table_url(name: &ObjectName, urls: &[String]) -> Option<String> {
    let parts: Vec<&str> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(|i| i.value.as_str()))
        .collect::<Option<Vec<_>>>()?;
    match parts.as_slice() {
        [one] => {
            let i: usize = one.strip_prefix(PLACEHOLDER)?.parse().ok()?;
            urls.get(i).cloned()
        }
        // Spark's delta.`<path>`
        ["delta", url] | ["DELTA", url] if url.contains('/') => Some(url.to_string()),
        _ => None,
    }
}

fn source(t: &TableFactor, urls: &[String]) -> Result<Source> {
    let TableFactor::Table {
        name,
        args,
        version,
        with_hints,
        partitions,
        sample,
        json_path,
        with_ordinality,
        ..
    } = t
    else {
        return Err(ApiError::unsupported(
            format!("FROM {}", first_words(&t.to_string())),
            "read from a table: FROM '<table url>' or table_changes('<table url>', from, to)",
        ));
    };
    if !with_hints.is_empty()
        || !partitions.is_empty()
        || sample.is_some()
        || json_path.is_some()
        || *with_ordinality
    {
        return Err(ApiError::unsupported(
            format!("the table clause of `{t}`"),
            "use FROM '<table url>' [VERSION AS OF n | TIMESTAMP AS OF '<ts>']",
        ));
    }
    if let Some(args) = args {
        return table_changes(name, args, version.is_some());
    }
    let Some(url) = table_url(name, urls) else {
        return Err(ApiError::unsupported(
            format!("the table name `{name}`"),
            "name tables by URL: FROM 's3://bucket/path' (or delta.`<url>`)",
        ));
    };
    Ok(Source::Table {
        url,
        at: version_of(version.as_ref())?,
    })
}

/// `table_changes('<url>', from[, to])`: the changes source.
/// (`time_travel`: the call carries `VERSION AS OF` or `TIMESTAMP AS OF`, refused.)
fn table_changes(name: &ObjectName, args: &TableFunctionArgs, time_travel: bool) -> Result<Source> {
    let fname = name.to_string();
    if !fname.eq_ignore_ascii_case("table_changes") {
        return Err(ApiError::unsupported(
            format!("the table function {fname}"),
            "use table_changes('<table url>', from[, to])",
        ));
    }
    if time_travel {
        return Err(ApiError::unsupported(
            "time travel on table_changes",
            "give the versions as its arguments",
        ));
    }
    let exprs: Vec<&Expr> = args
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
            other => Err(ApiError::unsupported(
                format!("the argument `{other}` of table_changes"),
                "pass the table URL and versions as literals",
            )),
        })
        .collect::<Result<_>>()?;
    let bound = |e: &Expr| -> Result<Bound> {
        if let Some(n) = number_of(e) {
            return n
                .parse()
                .map(Bound::Version)
                .map_err(|_| ApiError::param("table_changes", format!("{n} is not a version")));
        }
        if let Some(s) = string_of(e) {
            if let Ok(v) = s.parse() {
                return Ok(Bound::Version(v));
            }
            return Ok(Bound::Timestamp(parse_timestamp(s)?));
        }
        Err(ApiError::param(
            "table_changes",
            format!("`{e}` is neither a version nor a timestamp"),
        ))
    };
    match exprs.as_slice() {
        [url, from] | [url, from, _] => {
            let Some(url) = string_of(url) else {
                return Err(ApiError::param(
                    "table_changes",
                    "the first argument is the table URL, as a string",
                ));
            };
            Ok(Source::Changes {
                url: url.to_string(),
                from: bound(from)?,
                to: exprs.get(2).map(|e| bound(e)).transpose()?,
            })
        }
        _ => Err(ApiError::param(
            "table_changes",
            "takes the table URL, the first version and optionally the last",
        )),
    }
}

/// The version `VERSION AS OF` / `TIMESTAMP AS OF` asks for (the latest without one).
fn version_of(version: Option<&TableVersion>) -> Result<VersionSpec> {
    Ok(match version {
        None => VersionSpec::Latest,
        Some(TableVersion::VersionAsOf(e)) => {
            VersionSpec::Version(number_of(e).and_then(|n| n.parse().ok()).ok_or_else(|| {
                ApiError::param("VERSION AS OF", format!("`{e}` is not a version number"))
            })?)
        }
        Some(TableVersion::TimestampAsOf(e)) => {
            let s = string_of(e).ok_or_else(|| {
                ApiError::param(
                    "TIMESTAMP AS OF",
                    format!("`{e}` is not a quoted timestamp"),
                )
            })?;
            VersionSpec::Timestamp(parse_timestamp(s)?)
        }
        Some(other) => {
            return Err(ApiError::unsupported(
                other.to_string(),
                "use VERSION AS OF n or TIMESTAMP AS OF '<ts>'",
            ));
        }
    })
}

fn aggregate(e: &Expr) -> Result<Option<(AggFunc, Option<String>)>> {
    let Expr::Function(f) = e else {
        return Ok(None);
    };
    let name = f.name.to_string();
    let Some(func) = AggFunc::from_name(&name) else {
        return Err(ApiError::unsupported(
            format!("the function {name}"),
            SELECT_HINT,
        ));
    };
    if f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
        return Err(ApiError::unsupported(
            format!("`{e}`"),
            "aggregates take no FILTER, OVER or WITHIN GROUP",
        ));
    }
    let FunctionArguments::List(list) = &f.args else {
        return Err(ApiError::unsupported(format!("`{e}`"), SELECT_HINT));
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return Err(ApiError::unsupported(
            format!("`{e}` (DISTINCT or clauses inside an aggregate)"),
            "aggregate a plain column",
        ));
    }
    let arg = match list.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if func == AggFunc::Count => None,
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(a))]
            if func == AggFunc::Count && number_of(a).is_some() =>
        {
            None
        }
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(a))] => match column_name(a) {
            Some(c) => Some(c),
            None => {
                return Err(ApiError::unsupported(
                    format!("`{e}`"),
                    "aggregates take one column",
                ));
            }
        },
        _ => {
            return Err(ApiError::unsupported(
                format!("`{e}`"),
                "aggregates take one column (COUNT also takes *)",
            ));
        }
    };
    Ok(Some((func, arg)))
}

fn item(i: &SelectItem) -> Result<Item> {
    let (e, alias) = match i {
        SelectItem::Wildcard(opts) => {
            if opts.opt_ilike.is_some()
                || opts.opt_exclude.is_some()
                || opts.opt_except.is_some()
                || opts.opt_replace.is_some()
                || opts.opt_rename.is_some()
                || opts.opt_alias.is_some()
            {
                return Err(ApiError::unsupported(
                    format!("`{i}`"),
                    "use * or list the columns",
                ));
            }
            return Ok(Item::Star);
        }
        SelectItem::QualifiedWildcard(..) => {
            return Err(ApiError::unsupported(format!("`{i}`"), "use *"));
        }
        SelectItem::UnnamedExpr(e) => (e, None),
        SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.clone())),
        other => {
            return Err(ApiError::unsupported(format!("`{other}`"), SELECT_HINT));
        }
    };
    if let Some(name) = column_name(e) {
        return Ok(Item::Column { name, alias });
    }
    match aggregate(e)? {
        Some((func, arg)) => Ok(Item::Agg { func, arg, alias }),
        None => Err(ApiError::unsupported(
            format!("the expression `{e}` in SELECT"),
            SELECT_HINT,
        )),
    }
}

fn order_target(e: &Expr) -> Result<OrderTarget> {
    if let Some(c) = column_name(e) {
        return Ok(OrderTarget::Name(c));
    }
    if let Some(n) = number_of(e) {
        return match n.parse::<usize>() {
            Ok(p) if p >= 1 => Ok(OrderTarget::Position(p)),
            _ => Err(ApiError::param(
                "ORDER BY",
                format!("{n} is not a column position (1, 2, …)"),
            )),
        };
    }
    match aggregate(e)? {
        Some((func, arg)) => Ok(OrderTarget::Name(agg_name(func, arg.as_deref()))),
        None => Err(ApiError::unsupported(
            format!("ORDER BY `{e}`"),
            "order by output columns, aliases, aggregates or positions",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsupported(sql: &str) -> String {
        match parse_sql(sql) {
            Err(ApiError::Unsupported { construct, .. }) => construct,
            other => panic!("{sql}: expected unsupported, got {other:?}"),
        }
    }

    #[test]
    fn full_subset() {
        let q = parse_sql(
            "SELECT brand, COUNT(*), SUM(price) AS total, avg(price) FROM 's3://b/t' VERSION AS OF 3 \
             WHERE price > 10 AND brand IS NOT NULL GROUP BY brand ORDER BY total DESC, 1 LIMIT 5",
        )
        .unwrap();
        assert_eq!(
            q.source,
            Source::Table {
                url: "s3://b/t".into(),
                at: VersionSpec::Version(3)
            }
        );
        assert_eq!(q.items.len(), 4);
        assert_eq!(q.items[1].output_name().unwrap(), "count(*)");
        assert_eq!(q.items[2].output_name().unwrap(), "total");
        assert_eq!(q.items[3].output_name().unwrap(), "avg(price)");
        assert_eq!(q.group_by, vec!["brand"]);
        assert_eq!(
            q.order_by,
            vec![
                OrderKey {
                    target: OrderTarget::Name("total".into()),
                    descending: true,
                    nulls_first: false
                },
                OrderKey {
                    target: OrderTarget::Position(1),
                    descending: false,
                    nulls_first: true
                }
            ]
        );
        assert_eq!(q.limit, Some(5));
        assert!(q.filter.is_some());
        assert!(q.aggregates());
    }

    #[test]
    fn sources() {
        let q = parse_sql("select * from 'https://h/t' TIMESTAMP AS OF '2024-01-02'").unwrap();
        assert_eq!(
            q.source,
            Source::Table {
                url: "https://h/t".into(),
                at: VersionSpec::Timestamp(1704153600000)
            }
        );
        assert_eq!(q.items, vec![Item::Star]);
        let q = parse_sql("SELECT id FROM delta.`/tmp/x` ").unwrap();
        assert_eq!(q.source.url(), "/tmp/x");
        let q = parse_sql("SELECT * FROM table_changes('r2://B/t', 2, 5) ORDER BY _commit_version")
            .unwrap();
        assert_eq!(
            q.source,
            Source::Changes {
                url: "r2://B/t".into(),
                from: Bound::Version(2),
                to: Some(Bound::Version(5))
            }
        );
        let q = parse_sql("SELECT * FROM table_changes('r2://B/t', '2024-01-01')").unwrap();
        assert!(matches!(
            q.source,
            Source::Changes {
                from: Bound::Timestamp(_),
                to: None,
                ..
            }
        ));
        // a string elsewhere stays a string
        let q = parse_sql("SELECT a FROM 'x/t' WHERE a = 'FROM'").unwrap();
        assert_eq!(q.source.url(), "x/t");
        let q = parse_sql("SELECT count(1) FROM 'x/t'").unwrap();
        assert_eq!(q.items[0].output_name().unwrap(), "count(*)");
    }

    #[test]
    fn outside_the_subset_is_named() {
        assert_eq!(unsupported("SELECT DISTINCT a FROM 'x'"), "DISTINCT");
        assert_eq!(unsupported("SELECT a FROM 'x' JOIN 'y' ON a = b"), "JOIN");
        assert_eq!(
            unsupported("SELECT a + 1 FROM 'x'"),
            "the expression `a + 1` in SELECT"
        );
        assert_eq!(
            unsupported("SELECT upper(a) FROM 'x'"),
            "the function upper"
        );
        assert_eq!(unsupported("SELECT a FROM 'x' LIMIT 5 OFFSET 2"), "OFFSET");
        assert_eq!(
            unsupported("SELECT a, count(*) FROM 'x' GROUP BY a HAVING count(*) > 1"),
            "HAVING"
        );
        assert_eq!(
            unsupported("SELECT a FROM my_table"),
            "the table name `my_table`"
        );
        assert_eq!(unsupported("SELECT 1"), "SELECT without FROM");
        assert_eq!(unsupported("DELETE FROM 'x' WHERE a = 1"), "DELETE FROM");
        assert_eq!(
            unsupported("SELECT a FROM 'x' UNION SELECT a FROM 'y'"),
            "UNION"
        );
        assert_eq!(
            unsupported("SELECT count(DISTINCT a) FROM 'x'"),
            "`count(DISTINCT a)` (DISTINCT or clauses inside an aggregate)"
        );
        assert_eq!(
            unsupported("SELECT a FROM 'x'; SELECT b FROM 'y'"),
            "2 statements"
        );
        assert_eq!(unsupported("WITH t AS (SELECT 1) SELECT * FROM t"), "WITH");
        assert!(matches!(
            parse_sql("SELEC a FROM 'x'"),
            Err(ApiError::Syntax { .. })
        ));
        assert!(matches!(
            parse_sql("SELECT a FROM 'x' WHERE"),
            Err(ApiError::Syntax { .. })
        ));
    }
}

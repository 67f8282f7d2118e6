//! Running a [`Query`]: the filter, the needed columns and (where the result allows) the
//! limit go into the core's scan, so files, row groups and pages are skipped and a
//! preview stops early; grouping, aggregates and ordering run on the rows that come back.
//! The result may hold at most `max_rows` rows ([`ApiError::RowsBudget`] otherwise),
//! and at most `max_rows_buffered` rows are held in memory at once on the way (the scan
//! stops at the batch that would pass it: the `rows_buffered` budget error).

use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::SortOptions;
use arrow_schema::{Schema, SchemaRef};
use arrow_select::take::take_record_batch;
use deltalens_core::changes::{Changes, change_fields};
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{Split, Table};
use deltalens_storage::BudgetKind;

use crate::error::{ApiError, Result};
use crate::partial::{self, Partial};
use crate::sql::{Bound, Item, OrderTarget, Query, Source};

/// A query's result.
#[derive(Debug, Clone)]
pub struct Output {
    /// The result's schema (output names and types).
    pub schema: SchemaRef,
    /// The result's rows, in order.
    pub batches: Vec<RecordBatch>,
    /// The table version read (the end of the range for `table_changes`).
    pub version: u64,
}

impl Output {
    /// The number of rows over every batch.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

fn change_column_names() -> Vec<String> {
    change_fields().iter().map(|f| f.name().clone()).collect()
}

/// What the scan must return for the query: `None` is every column.
fn input_columns(q: &Query, change_cols: &[String]) -> Result<Option<Vec<String>>> {
    if q.items.contains(&Item::Star) {
        if q.aggregates() {
            return Err(ApiError::unsupported(
                "* with aggregates or GROUP BY",
                "list the grouped columns",
            ));
        }
        return Ok(None);
    }
    let aliases: HashSet<String> = q
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Column { alias: Some(a), .. } | Item::Agg { alias: Some(a), .. } => {
                Some(a.clone())
            }
            _ => None,
        })
        .collect();
    let mut cols: Vec<String> = Vec::new();
    let mut add = |c: &str| {
        if !change_cols.iter().any(|x| x == c) && !cols.iter().any(|x| x == c) {
            cols.push(c.to_string());
        }
    };
    for i in &q.items {
        match i {
            Item::Column { name, .. } => add(name),
            Item::Agg { arg: Some(a), .. } => add(a),
            _ => {}
        }
    }
    for g in &q.group_by {
        add(g);
    }
    if !q.aggregates() {
        for k in &q.order_by {
            if let OrderTarget::Name(n) = &k.target
                && !aliases.contains(n)
            {
                add(n);
            }
        }
    }
    if let Some(f) = &q.filter {
        for c in f.columns() {
            if let Some(top) = c.first() {
                add(top);
            }
        }
    }
    Ok(Some(cols))
}

/// How much one query may return and hold; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Rows the result may hold ([`ApiError::RowsBudget`] otherwise).
    pub max_rows: Option<usize>,
    /// Rows read from the table and held in memory at once before they are sorted,
    /// filtered late (change columns) or cut by a LIMIT after ORDER BY, and the groups an
    /// aggregate holds (aggregates fold batch by batch: their rows are not held): the scan
    /// stops at the batch that would pass it, with the `rows_buffered` budget error (413).
    pub max_rows_buffered: Option<usize>,
    /// Bytes the scan may decode ([`ScanOptions::max_decoded_bytes`]): the
    /// `decoded_bytes` budget (413).
    pub max_decoded_bytes: Option<u64>,
}

/// The rows to read for a `limit` within a rows budget `max`: the limit, but never more
/// than one past the budget (the one that tells the rows are more than it allows).
pub(crate) fn rows_to_read(limit: Option<usize>, max: Option<usize>) -> Option<usize> {
    match (limit, max) {
        (Some(l), Some(m)) => Some(l.min(m.saturating_add(1))),
        (l, None) => l,
        (None, Some(m)) => Some(m.saturating_add(1)),
    }
}

/// Run `query` on `table` (whose URL the caller resolved from `query.source`), returning
/// at most `max_rows` rows.
pub async fn execute(query: &Query, table: &Table, max_rows: Option<usize>) -> Result<Output> {
    let limits = Limits {
        max_rows,
        max_rows_buffered: None,
        max_decoded_bytes: None,
    };
    execute_limited(query, table, limits).await
}

/// The rows a query reads from its source, as they come: the schema first, then batches.
enum Event {
    Schema(SchemaRef),
    Batch(RecordBatch),
}

/// The change columns (`_change_type`, …) of a `table_changes` query; none for a table.
fn change_cols_of(query: &Query) -> Vec<String> {
    match query.source {
        Source::Changes { .. } => change_column_names(),
        Source::Table { .. } => Vec::new(),
    }
}

/// A filter on `_change_type` & co.: it runs after the change rows are made.
fn post_filter<'q>(query: &'q Query, change_cols: &[String]) -> Option<&'q Predicate> {
    query.filter.as_ref().filter(|f| {
        f.columns()
            .iter()
            .any(|c| c.first().is_some_and(|top| change_cols.contains(top)))
    })
}

/// Read `query`'s source (a version of the table, or a range of its change feed) with
/// `options`, handing `handle` the schema, then each batch while it returns `true`.
/// Returns the version read (the end of the range for `table_changes`).
async fn read_source(
    query: &Query,
    table: &Table,
    options: ScanOptions,
    handle: &mut dyn FnMut(Event) -> deltalens_core::Result<bool>,
) -> Result<u64> {
    match &query.source {
        Source::Table { at, .. } => {
            // the files chosen while they stream, as the CLI's scan and the explorer do
            // (the same rows for a LIMIT everywhere; a worker never holds a million-file
            // list for a preview or a partition filter)
            let snapshot = table
                .version_info(*at)
                .await?
                .snapshot_for_scan(&options)
                .await?;
            let scan = snapshot.scan(options)?;
            if handle(Event::Schema(scan.schema()))? {
                let mut sink = |b: RecordBatch| handle(Event::Batch(b));
                scan.execute(&mut sink).await?;
            }
            Ok(snapshot.version)
        }
        Source::Changes { from, to, .. } => {
            let from = match from {
                Bound::Version(v) => *v,
                Bound::Timestamp(ts) => table.first_version_at_or_after(*ts).await?,
            };
            let to = match to {
                None => None,
                Some(Bound::Version(v)) => Some(*v),
                Some(Bound::Timestamp(ts)) => Some(table.version_at_timestamp(*ts).await?),
            };
            let changes = Changes::new(table, from, to, options).await?;
            if handle(Event::Schema(changes.schema()?))? {
                let mut sink = |b: RecordBatch| handle(Event::Batch(b));
                changes.execute(&mut sink).await?;
            }
            Ok(changes.to)
        }
    }
}

/// [`read_source`] for one split of a plan of the table.
async fn read_split(
    split: &Split,
    table: &Table,
    options: ScanOptions,
    handle: &mut dyn FnMut(Event) -> deltalens_core::Result<bool>,
) -> Result<u64> {
    // (the split carries the version its plan resolved; the query's own is not read)
    let snapshot = split.snapshot(table.clone())?;
    let scan = snapshot.scan(options)?;
    if handle(Event::Schema(scan.schema()))? {
        let mut sink = |b: RecordBatch| handle(Event::Batch(b));
        scan.execute(&mut sink).await?;
    }
    Ok(split.version)
}

/// What a query reads: the table (its version from the query), or one split of a plan of
/// it (the split names its files: nothing is read from the log).
#[derive(Clone, Copy)]
enum From<'a> {
    Table(&'a Table),
    Split(&'a Split, &'a Table),
}

/// [`execute`] within `limits`.
pub async fn execute_limited(query: &Query, table: &Table, limits: Limits) -> Result<Output> {
    let (out, version) = if query.aggregates() {
        let (states, version) = read_states(query, From::Table(table), limits).await?;
        (finished(query, &states)?, version)
    } else {
        let (batch, version) = read_rows(query, From::Table(table), limits).await?;
        (answer(query, batch)?, version)
    };
    output(out, version, limits.max_rows)
}

/// The aggregate states of `query` (one row per group) over the rows it reads, folded
/// batch by batch as the scan reads them: memory holds the groups and one batch, not the
/// rows, so `max_rows_buffered` bounds the groups held (a `COUNT(*)` of a billion rows
/// holds one). A filter on the change columns applies to each batch first.
async fn read_states(query: &Query, from: From<'_>, limits: Limits) -> Result<(RecordBatch, u64)> {
    let change_cols = change_cols_of(query);
    let columns = input_columns(query, &change_cols)?;
    let post_filter = post_filter(query, &change_cols);
    let options = ScanOptions {
        columns,
        filter: if post_filter.is_some() {
            None
        } else {
            query.filter.clone()
        },
        max_decoded_bytes: limits.max_decoded_bytes,
        ..Default::default()
    };
    let mut acc: Option<RecordBatch> = None;
    let mut schema = None;
    let mut failed: Option<ApiError> = None;
    let fold = |acc: Option<RecordBatch>, b: RecordBatch| -> Result<RecordBatch> {
        let b = match post_filter {
            Some(f) => {
                let mask = f.evaluate(&b)?;
                arrow_select::filter::filter_record_batch(&b, &mask)
                    .map_err(|e| ApiError::compute("the filter", e))?
            }
            None => b,
        };
        let s = partial::states(query, &b)?;
        match acc {
            None => Ok(s),
            Some(a) => partial::merge_states(query, &[a, s]),
        }
    };
    let mut handle = |e: Event| -> deltalens_core::Result<bool> {
        let b = match e {
            Event::Schema(s) => {
                schema = Some(s);
                return Ok(true);
            }
            Event::Batch(b) => b,
        };
        match fold(acc.take(), b) {
            Ok(s) => {
                if let Some(m) = limits.max_rows_buffered
                    && s.num_rows() > m
                {
                    let e = BudgetKind::RowsBuffered.exceeded(
                        m as u64,
                        s.num_rows() as u64,
                        "the groups held to aggregate the result",
                    );
                    failed = Some(ApiError::Core(e.into()));
                    return Ok(false);
                }
                acc = Some(s);
                Ok(true)
            }
            Err(e) => {
                failed = Some(e);
                Ok(false)
            }
        }
    };
    let version = match from {
        From::Table(table) => read_source(query, table, options, &mut handle).await?,
        From::Split(split, table) => read_split(split, table, options, &mut handle).await?,
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let states = match acc {
        Some(a) => a,
        // no rows: the states of none (COUNT(*) is 0, the other aggregates NULL)
        None => {
            let schema =
                schema.ok_or_else(|| ApiError::compute("the result", "no schema was read"))?;
            partial::states(query, &RecordBatch::new_empty(schema))?
        }
    };
    Ok((states, version))
}

/// The answer of an aggregating `query` from its merged states: finished, ordered, cut.
fn finished(query: &Query, states: &RecordBatch) -> Result<RecordBatch> {
    let out = partial::finish(query, states)?;
    let order = order_keys(query, &out, &|_| None)?;
    sort_and_limit(out, &order, query.limit)
}

/// The rows `query` works on, read within `limits` (its filter, columns and, where
/// nothing reorders or groups them, its limit pushed into the scan; a filter on the
/// change columns applied after), and the version read.
async fn read_rows(query: &Query, from: From<'_>, limits: Limits) -> Result<(RecordBatch, u64)> {
    let max_rows = limits.max_rows;
    let change_cols = change_cols_of(query);
    let columns = input_columns(query, &change_cols)?;
    let post_filter = post_filter(query, &change_cols);
    let early_limit = if query.aggregates() || !query.order_by.is_empty() || post_filter.is_some() {
        None
    } else {
        rows_to_read(query.limit, max_rows)
    };
    let options = ScanOptions {
        columns,
        limit: early_limit,
        filter: if post_filter.is_some() {
            None
        } else {
            query.filter.clone()
        },
        max_decoded_bytes: limits.max_decoded_bytes,
        ..Default::default()
    };
    // rows beyond the budget fail early where nothing would cut them later
    let cap = if query.aggregates() || query.limit.is_some() {
        None
    } else {
        max_rows
    };
    let mut batches = Vec::new();
    let mut seen = 0usize;
    let mut overflowed = false;
    let mut schema = None;
    let mut handle = |e: Event| -> deltalens_core::Result<bool> {
        let b = match e {
            Event::Schema(s) => {
                schema = Some(s);
                return Ok(true);
            }
            Event::Batch(b) => b,
        };
        seen = seen.saturating_add(b.num_rows());
        if limits.max_rows_buffered.is_some_and(|m| seen > m) {
            // not kept: stop the scan here
            overflowed = true;
            return Ok(false);
        }
        batches.push(b);
        Ok(cap.is_none_or(|m| seen <= m))
    };
    let version = match from {
        From::Table(table) => read_source(query, table, options, &mut handle).await?,
        From::Split(split, table) => read_split(split, table, options, &mut handle).await?,
    };
    let schema = schema.ok_or_else(|| ApiError::compute("the result", "no schema was read"))?;
    if let Some(m) = cap
        && seen > m
    {
        return Err(ApiError::RowsBudget { limit: m });
    }
    if let (true, Some(m)) = (overflowed, limits.max_rows_buffered) {
        let e = BudgetKind::RowsBuffered.exceeded(
            m as u64,
            seen as u64,
            "the rows held to group, aggregate, sort or filter the result",
        );
        return Err(ApiError::Core(e.into()));
    }
    let mut batch = arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| ApiError::compute("the result", e))?;
    if let Some(f) = post_filter {
        let mask = f.evaluate(&batch)?;
        batch = arrow_select::filter::filter_record_batch(&batch, &mask)
            .map_err(|e| ApiError::compute("the filter", e))?;
    }
    Ok((batch, version))
}

/// `query`'s rows sorted and cut by its ORDER BY and LIMIT, unprojected, and the
/// projection that gives the answer's columns (a query without aggregates).
fn ordered(query: &Query, batch: RecordBatch) -> Result<(RecordBatch, Vec<(String, String)>)> {
    let projection = projection(query, &batch)?;
    let order = order_keys(query, &batch, &|name| {
        projection
            .iter()
            .find(|(out, _)| out == name)
            .map(|(_, src)| src.clone())
    })?;
    let positions: Vec<String> = projection.iter().map(|(_, s)| s.clone()).collect();
    let order = order
        .into_iter()
        .map(|(t, o)| match t {
            Key::Position(p) => (
                Key::Name(positions.get(p - 1).cloned().unwrap_or_default()),
                o,
            ),
            other => (other, o),
        })
        .collect::<Vec<_>>();
    let sorted = sort_and_limit(batch, &order, query.limit)?;
    Ok((sorted, projection))
}

/// The answer to a query without aggregates from the rows it works on: ordered, cut
/// and projected.
fn answer(query: &Query, batch: RecordBatch) -> Result<RecordBatch> {
    let (sorted, projection) = ordered(query, batch)?;
    project(&sorted, &projection)
}

/// `query` over one split of a plan of its table (see [`deltalens_core::split`]), as a
/// state that [`merge_partials`] merges with the other splits' into the whole answer:
/// the groups' aggregate states, or the split's first rows in the query's order. A
/// `LIMIT` without aggregates applies to each split, then to the merge; `limits` holds
/// for this split.
pub async fn execute_partial(
    query: &Query,
    split: &Split,
    table: &Table,
    limits: Limits,
) -> Result<Partial> {
    if !matches!(query.source, Source::Table { .. }) {
        return Err(ApiError::unsupported(
            "a split of table_changes",
            "plan and split a table scan",
        ));
    }
    if query.aggregates() {
        let (states, _) = read_states(query, From::Split(split, table), limits).await?;
        return Ok(Partial::Groups(states));
    }
    let (batch, _) = read_rows(query, From::Split(split, table), limits).await?;
    Ok(Partial::Rows(ordered(query, batch)?.0))
}

/// Partial states of several splits as one (a worker that ran several splits, a level of
/// a merge tree): groups merged, rows sorted and cut again.
pub fn combine_partials(query: &Query, parts: &[Partial]) -> Result<Partial> {
    let batches: Vec<RecordBatch> = parts.iter().map(|p| p.batch().clone()).collect();
    let Some(first) = batches.first() else {
        return Err(ApiError::compute(
            "the merge",
            "no partial results to merge",
        ));
    };
    let wanted = if query.aggregates() { "groups" } else { "rows" };
    if let Some(i) = parts
        .iter()
        .position(|p| matches!(p, Partial::Groups(_)) != query.aggregates())
    {
        return Err(ApiError::compute(
            "the merge",
            format!("partial answer {i} is not of the query's kind ({wanted})"),
        ));
    }
    if query.aggregates() {
        return Ok(Partial::Groups(partial::merge_states(query, &batches)?));
    }
    partial::same_schema(&batches)?;
    let all = arrow_select::concat::concat_batches(&first.schema(), &batches)
        .map_err(|e| ApiError::compute("the partial rows (of another query?)", e))?;
    Ok(Partial::Rows(ordered(query, all)?.0))
}

/// The answer to `query` from the partial states of splits of one plan at `version`
/// (at least one), as [`execute_limited`] gives it on the whole table: groups merged,
/// rows sorted and cut again. `max_rows` holds for the answer.
pub fn merge_partials(
    query: &Query,
    parts: &[Partial],
    version: u64,
    max_rows: Option<usize>,
) -> Result<Output> {
    let out = match combine_partials(query, parts)? {
        Partial::Groups(states) => finished(query, &states)?,
        Partial::Rows(rows) => answer(query, rows)?,
    };
    output(out, version, max_rows)
}

/// `out` as a query's output at `version`, within `max_rows`.
fn output(out: RecordBatch, version: u64, max_rows: Option<usize>) -> Result<Output> {
    if let Some(m) = max_rows
        && out.num_rows() > m
    {
        return Err(ApiError::RowsBudget { limit: m });
    }
    Ok(Output {
        schema: out.schema(),
        batches: vec![out],
        version,
    })
}

/// Where [`execute_streaming`] hands a result: its schema, then its batches in order.
pub trait RowSink {
    /// The result's schema, before any batch; `false` stops the query (no one reads it).
    fn schema(&mut self, schema: SchemaRef) -> bool;
    /// The next batch; `false` stops the query.
    fn batch(&mut self, batch: RecordBatch) -> bool;
}

/// Whether `query`'s rows can go out as the scan reads them: nothing to group, aggregate
/// or order (a filter on the change columns runs on each batch as it comes).
fn streams(query: &Query) -> bool {
    !query.aggregates() && query.order_by.is_empty()
}

/// [`execute_limited`], handing the rows to `sink` batch by batch while the scan reads
/// them, where the query allows it (a projection, a filter and a limit: nothing is held,
/// so `max_rows_buffered` does not apply); other queries run whole, then hand over the
/// result. The rows are those of [`execute_limited`]: `max_rows` fails the query at the
/// batch that passes it (after the rows before it were handed over). Returns the
/// version read.
pub async fn execute_streaming(
    query: &Query,
    table: &Table,
    limits: Limits,
    sink: &mut dyn RowSink,
) -> Result<u64> {
    if !streams(query) {
        let out = execute_limited(query, table, limits).await?;
        if sink.schema(out.schema.clone()) {
            for b in out.batches {
                if !sink.batch(b) {
                    break;
                }
            }
        }
        return Ok(out.version);
    }
    let change_cols = change_cols_of(query);
    // a filter on `_change_type` & co. runs on each batch once the change rows are made
    // (the scan can neither apply it nor stop at the limit)
    let late = post_filter(query, &change_cols);
    let options = ScanOptions {
        columns: input_columns(query, &change_cols)?,
        limit: match late {
            Some(_) => None,
            None => rows_to_read(query.limit, limits.max_rows),
        },
        filter: match late {
            Some(_) => None,
            None => query.filter.clone(),
        },
        max_decoded_bytes: limits.max_decoded_bytes,
        ..Default::default()
    };
    let mut left = query.limit;
    let mut sent = 0usize;
    let mut failed = None;
    let mut columns: Option<Vec<(String, String)>> = None;
    let version = {
        let mut handle = |e: Event| -> deltalens_core::Result<bool> {
            match e {
                Event::Schema(schema) => {
                    let empty = RecordBatch::new_empty(schema);
                    let out = projection(query, &empty)
                        .and_then(|p| project(&empty, &p).map(|b| (p, b.schema())));
                    match out {
                        Ok((p, schema)) => {
                            columns = Some(p);
                            Ok(sink.schema(schema))
                        }
                        Err(e) => {
                            failed = Some(e);
                            Ok(false)
                        }
                    }
                }
                Event::Batch(b) => {
                    let b = match late.map(|f| {
                        f.evaluate(&b).map_err(ApiError::from).and_then(|mask| {
                            arrow_select::filter::filter_record_batch(&b, &mask)
                                .map_err(|e| ApiError::compute("the filter", e))
                        })
                    }) {
                        None => b,
                        Some(Ok(kept)) => kept,
                        Some(Err(e)) => {
                            failed = Some(e);
                            return Ok(false);
                        }
                    };
                    let b = match left {
                        Some(l) => {
                            let n = b.num_rows().min(l);
                            left = Some(l - n);
                            b.slice(0, n)
                        }
                        None => b,
                    };
                    sent = sent.saturating_add(b.num_rows());
                    if let Some(m) = limits.max_rows.filter(|m| sent > *m) {
                        failed = Some(ApiError::RowsBudget { limit: m });
                        return Ok(false);
                    }
                    let Some(p) = &columns else { return Ok(false) };
                    match project(&b, p) {
                        Ok(b) => Ok((b.num_rows() == 0 || sink.batch(b)) && left != Some(0)),
                        Err(e) => {
                            failed = Some(e);
                            Ok(false)
                        }
                    }
                }
            }
        };
        read_source(query, table, options, &mut handle).await?
    };
    match failed {
        Some(e) => Err(e),
        None => Ok(version),
    }
}

/// (output name, input column) of a query without aggregates.
fn projection(q: &Query, batch: &RecordBatch) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for i in &q.items {
        match i {
            Item::Star => {
                for f in batch.schema().fields() {
                    out.push((f.name().clone(), f.name().clone()));
                }
            }
            Item::Column { name, alias } => {
                column(batch, name)?;
                out.push((alias.clone().unwrap_or_else(|| name.clone()), name.clone()));
            }
            Item::Agg { .. } => {}
        }
    }
    Ok(out)
}

fn column<'b>(batch: &'b RecordBatch, name: &str) -> Result<&'b ArrayRef> {
    batch.column_by_name(name).ok_or_else(|| ApiError::Column {
        column: name.to_string(),
        message: format!(
            "no such column; the columns are {}",
            batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

fn project(batch: &RecordBatch, projection: &[(String, String)]) -> Result<RecordBatch> {
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for (out, src) in projection {
        let schema = batch.schema();
        let f = schema.field_with_name(src).map_err(|e| ApiError::Column {
            column: src.clone(),
            message: e.to_string(),
        })?;
        fields.push(f.clone().with_name(out));
        arrays.push(column(batch, src)?.clone());
    }
    RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        arrays,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| ApiError::compute("the selected columns", e))
}

enum Key {
    Name(String),
    Position(usize),
}

/// Resolve the ORDER BY keys against `batch`'s columns (`alias` maps an output name to
/// the input column it comes from).
fn order_keys(
    q: &Query,
    batch: &RecordBatch,
    alias: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(Key, SortOptions)>> {
    q.order_by
        .iter()
        .map(|k| {
            let options = SortOptions {
                descending: k.descending,
                nulls_first: k.nulls_first,
            };
            let key = match &k.target {
                OrderTarget::Position(p) => {
                    let n = q.items.len();
                    if q.items.contains(&Item::Star) {
                        Key::Position(*p)
                    } else if *p > n {
                        return Err(ApiError::param(
                            "ORDER BY",
                            format!("position {p} is past the {n} selected columns"),
                        ));
                    } else if q.aggregates() {
                        Key::Name(q.items[p - 1].output_name().unwrap_or_default())
                    } else {
                        Key::Position(*p)
                    }
                }
                OrderTarget::Name(n) => match alias(n) {
                    Some(src) => Key::Name(src),
                    None => {
                        column(batch, n)?;
                        Key::Name(n.clone())
                    }
                },
            };
            Ok((key, options))
        })
        .collect()
}

fn sort_and_limit(
    batch: RecordBatch,
    keys: &[(Key, SortOptions)],
    limit: Option<usize>,
) -> Result<RecordBatch> {
    if keys.is_empty() {
        let n = limit.unwrap_or(usize::MAX).min(batch.num_rows());
        return Ok(batch.slice(0, n));
    }
    let mut columns = Vec::with_capacity(keys.len());
    let mut fields = Vec::with_capacity(keys.len());
    for (k, options) in keys {
        let values = match k {
            Key::Name(n) => column(&batch, n)?.clone(),
            Key::Position(p) => batch
                .columns()
                .get(p - 1)
                .cloned()
                .ok_or_else(|| ApiError::param("ORDER BY", format!("no column {p}")))?,
        };
        fields.push(SortField::new_with_options(
            values.data_type().clone(),
            *options,
        ));
        columns.push(values);
    }
    // the keys as byte strings that sort like the keys (arrow's row format), then a
    // stable sort of the row numbers
    let rows = RowConverter::new(fields)
        .and_then(|c| c.convert_columns(&columns))
        .map_err(|e| ApiError::compute("ORDER BY", e))?;
    let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
    order.sort_by(|a, b| rows.row(*a as usize).cmp(&rows.row(*b as usize)));
    order.truncate(limit.unwrap_or(usize::MAX));
    let idx = arrow_array::UInt32Array::from(order);
    take_record_batch(&batch, &idx).map_err(|e| ApiError::compute("ORDER BY", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::parse_query;
    use deltalens_storage::MemoryStorage;
    use futures::executor::block_on;
    use std::path::Path;

    /// tests/fixtures/demo (361 rows) in memory.
    fn demo() -> Table {
        fixture("demo")
    }

    /// tests/fixtures/NAME in memory, as `memory://NAME`.
    fn fixture(name: &str) -> Table {
        fn load(m: &MemoryStorage, root: &Path, dir: &Path) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    load(m, root, &p);
                } else {
                    let rel = p
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    m.put(&rel, std::fs::read(&p).unwrap(), 0);
                }
            }
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name);
        let m = MemoryStorage::new();
        load(&m, &root, &root);
        Table::new(Arc::new(m), format!("memory://{name}"))
    }

    /// What a sink was handed, stopping after `stop_after` batches.
    #[derive(Default)]
    struct Collect {
        schema: Option<SchemaRef>,
        batches: Vec<RecordBatch>,
        stop_after: Option<usize>,
    }

    impl RowSink for Collect {
        fn schema(&mut self, schema: SchemaRef) -> bool {
            assert!(
                self.schema.is_none() && self.batches.is_empty(),
                "schema twice or late"
            );
            self.schema = Some(schema);
            true
        }
        fn batch(&mut self, batch: RecordBatch) -> bool {
            let schema = self.schema.as_ref().expect("a batch before the schema");
            assert_eq!(&batch.schema(), schema, "a batch of another schema");
            self.batches.push(batch);
            self.stop_after.is_none_or(|n| self.batches.len() < n)
        }
    }

    /// The fixture a query names (`memory://NAME`).
    fn fixture_of(q: &Query) -> Table {
        match &q.source {
            Source::Table { url, .. } | Source::Changes { url, .. } => {
                fixture(url.trim_start_matches("memory://"))
            }
        }
    }

    fn stream(sql: &str, limits: Limits, stop_after: Option<usize>) -> Result<Collect> {
        let q = crate::sql::parse_sql(sql).unwrap();
        let table = fixture_of(&q);
        let mut sink = Collect {
            stop_after,
            ..Default::default()
        };
        block_on(execute_streaming(&q, &table, limits, &mut sink))?;
        Ok(sink)
    }

    fn whole(sql: &str, limits: Limits) -> Result<RecordBatch> {
        let q = crate::sql::parse_sql(sql).unwrap();
        let table = fixture_of(&q);
        let out = block_on(execute_limited(&q, &table, limits))?;
        Ok(arrow_select::concat::concat_batches(&out.schema, &out.batches).unwrap())
    }

    #[test]
    fn streamed_rows_are_the_rows_of_a_whole_execution() {
        let limits = Limits::default();
        for sql in [
            "SELECT * FROM 'memory://demo'",
            "SELECT user_id, price AS p FROM 'memory://demo'",
            "SELECT * FROM 'memory://demo' WHERE price > 50 AND brand = 'acme'",
            "SELECT brand FROM 'memory://demo' LIMIT 0",
            "SELECT brand FROM 'memory://demo' LIMIT 7",
            "SELECT * FROM 'memory://demo' LIMIT 361",
            "SELECT * FROM 'memory://demo' LIMIT 1000",
            "SELECT * FROM 'memory://partitioned'",
            "SELECT * FROM 'memory://column_mapping'",
            // these run whole, then are handed over
            "SELECT brand, COUNT(*) AS n FROM 'memory://demo' GROUP BY brand ORDER BY n DESC",
            "SELECT user_id FROM 'memory://demo' ORDER BY price DESC LIMIT 3",
            "SELECT * FROM table_changes('memory://cdf', 0)",
            "SELECT * FROM table_changes('memory://cdf', 1, 2) LIMIT 2",
            "SELECT * FROM table_changes('memory://cdf', 0) WHERE _change_type = 'delete'",
            "SELECT * FROM table_changes('memory://cdf', 0) WHERE _change_type <> 'delete' LIMIT 2",
        ] {
            let got = stream(sql, limits, None).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let want = whole(sql, limits).unwrap();
            let schema = got.schema.unwrap_or_else(|| panic!("{sql}: no schema"));
            assert_eq!(schema, want.schema(), "{sql}");
            let rows = arrow_select::concat::concat_batches(&schema, &got.batches).unwrap();
            assert_eq!(rows, want, "{sql}");
        }
    }

    #[test]
    fn a_plain_scan_streams_batch_by_batch_and_stops_when_told() {
        let all = stream(
            "SELECT * FROM 'memory://partitioned'",
            Limits::default(),
            None,
        )
        .unwrap();
        assert!(all.batches.len() > 1, "{} batches", all.batches.len());
        let one = stream(
            "SELECT * FROM 'memory://partitioned'",
            Limits::default(),
            Some(1),
        )
        .unwrap();
        assert_eq!(one.batches.len(), 1);
    }

    #[test]
    fn streamed_rows_keep_the_rows_budget() {
        let tight = Limits {
            max_rows: Some(10),
            ..Limits::default()
        };
        let e = stream("SELECT * FROM 'memory://demo'", tight, None)
            .err()
            .unwrap();
        assert_eq!(e.code(), "rows_budget_exceeded");
        // a limit past the budget too, as execute_limited says
        let e = stream("SELECT * FROM 'memory://demo' LIMIT 50", tight, None)
            .err()
            .unwrap();
        assert_eq!(
            e.code(),
            whole("SELECT * FROM 'memory://demo' LIMIT 50", tight)
                .unwrap_err()
                .code()
        );
        let ok = stream("SELECT * FROM 'memory://demo' LIMIT 10", tight, None).unwrap();
        assert_eq!(ok.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 10);
        // a missing column is an error before any row
        let e = stream("SELECT nope FROM 'memory://demo'", Limits::default(), None)
            .err()
            .unwrap();
        assert_eq!(
            e.code(),
            whole("SELECT nope FROM 'memory://demo'", Limits::default())
                .unwrap_err()
                .code()
        );
    }

    fn run(sql: &str, limits: Limits) -> Result<Output> {
        let q = crate::sql::parse_sql(&sql.replace("{T}", "memory://demo")).unwrap();
        block_on(execute_limited(&q, &demo(), limits))
    }

    #[test]
    fn rows_held_for_order_by_and_groups_held_for_aggregates_are_bounded() {
        let tight = Limits {
            max_rows: Some(1000),
            max_rows_buffered: Some(100),
            max_decoded_bytes: None,
        };
        // aggregates fold batch by batch: 361 rows in few groups hold few
        for sql in [
            "SELECT brand, COUNT(*) FROM '{T}' GROUP BY brand",
            "SELECT COUNT(*), SUM(price), MIN(event_time) FROM '{T}'",
        ] {
            let out = run(sql, tight).unwrap();
            let want = run(sql, Limits::default()).unwrap();
            assert_eq!(out.batches, want.batches, "{sql}");
        }
        for sql in [
            // a group per row: 361 groups
            "SELECT event_time, COUNT(*) FROM '{T}' GROUP BY event_time",
            "SELECT user_id FROM '{T}' ORDER BY price DESC LIMIT 3",
        ] {
            let e = run(sql, tight).unwrap_err();
            assert_eq!(
                (e.code().as_str(), e.status()),
                ("rows_buffered_budget_exceeded", 413),
                "{sql}"
            );
            assert!(e.to_string().contains("rows_buffered budget"), "{e}");
            assert!(e.to_string().contains("(100)"), "{e}");
        }
        // within the budget, and a preview that stops early, are fine
        let roomy = Limits {
            max_rows_buffered: Some(361),
            ..tight
        };
        let n = run("SELECT COUNT(*) AS n FROM '{T}'", roomy).unwrap();
        assert_eq!(n.num_rows(), 1);
        let preview = run("SELECT user_id FROM '{T}' LIMIT 5", tight).unwrap();
        assert_eq!(preview.num_rows(), 5);
        // the rows budget still names itself
        let e = run(
            "SELECT * FROM '{T}'",
            Limits {
                max_rows: Some(10),
                ..roomy
            },
        )
        .unwrap_err();
        assert_eq!(e.code(), "rows_budget_exceeded");
    }

    #[test]
    fn answers_apply_the_limits() {
        let api = parse_query(
            "SELECT user_id, COUNT(*) FROM 'memory://demo' GROUP BY user_id",
            &[],
        )
        .unwrap();
        let limits = Limits {
            max_rows: Some(1000),
            max_rows_buffered: Some(10),
            max_decoded_bytes: None,
        };
        let e = block_on(crate::respond(api, &demo(), limits, 0)).unwrap_err();
        assert_eq!(e.code(), "rows_buffered_budget_exceeded");
    }

    #[test]
    fn files_are_listed_whole_or_a_page_at_a_time() {
        let get = |params: &[(&str, &str)]| {
            let params: Vec<(String, String)> = params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let api = crate::request::parse_get("/v1/files", &params).unwrap();
            let r = block_on(crate::respond(api, &demo(), Limits::default(), 0)).unwrap();
            let v: serde_json::Value = deltalens_json::from_slice(&r.body).unwrap();
            v.as_array().unwrap().clone()
        };
        let all = get(&[("table", "memory://demo")]);
        assert!(all.len() > 3, "{}", all.len());
        let stream = get(&[("table", "memory://demo"), ("offset", "0")]);
        let page = get(&[("table", "memory://demo"), ("offset", "1"), ("limit", "2")]);
        assert_eq!(page[..], stream[1..3]);
        // the same files either way, in log order or by path
        let paths = |v: &[serde_json::Value]| {
            let mut p: Vec<String> = v.iter().map(|f| f["path"].to_string()).collect();
            p.sort();
            p
        };
        assert_eq!(paths(&stream), paths(&all));
        assert!(
            crate::request::parse_get(
                "/v1/files",
                &[("table".into(), "x".into()), ("offset".into(), "-1".into())]
            )
            .is_err()
        );
    }
}

//! The explorer's query module: the SQL subset of `deltalens query` and the edge worker
//! (`deltalens_api`: projection, filter, COUNT/SUM/MIN/MAX/AVG, GROUP BY, ORDER BY, LIMIT,
//! `VERSION AS OF`, `TIMESTAMP AS OF`, `table_changes`) on the table open in the page.
//!
//! It is fetched the first time the Query tab runs a query, never on the first load (the
//! SQL parser alone would not fit the page's size budget), and runs in a Web Worker
//! (`web/query/worker.js`): a query never blocks the page, and Cancel ends the worker,
//! which aborts its requests at once. The page sends a [`protocol::Request`] and shows
//! the [`protocol::Answer`]; both are JSON.
//!
//! What a query may read is fixed before it runs: the SQL must name the open table (a
//! link's query cannot send this table's credentials anywhere else), it reads the version
//! on screen unless it names one, and the budgets of [`protocol::Budgets`] bound its
//! result, the rows it holds, the bytes it decodes and reads, its requests and its time.
//!
//! [`prepare`], [`run`], [`answer`] and [`file`] are plain Rust, tested natively; the
//! `#[wasm_bindgen]` exports wrap them with the browser's storage.

// The storage is not `Send` on wasm32 (JS futures); a worker has one thread and shares it
// between the query and the progress it reports through `Arc`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

pub mod protocol;
#[cfg(target_arch = "wasm32")]
mod worker;

use std::future::Future;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_schema::DataType;
use deltalens_api::{
    ApiError, FanOutOptions, Limits, Output, Partial, Query, Source, execute_limited,
    execute_partial, fan_out, parse_sql,
};
use deltalens_core::scan::ScanOptions;
use deltalens_core::{PlanOptions, Split, Table, VersionSpec};
use deltalens_present::Format;
use deltalens_present::cell::text_rows;
use serde::{Deserialize, Serialize};

use crate::protocol::{Answer, Budgets, Column, Progress, SHOWN_ROWS};

/// A table URL as the page and the SQL may write it: without surrounding blanks or a
/// trailing `/`.
fn normalized(url: &str) -> &str {
    url.trim().trim_end_matches('/')
}

/// `sql` as the Query tab runs it on the table open at `url`: parsed, refused unless it
/// names that table, and pinned to `shown` (the version on screen) unless it names a
/// version or a time itself.
pub fn prepare(sql: &str, url: &str, shown: Option<u64>) -> Result<Query, String> {
    let mut query = parse_sql(sql).map_err(|e| e.to_string())?;
    let open = normalized(url);
    let named = match &query.source {
        Source::Table { url, .. } | Source::Changes { url, .. } => normalized(url).to_string(),
    };
    if named != open {
        return Err(format!(
            "the query reads {named}, not the table open here ({open}): the Query tab reads \
             the open table only (open {named} to query it)"
        ));
    }
    if let (Source::Table { at, .. }, Some(v)) = (&mut query.source, shown)
        && *at == VersionSpec::Latest
    {
        *at = VersionSpec::Version(v);
    }
    Ok(query)
}

/// The API's limits of `budgets` (the storage budgets are the caller's storage's).
pub fn limits(budgets: &Budgets) -> Limits {
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Limits {
        max_rows: Some(count(budgets.max_rows)),
        max_rows_buffered: Some(count(budgets.max_rows_buffered)),
        max_decoded_bytes: Some(budgets.max_decoded_bytes),
    }
}

/// Run `query` on `table` within `budgets`.
pub async fn run(table: &Table, query: &Query, budgets: &Budgets) -> Result<Output, String> {
    execute_limited(query, table, limits(budgets))
        .await
        .map_err(|e| e.to_string())
}

/// A query over fewer bytes of data files than this is read by one worker: cutting it
/// costs more (each worker of the pool fetches its files' footers on its own) than it saves.
pub const MIN_POOL_BYTES: u64 = 16 << 20;

/// A query read by a pool of workers, or by one.
#[derive(Debug)]
pub struct Pooled {
    pub output: Output,
    /// The splits it was cut into (1: read by this worker alone).
    pub splits: usize,
}

/// One split of a query, for a worker of the pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitRequest {
    /// The query's request, with the split's share of the budgets.
    pub request: protocol::Request,
    /// The files it reads (the plan's version: nothing is read from the log).
    pub split: Split,
}

/// Whether `query` may be cut into splits whose partial answers merge into its answer: a
/// table (not a change feed) aggregated or ordered. A plain `SELECT … LIMIT n` stops early
/// when read in one piece.
fn worth_splitting(query: &Query) -> bool {
    matches!(query.source, Source::Table { .. })
        && (query.aggregates() || !query.order_by.is_empty())
}

/// The budgets of one of `n` splits: a share of the bytes read, the requests and the bytes
/// decoded; the result rows, the rows held and the time are each worker's own.
pub fn split_budgets(b: &Budgets, n: usize) -> Budgets {
    let n = n.max(1) as u64;
    Budgets {
        max_bytes: b.max_bytes.div_ceil(n),
        max_requests: b.max_requests.div_ceil(n),
        max_decoded_bytes: b.max_decoded_bytes.div_ceil(n),
        ..*b
    }
}

/// One split of `query` read here: its partial state as Arrow IPC (what a worker of the
/// pool answers its coordinator).
pub async fn run_split(
    table: &Table,
    query: &Query,
    split: &Split,
    budgets: &Budgets,
) -> Result<Vec<u8>, String> {
    let partial = execute_partial(query, split, table, limits(budgets))
        .await
        .map_err(|e| e.to_string())?;
    partial.to_ipc().map_err(|e| e.to_string())
}

/// `query` read by a pool of `width` workers when it is worth it — a table of at least
/// `min_bytes` (after the filter's pruning) that it aggregates or orders, cut into splits
/// as the edge worker's fan-out cuts it, each split's partial state answered by `call`,
/// merged here by the fan-out's own code (`deltalens_api::fan_out`) — or else read here.
pub async fn run_pooled<F, Fut>(
    table: &Table,
    query: &Query,
    budgets: &Budgets,
    width: usize,
    min_bytes: u64,
    call: F,
) -> Result<Pooled, String>
where
    F: Fn(&Split, usize) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, String>>,
{
    let alone = || async move {
        run(table, query, budgets)
            .await
            .map(|output| Pooled { output, splits: 1 })
    };
    let Source::Table { at, .. } = &query.source else {
        return alone().await;
    };
    if width < 2 || !worth_splitting(query) {
        return alone().await;
    }
    let info = table.version_info(*at).await.map_err(|e| e.to_string())?;
    let scan = ScanOptions {
        filter: query.filter.clone(),
        ..Default::default()
    };
    let cut = PlanOptions {
        splits: Some(width),
        ..Default::default()
    };
    let plan = info.plan(&scan, &cut).await.map_err(|e| e.to_string())?;
    if plan.bytes < min_bytes || plan.splits.len() < 2 {
        return alone().await;
    }
    let limits = limits(budgets);
    let held = limits.max_rows_buffered.unwrap_or(usize::MAX);
    let splits = plan.splits.len();
    let options = FanOutOptions {
        concurrency: width,
        // a worker that failed once fails again: its error is the query's
        attempts: 1,
        max_requests: u32::try_from(splits).unwrap_or(u32::MAX),
    };
    let ask = |split: &Split, n: usize| {
        let answer = call(split, n);
        async move {
            let bytes = answer.await.map_err(|message| ApiError::Remote {
                status: 500,
                code: "split_failed".into(),
                message,
            })?;
            Partial::from_ipc(&bytes, held)
        }
    };
    let output = fan_out(query, &plan, &options, limits.max_rows, ask)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Pooled { output, splits })
}

/// The values of column `i` of `batches` as numbers (at most [`SHOWN_ROWS`]), when the
/// column is numeric.
fn numbers(batches: &[RecordBatch], i: usize, data_type: &DataType) -> Option<Vec<Option<f64>>> {
    if !data_type.is_numeric() {
        return None;
    }
    let mut out = Vec::new();
    for b in batches {
        let left = SHOWN_ROWS - out.len();
        if left == 0 {
            break;
        }
        let column = b.column(i).slice(0, left.min(b.num_rows()));
        let as_f64 = arrow_cast::cast(&column, &DataType::Float64).ok()?;
        out.extend(as_f64.as_primitive::<Float64Type>().iter());
    }
    Some(out)
}

/// The result as the page shows it: the first [`SHOWN_ROWS`] rows as text cells, the
/// numeric columns as numbers for a chart.
pub fn answer(query: &Query, out: &Output, io: Progress) -> Result<Answer, String> {
    let mut rows = Vec::new();
    let mut shown = Vec::new();
    for b in &out.batches {
        let left = SHOWN_ROWS - rows.len();
        if left == 0 {
            break;
        }
        let part = b.slice(0, left.min(b.num_rows()));
        rows.extend(text_rows(&part, "∅").map_err(|e| e.to_string())?);
        shown.push(part);
    }
    let columns = out
        .schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| Column {
            name: f.name().clone(),
            data_type: f.data_type().to_string(),
            numbers: numbers(&shown, i, f.data_type()),
        })
        .collect();
    Ok(Answer {
        columns,
        rows,
        total_rows: out.num_rows() as u64,
        version: out.version,
        grouped: !query.group_by.is_empty(),
        requests: io.requests,
        bytes: io.bytes,
        splits: 1,
        busy_ms: Vec::new(),
    })
}

/// The whole result as a file: `csv`, `tsv`, `json`, `jsonl` or `arrow` (the writers of
/// the CLI's `--format`; the page makes Parquet from the Arrow stream in its writer
/// module).
pub fn file(out: &Output, format: &str) -> Result<Vec<u8>, String> {
    let kind = Format::from_name(format)
        .filter(|f| *f != Format::Table)
        .ok_or_else(|| {
            format!("{format:?} is not a download format (csv, tsv, json, jsonl, arrow)")
        })?;
    deltalens_present::encode(kind, &out.schema, &out.batches).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;

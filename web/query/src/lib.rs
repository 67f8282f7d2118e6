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

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_schema::DataType;
use deltalens_api::{Limits, Output, Query, Source, execute_limited, parse_sql};
use deltalens_core::{Table, VersionSpec};
use deltalens_present::Format;
use deltalens_present::cell::text_rows;

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

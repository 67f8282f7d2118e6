//! Answering an [`ApiRequest`] on an opened table: the JSON documents of `deltalens info |
//! health | schema | files | history --json`, or rows in the requested format. The worker serves
//! this; the tests run the same natively to compare.

use deltalens_core::diff::TableDiff;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{Table, VersionSpec};
use deltalens_present::diff::diff_document;
use deltalens_present::health::HISTORY_COMMITS;
use deltalens_present::{FileRow, Health, HealthSeries, Overview, encode};
use serde::Serialize;

use crate::error::{ApiError, Result};
use crate::execute::{Limits, execute_limited, execute_partial, rows_to_read};
use crate::request::ApiRequest;

/// The content type of a split's partial state (`POST /v1/partial`).
pub const PARTIAL_CONTENT_TYPE: &str = "application/vnd.apache.arrow.stream";

/// A response body and what the headers say about it.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    /// The `Content-Type` of the body (`application/json` for documents).
    pub content_type: &'static str,
    /// The encoded document or rows.
    pub body: Vec<u8>,
    /// The table version read.
    pub version: u64,
    /// Rows returned (row requests only).
    pub rows: Option<usize>,
}

/// `doc` as one line of JSON.
fn document(doc: &impl Serialize, version: u64) -> Result<ApiResponse> {
    let mut body = serde_json::to_vec(doc).map_err(|e| ApiError::Encode {
        format: "json",
        message: e.to_string(),
    })?;
    body.push(b'\n');
    Ok(ApiResponse {
        content_type: "application/json",
        body,
        version,
        rows: None,
    })
}

/// The active files of version `at` from `offset`, at most `limit`, in log order: they
/// stream and only the page is held. A response holds at most `max` files (the rows
/// budget): a longer list, or a larger `limit`, is refused with a hint to page.
async fn files(
    table: &Table,
    at: VersionSpec,
    limit: Option<usize>,
    offset: usize,
    max: Option<usize>,
) -> Result<ApiResponse> {
    if let (Some(l), Some(m)) = (limit, max)
        && l > m
    {
        return Err(ApiError::FilesBudget { limit: m });
    }
    let v = table.version_info(at).await?;
    // one more than a response may hold: to know the list is longer
    let want = limit.or(max.map(|m| m.saturating_add(1)));
    let page = v.files_page(offset, want).await?;
    if let Some(m) = max
        && page.len() > m
    {
        return Err(ApiError::FilesBudget { limit: m });
    }
    let rows = page
        .iter()
        .map(|f| Ok(FileRow::new(f, v.partition_values_json(f)?)))
        .collect::<Result<Vec<_>>>()?;
    document(&rows, v.version)
}

/// What changed between versions `from` and `to`, with at most `limit` of the changed
/// rows; a response holds at most `max` rows (the rows budget).
async fn diff(
    table: &Table,
    from: u64,
    to: u64,
    columns: Option<Vec<String>>,
    limit: Option<usize>,
    max: Option<usize>,
) -> Result<ApiResponse> {
    let d = TableDiff::new(table, from, to).await?;
    let options = ScanOptions {
        columns,
        limit: rows_to_read(limit, max),
        ..Default::default()
    };
    let mut batches = Vec::new();
    let mut seen = 0usize;
    d.rows(&options, &mut |b| {
        seen = seen.saturating_add(b.num_rows());
        batches.push(b);
        Ok(true)
    })
    .await?;
    if let Some(m) = max
        && seen > m
        && limit.is_none_or(|l| l > m)
    {
        return Err(ApiError::RowsBudget { limit: m });
    }
    let doc = diff_document(&d, &d.row_schema(&options)?, &batches)?;
    document(&doc, d.to.version)
}

/// Answer `api` on `table` (the URL it names, already allowed and opened) within
/// `limits` (rows returned, rows held in memory on the way); `now_ms` is the caller's
/// clock (ms since the epoch), which the health report measures ages from.
pub async fn respond(
    api: ApiRequest,
    table: &Table,
    limits: Limits,
    now_ms: i64,
) -> Result<ApiResponse> {
    match api {
        // the version without its file list: totals are streamed over the files, and the
        // schema needs no file at all (a million-file table fits a worker's 128 MB)
        ApiRequest::Info { at, .. } => {
            let v = table.version_info(at).await?;
            let totals = v.file_totals(&mut |_| true).await?;
            document(
                &Overview::of_version(table.location(), &v, Some(&totals)),
                v.version,
            )
        }
        // streamed as for info: memory follows the partitions, not the files
        ApiRequest::Health {
            at,
            now_ms: asked,
            series: Some(points),
            ..
        } => {
            let newest = table.version_info(at).await?.version;
            let history = table.history(Some(HISTORY_COMMITS)).await?;
            let now_ms = asked.unwrap_or(now_ms);
            let s = HealthSeries::read(table, &history, Some(newest), points, now_ms).await?;
            document(&s, newest)
        }
        ApiRequest::Health {
            at, now_ms: asked, ..
        } => {
            let h = Health::of_table(table, at, asked.unwrap_or(now_ms)).await?;
            let version = h.version;
            document(&h, version)
        }
        ApiRequest::Schema { at, .. } => {
            let v = table.version_info(at).await?;
            document(&v.schema.raw, v.version)
        }
        ApiRequest::Files {
            at, limit, offset, ..
        } => files(table, at, limit, offset.unwrap_or(0), limits.max_rows).await,
        ApiRequest::History { limit, .. } => {
            let h = table.history(limit).await?;
            document(&h, h.first().map_or(0, |e| e.version))
        }
        ApiRequest::Diff {
            from,
            to,
            columns,
            limit,
            ..
        } => diff(table, from, to, columns, limit, limits.max_rows).await,
        ApiRequest::Partial { query, split } => {
            let p = execute_partial(&query, &split, table, limits).await?;
            Ok(ApiResponse {
                content_type: PARTIAL_CONTENT_TYPE,
                rows: Some(p.batch().num_rows()),
                body: p.to_ipc()?,
                version: split.version,
            })
        }
        ApiRequest::Rows { query, format } => {
            let out = execute_limited(&query, table, limits).await?;
            Ok(ApiResponse {
                content_type: format.content_type(),
                body: encode(format, &out.schema, &out.batches)?,
                version: out.version,
                rows: Some(out.num_rows()),
            })
        }
    }
}

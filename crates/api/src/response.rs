//! Answering an [`ApiRequest`] on an opened table: the JSON documents of `deltalens info |
//! schema | files | history --json`, or rows in the requested format. The worker serves
//! this; the tests run the same natively to compare.

use deltalens_core::Table;
use serde_json::Value;

use crate::encode::encode;
use crate::error::{ApiError, Result};
use crate::execute::{Limits, execute_limited};
use crate::request::ApiRequest;

/// A response body and what the headers say about it.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// The table version read.
    pub version: u64,
    /// Rows returned (row requests only).
    pub rows: Option<usize>,
}

fn document(v: &Value, version: u64) -> ApiResponse {
    let mut body = v.to_string().into_bytes();
    body.push(b'\n');
    ApiResponse {
        content_type: "application/json",
        body,
        version,
        rows: None,
    }
}

/// Answer `api` on `table` (the URL it names, already allowed and opened) within
/// `limits` (rows returned, rows held in memory on the way).
pub async fn respond(api: ApiRequest, table: &Table, limits: Limits) -> Result<ApiResponse> {
    Ok(match api {
        ApiRequest::Info { at, .. } => {
            let s = table.snapshot(at).await?;
            document(
                &deltalens_present::overview(table.location(), &s),
                s.version,
            )
        }
        ApiRequest::Schema { at, .. } => {
            let s = table.snapshot(at).await?;
            document(&s.schema.raw, s.version)
        }
        ApiRequest::Files { at, .. } => {
            let s = table.snapshot(at).await?;
            document(&Value::Array(deltalens_present::files(&s)?), s.version)
        }
        ApiRequest::History { limit, .. } => {
            let h = table.history(limit).await?;
            let version = h.first().map_or(0, |e| e.version);
            let v = serde_json::to_value(&h).map_err(|e| ApiError::Encode {
                format: "json",
                message: e.to_string(),
            })?;
            document(&v, version)
        }
        ApiRequest::Rows { query, format } => {
            let out = execute_limited(&query, table, limits).await?;
            ApiResponse {
                content_type: format.content_type(),
                body: encode(format, &out.schema, &out.batches)?,
                version: out.version,
                rows: Some(out.num_rows()),
            }
        }
    })
}

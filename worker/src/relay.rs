//! The relay protocol ([`deltalens_storage::relay`]) on the worker: a team deploys one
//! worker, and every explorer tab reads the allowed tables through it (`?via=` the
//! worker) with the worker's credentials — no CORS rule on the bucket, no storage secret in
//! a tab. The same token, allowlist and budgets as every other route: one relayed request
//! is one storage read (plus retries), its bytes charged to the byte budget.

use bytes::Bytes;
use deltalens_storage::relay::{self, ListPage, RelayRequest};
use deltalens_storage::{ByteRange, Storage, StorageError, http_range};
use worker::{Env, Headers, Response};

use crate::config::Config;
use crate::errors::ErrorResponse;
use crate::storage::Opened;
use deltalens_api::Failure;

/// The relay's answer to `route` with `query`, or `None` when the route is not the relay's.
pub async fn answer(
    route: &str,
    query: &str,
    head: bool,
    range: Option<String>,
    env: &Env,
    config: &Config,
) -> Option<Result<Response, ErrorResponse>> {
    if route == relay::CATALOG_ROUTE {
        let name = match relay::parse_catalog_request(query) {
            Ok(n) => n,
            Err(e) => return Some(Err(ErrorResponse::new(Failure::InvalidParameter, e.0))),
        };
        return Some(match crate::catalog::browse(&name, env, config).await {
            Ok(entries) => json(&relay::CatalogEntry::list_json(&entries)),
            Err(e) => Err(e),
        });
    }
    if route == relay::TABLES_ROUTE {
        let prefixes = config.allowlist.prefixes();
        return Some(json(&serde_json::json!({ "tables": prefixes }).to_string()));
    }
    let parsed = match relay::parse_request(route, query) {
        Ok(Some(r)) => r,
        Ok(None) => return None,
        Err(e) => return Some(Err(ErrorResponse::new(Failure::InvalidParameter, e.0))),
    };
    Some(relay_request(parsed, head, range, env, config).await)
}

async fn relay_request(
    req: RelayRequest,
    head: bool,
    range: Option<String>,
    env: &Env,
    config: &Config,
) -> Result<Response, ErrorResponse> {
    // before anything is fetched: the table must be allowed
    config.allowlist.check(req.table())?;
    let opened = crate::catalog::open(req.table(), env, config).await?;
    opened.budget.set_timer(deltalens_fetch_storage::sleep);
    let storage = &opened.storage;
    let fail = |e: StorageError| ErrorResponse::from(deltalens_core::Error::from(e));
    let response = match req {
        RelayRequest::List {
            prefix,
            start_after,
            ..
        } => {
            let objects = storage
                .list(&prefix, start_after.as_deref())
                .await
                .map_err(fail)?;
            json(&ListPage::of(objects).to_json())?
        }
        RelayRequest::Object { path, .. } if head => {
            let m = storage.head(&path).await.map_err(fail)?;
            bytes_response(
                &path,
                200,
                Bytes::new(),
                Some(m.size),
                None,
                m.last_modified_ms,
            )?
        }
        RelayRequest::Object { path, .. } => {
            let asked = range.as_deref().and_then(http_range::requested_range);
            object(storage, &path, asked).await.map_err(fail)?
        }
    };
    budget_headers(&opened, response)
}

/// The object, a range of it (206 with `Content-Range`; the size is known for a suffix,
/// `*` otherwise: finding it would cost a subrequest), or 416.
async fn object(
    storage: &deltalens_storage::DynStorage,
    path: &str,
    range: Option<ByteRange>,
) -> Result<Response, StorageError> {
    let partial = |data: Bytes, start: u64, size: Option<u64>| {
        let end = start + data.len() as u64;
        let total = size.map_or("*".to_string(), |s| s.to_string());
        let content_range = if data.is_empty() {
            None
        } else {
            Some(format!("bytes {start}-{}/{total}", end - 1))
        };
        (data, content_range)
    };
    let (status, data, content_range) = match range {
        None => (200, storage.get(path).await?, None),
        Some(ByteRange::Suffix(n)) => {
            let (data, size) = storage.get_tail(path, n).await?;
            let start = size - data.len() as u64;
            let (d, cr) = partial(data, start, Some(size));
            (206, d, cr)
        }
        Some(r) => {
            let start = match &r {
                ByteRange::Bounded(b) => b.start,
                ByteRange::From(o) => *o,
                ByteRange::Suffix(_) => 0,
            };
            match storage.get_range(path, r).await {
                Ok(data) => {
                    let (d, cr) = partial(data, start, None);
                    (206, d, cr)
                }
                // the store's own 416: its size, for the answer's Content-Range
                Err(StorageError::Http { status: 416, .. }) => {
                    let size = storage.head(path).await?.size;
                    let h = Headers::new();
                    let _ = h.set("content-range", &format!("bytes */{size}"));
                    return Ok(Response::empty()
                        .map_err(|e| backend(path, e))?
                        .with_status(416)
                        .with_headers(h));
                }
                Err(StorageError::InvalidRange { size, .. }) => {
                    let h = Headers::new();
                    let _ = h.set("content-range", &format!("bytes */{size}"));
                    return Ok(Response::empty()
                        .map_err(|e| backend(path, e))?
                        .with_status(416)
                        .with_headers(h));
                }
                Err(e) => return Err(e),
            }
        }
    };
    let resp = bytes_response(path, status, data, None, content_range, None).map_err(|e| {
        StorageError::Backend {
            path: path.to_string(),
            operation: "get",
            message: e.message,
        }
    })?;
    Ok(resp)
}

fn backend(path: &str, e: worker::Error) -> StorageError {
    StorageError::Backend {
        path: path.to_string(),
        operation: "get",
        message: e.to_string(),
    }
}

fn bytes_response(
    path: &str,
    status: u16,
    data: Bytes,
    length: Option<u64>,
    content_range: Option<String>,
    last_modified_ms: Option<i64>,
) -> Result<Response, ErrorResponse> {
    let h = Headers::new();
    h.set("content-type", "application/octet-stream")?;
    h.set("accept-ranges", "bytes")?;
    h.set("cache-control", relay::cache_control(path))?;
    h.set("content-security-policy", "sandbox")?;
    if let Some(cr) = content_range {
        h.set("content-range", &cr)?;
    }
    if let Some(n) = length {
        h.set("content-length", &n.to_string())?;
    }
    if let Some(ms) = last_modified_ms {
        let date = js_sys::Date::new(&worker::wasm_bindgen::JsValue::from_f64(ms as f64));
        h.set("last-modified", &String::from(date.to_utc_string()))?;
    }
    Ok(Response::from_bytes(data.to_vec())?
        .with_status(status)
        .with_headers(h))
}

fn json(body: &str) -> Result<Response, ErrorResponse> {
    let h = Headers::new();
    h.set("content-type", "application/json")?;
    h.set("cache-control", "private, no-store")?;
    Ok(Response::ok(body)?.with_headers(h))
}

/// The request's storage use, as on every route.
fn budget_headers(opened: &Opened, r: Response) -> Result<Response, ErrorResponse> {
    let h = r.headers().clone();
    h.set(
        "x-deltalens-subrequests",
        &opened.budget.requests().to_string(),
    )?;
    h.set("x-deltalens-bytes-read", &opened.budget.bytes().to_string())?;
    Ok(r.with_headers(h))
}

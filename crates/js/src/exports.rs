//! What JavaScript calls: `openTable(url, options)` → a [`Table`] whose methods answer
//! as the worker's routes do, and `query(sql, options)`.

use std::sync::Arc;
use std::time::Duration;

use deltalens_api::execute::Limits;
use deltalens_api::request::{parse_get, parse_query};
use deltalens_api::{ApiRequest, respond};
use deltalens_fetch_storage::{FetchStorage, Sleep, boxed_sleep};
use deltalens_storage::{CachingStorage, RetryPolicy, RetryStorage};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::error;
use crate::options;

/// Bytes of objects kept between calls on one table (the log's tail, checkpoint parts).
const CACHE_BYTES: usize = 32 * 1024 * 1024;

/// A Delta table opened for reading (nothing is fetched until a method asks).
#[wasm_bindgen]
pub struct Table {
    url: String,
    table: deltalens_core::Table,
    limits: Limits,
}

/// True in Cloudflare Workers (whose `fetch` takes no CORS mode).
fn in_workers() -> bool {
    let nav = Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or(JsValue::UNDEFINED);
    Reflect::get(&nav, &"userAgent".into())
        .ok()
        .and_then(|u| u.as_string())
        .is_some_and(|u| u == "Cloudflare-Workers")
}

fn open(url: &str, options: &JsValue) -> Result<Table, JsValue> {
    let o = options::open(options)?;
    let url = url.trim().trim_end_matches('/').to_string();
    let mut fetch = FetchStorage::open(&url, &o.browser).map_err(|e| error::location(&e))?;
    if o.server.unwrap_or_else(in_workers) {
        fetch = fetch.on_server();
    }
    if let Some(hook) = o.fetch {
        fetch = fetch.with_fetch(hook);
    }
    if let Some(ms) = o.timeout_ms {
        fetch = fetch.with_timeout(Duration::from_millis(u64::from(ms)));
    }
    let retry = RetryStorage::new(fetch, RetryPolicy::default(), boxed_sleep as Sleep);
    let storage = Arc::new(CachingStorage::new(retry, CACHE_BYTES));
    let max_rows = o.max_rows.unwrap_or(options::MAX_ROWS);
    Ok(Table {
        table: deltalens_core::Table::new(storage, &url),
        url,
        limits: Limits {
            max_rows: Some(max_rows),
            max_rows_buffered: Some(max_rows),
            max_decoded_bytes: Some(o.max_decoded_bytes.unwrap_or(options::MAX_DECODED_BYTES)),
        },
    })
}

/// Open the Delta table at `url` (`https://…`, `s3://bucket/path`, `az://…`, `abfss://…`,
/// `gs://…`) with `options` (endpoint, credentials, relay, `fetch` hook).
#[wasm_bindgen(js_name = openTable)]
pub async fn open_table(url: String, options: JsValue) -> Result<Table, JsValue> {
    open(&url, &options)
}

/// Answer `api` on `table`: the document parsed into an object, or the rows' bytes.
async fn answer(t: &Table, api: ApiRequest) -> Result<JsValue, JsValue> {
    let rows = matches!(api, ApiRequest::Rows { .. });
    let now_ms = js_sys::Date::now() as i64;
    let a = respond(api, &t.table, t.limits, now_ms)
        .await
        .map_err(|e| error::api(&e))?;
    if rows {
        return Ok(Uint8Array::from(a.body.as_slice()).into());
    }
    let doc: serde_json::Value = deltalens_json::from_slice(&a.body).map_err(|e| {
        error::js_error(
            "encode_failed",
            &format!("a document that is not JSON: {e}"),
        )
    })?;
    Ok(js_value(&doc))
}

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A document as JavaScript values: numbers as numbers, except whole numbers beyond
/// 2^53 (a long column's statistics, a huge size), which are `BigInt`s so no digit is
/// lost (`JSON.parse` would round them).
fn js_value(v: &serde_json::Value) -> JsValue {
    use serde_json::Value;
    match v {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64()
                && i.unsigned_abs() > MAX_SAFE_INTEGER
            {
                return js_sys::BigInt::from(i).into();
            }
            if let Some(u) = n.as_u64()
                && u > MAX_SAFE_INTEGER
            {
                return js_sys::BigInt::from(u).into();
            }
            JsValue::from_f64(n.as_f64().unwrap_or(f64::NAN))
        }
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => items.iter().map(js_value).collect::<js_sys::Array>().into(),
        // own properties, whatever the key (`Reflect.set` of `__proto__`, a key a hostile
        // log may hold, would set the object's prototype instead)
        Value::Object(map) => {
            let entries: js_sys::Array = map
                .iter()
                .map(|(k, v)| {
                    let pair = js_sys::Array::new();
                    pair.push(&JsValue::from_str(k));
                    pair.push(&js_value(v));
                    JsValue::from(pair)
                })
                .collect();
            js_sys::Object::from_entries(&entries)
                .map(JsValue::from)
                .unwrap_or(JsValue::NULL)
        }
    }
}

impl Table {
    async fn call(&self, route: &str, options: &JsValue, rows: bool) -> Result<JsValue, JsValue> {
        let mut params = options::params(options, route)?;
        // rows as Arrow unless another format is asked for
        if rows && !params.iter().any(|(k, _)| k == "format") {
            params.push(("format".into(), "arrow".into()));
        }
        params.push(("table".into(), self.url.clone()));
        let api = parse_get(route, &params).map_err(|e| error::api(&e))?;
        answer(self, api).await
    }
}

#[wasm_bindgen]
impl Table {
    /// The table's URL as opened.
    #[wasm_bindgen(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The overview (`deltalens info --json`): `{ version, timestamp, files, size, … }`.
    /// Options: `version` or `timestamp`.
    pub async fn info(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/info", &options, false).await
    }

    /// The latest version's number.
    pub async fn version(&self) -> Result<f64, JsValue> {
        let info = self.info(JsValue::UNDEFINED).await?;
        Reflect::get(&info, &"version".into())?
            .as_f64()
            .ok_or_else(|| error::js_error("encode_failed", "the overview has no version"))
    }

    /// The table health report (`deltalens health --json`). Options: `version` or
    /// `timestamp`, `now` (the time ages are measured from), `series` (the health at
    /// that many versions over history).
    pub async fn health(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/health", &options, false).await
    }

    /// The schema's rows (`deltalens schema --json`). Options: `version` or `timestamp`.
    pub async fn schema(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/schema", &options, false).await
    }

    /// The commits, newest first (`deltalens history --json`). Options: `limit`.
    pub async fn history(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/history", &options, false).await
    }

    /// The active files in log order (`deltalens files --json`). Options: `version` or
    /// `timestamp`, `limit`, `offset`.
    pub async fn files(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/files", &options, false).await
    }

    /// Run a query of the SQL subset (`SELECT … FROM '<url>' [VERSION AS OF n] [WHERE …]
    /// [GROUP BY …] [ORDER BY …] [LIMIT n]`, or `FROM table_changes('<url>', from, to)`)
    /// on this table: the URL the SQL names must be the one opened, so SQL from someone
    /// else cannot send this table's credentials to another table or host. Options:
    /// `format`.
    pub async fn query(&self, sql: String, options: JsValue) -> Result<JsValue, JsValue> {
        let mut params = options::params(&options, "query")?;
        if let Some((k, _)) = params.iter().find(|(k, _)| k != "format") {
            return Err(error::option(k, "not an option of query (format)"));
        }
        if params.is_empty() {
            params.push(("format".into(), "arrow".into()));
        }
        let api = parse_query(&sql, &params).map_err(|e| error::api(&e))?;
        let named = api.table().trim().trim_end_matches('/');
        if named != self.url {
            return Err(error::js_error(
                "table_not_allowed",
                &format!(
                    "the query reads {named}, not the table opened ({}): open that table and query it there",
                    self.url
                ),
            ));
        }
        answer(self, api).await
    }

    /// What changed between versions `from` and `to` (`deltalens diff --json`): files
    /// added and removed, deletion vectors, schema, partition columns, protocol and
    /// properties, rows inserted and deleted (from statistics) and the changed rows.
    /// Options: `from`, `to`, `columns`, `limit` (of the rows).
    pub async fn diff(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/diff", &options, false).await
    }

    /// Rows as Arrow IPC stream bytes (`format`: `arrow`, `json` for an array of objects,
    /// `jsonl` for JSON lines, `csv`). Options: `version` or `timestamp`, `columns`, `filter` (a SQL condition),
    /// `limit`, `format`.
    pub async fn scan(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/scan", &options, true).await
    }

    /// The rows of a scan one record batch at a time (options as `scan`'s, without
    /// `format`; `batchSize`: rows per batch at most): each `next()` gives a batch as
    /// Arrow IPC stream bytes, `undefined` at the end. The rows are not held, so `maxRows` does not bound them;
    /// `maxDecodedBytes` bounds what the whole scan decodes.
    pub fn batches(&self, options: JsValue) -> Result<crate::batches::Batches, JsValue> {
        let mut params = options::params(&options, "/v1/scan")?;
        // rows per batch at most (a larger batch of the scan is cut, without a copy)
        let batch_size = match params.iter().position(|(k, _)| k == "batchSize") {
            None => None,
            Some(i) => {
                let (_, v) = params.remove(i);
                Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| error::option("batchSize", "not a whole number from 1"))?,
                )
            }
        };
        if params.iter().any(|(k, _)| k == "format") {
            return Err(error::option(
                "format",
                "not an option of batches (Arrow only)",
            ));
        }
        params.push(("format".into(), "arrow".into()));
        params.push(("table".into(), self.url.clone()));
        match parse_get("/v1/scan", &params).map_err(|e| error::api(&e))? {
            ApiRequest::Rows { query, .. } => Ok(crate::batches::Batches::new(
                *query,
                self.table.clone(),
                Limits {
                    max_rows: None,
                    ..self.limits
                },
                batch_size,
            )),
            _ => Err(error::js_error("internal", "not a request for rows")),
        }
    }

    /// The change data feed from version (or timestamp) `from` to `to` (the latest by
    /// default), with `_change_type`, `_commit_version` and `_commit_timestamp`. Options:
    /// `from`, `to`, `columns`, `filter`, `limit`, `format`.
    pub async fn changes(&self, options: JsValue) -> Result<JsValue, JsValue> {
        self.call("/v1/changes", &options, true).await
    }
}

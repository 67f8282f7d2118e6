//! The exports `web/query/worker.js` calls: [`query`], [`progress`] while it runs,
//! [`download`] of its result, and [`split`] in a worker of the pool.
//!
//! A query worth cutting ([`crate::run_pooled`]) is planned here and its splits sent to
//! the pool `worker.js` keeps (`globalThis.deltalensPool`: workers started from the same
//! script, one split at a time each), whose partial states are merged here.
//!
//! The table's storage is built as the page builds it (`deltalens-fetch-storage` from the
//! same options, retried, cached) and kept while the table and options stay the same, so
//! a second query finds the log and the footers cached. Each query reads through budgets
//! of its own (requests, bytes, time) and a counter the page polls.

use std::cell::RefCell;
use std::sync::Arc;

use deltalens_api::Output;
use deltalens_core::{Split, Table};
use deltalens_fetch_storage::{BrowserOptions, FetchStorage, Sleep, boxed_sleep};
use deltalens_storage::{
    BudgetStorage, Budgets as StorageBudgets, CachingStorage, CountingStorage, RetryPolicy,
    RetryStorage,
};
use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::protocol::{MAX_WORKERS, Progress, Request, StorageOptions};
use crate::{MIN_POOL_BYTES, SplitRequest, split_budgets};

/// Bytes of objects kept between queries on one table (the log's tail, footers).
const CACHE_BYTES: usize = 64 * 1024 * 1024;

type Cached = CachingStorage<RetryStorage<FetchStorage, Sleep>>;
type Counted = CountingStorage<BudgetStorage<Arc<Cached>>>;

/// The table the last query read, with its options and cache.
struct Opened {
    url: String,
    storage: StorageOptions,
    cached: Arc<Cached>,
}

thread_local! {
    static OPENED: RefCell<Option<Opened>> = const { RefCell::new(None) };
    /// The running query's counter (for [`progress`]).
    static RUNNING: RefCell<Option<Arc<Counted>>> = const { RefCell::new(None) };
    /// The last result (for [`download`]).
    static LAST: RefCell<Option<Output>> = const { RefCell::new(None) };
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// The cached storage of `url` with `storage`: the last one when they are the same.
fn cached_for(url: &str, storage: &StorageOptions) -> Result<Arc<Cached>, String> {
    OPENED.with_borrow_mut(|opened| {
        if let Some(o) = opened
            .as_ref()
            .filter(|o| o.url == url && o.storage == *storage)
        {
            return Ok(Arc::clone(&o.cached));
        }
        let fetch = FetchStorage::open(url, &BrowserOptions::from(storage.clone()))
            .map_err(|e| e.to_string())?;
        let retry = RetryStorage::new(fetch, RetryPolicy::default(), boxed_sleep as Sleep);
        let cached = Arc::new(CachingStorage::new(retry, CACHE_BYTES));
        *opened = Some(Opened {
            url: url.to_string(),
            storage: storage.clone(),
            cached: Arc::clone(&cached),
        });
        Ok(cached)
    })
}

fn js_error(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| js_sys::Error::from(e.clone()).message().as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Call `method` of the pool `worker.js` keeps.
fn pool(method: &str, args: &Array) -> Result<JsValue, String> {
    let pool = Reflect::get(&js_sys::global(), &"deltalensPool".into())
        .ok()
        .filter(|p| p.is_object())
        .ok_or("this query worker has no pool of workers")?;
    let f: Function = Reflect::get(&pool, &method.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| format!("the pool of workers has no {method}"))?;
    f.apply(&pool, args).map_err(|e| js_error(&e))
}

/// Split `id` answered by a worker of the pool: its partial state.
async fn ask_pool(json: Result<String, String>, id: usize) -> Result<Vec<u8>, String> {
    let args = Array::of2(&json?.into(), &JsValue::from_f64(id as f64));
    let promise: Promise = pool("split", &args)?
        .dyn_into()
        .map_err(|_| "the pool did not answer a promise".to_string())?;
    let bytes = JsFuture::from(promise).await.map_err(|e| js_error(&e))?;
    bytes
        .dyn_into::<Uint8Array>()
        .map(|b| b.to_vec())
        .map_err(|_| "a worker of the pool answered something that is not bytes".to_string())
}

/// What the pool's workers did for a query (`worker.js`: `deltalensPool.report()`).
#[derive(Debug, Default, serde::Deserialize)]
struct PoolReport {
    busy_ms: Vec<u64>,
    requests: u64,
    bytes: u64,
}

fn pool_report() -> PoolReport {
    pool("report", &Array::new())
        .ok()
        .and_then(|r| r.as_string())
        .and_then(|r| deltalens_json::from_str(&r).ok())
        .unwrap_or_default()
}

/// The storage of one query or split: the table's cached storage under `budgets`,
/// counted.
fn storage_for(req: &Request, url: &str) -> Result<Arc<Counted>, String> {
    let cached = cached_for(url, &req.storage)?;
    let budgets = StorageBudgets {
        max_requests: Some(req.budgets.max_requests),
        max_bytes: Some(req.budgets.max_bytes),
        max_millis: Some(req.budgets.max_millis as f64),
    };
    Ok(Arc::new(CountingStorage::new(BudgetStorage::new(
        cached, budgets, now_ms,
    ))))
}

async fn answer(request: &str) -> Result<String, String> {
    let req: Request = deltalens_json::from_str(request)
        .map_err(|e| format!("the page sent a request the query module cannot read: {e}"))?;
    let url = req.url.trim().trim_end_matches('/').to_string();
    let query = crate::prepare(&req.sql, &url, req.version)?;
    let counter = storage_for(&req, &url)?;
    RUNNING.set(Some(Arc::clone(&counter)));
    LAST.set(None);
    let table = Table::new(counter.clone(), &url);
    let width = req.workers.clamp(1, MAX_WORKERS) as usize;
    if width > 1 {
        pool("reset", &Array::new())?;
    }
    let call = |split: &Split, n: usize| {
        let share = Request {
            budgets: split_budgets(&req.budgets, n),
            ..req.clone()
        };
        let json = serde_json::to_string(&SplitRequest {
            request: share,
            split: split.clone(),
        })
        .map_err(|e| e.to_string());
        ask_pool(json, split.id)
    };
    let out = crate::run_pooled(&table, &query, &req.budgets, width, MIN_POOL_BYTES, call).await;
    RUNNING.set(None);
    let stats = counter.stats();
    let out = out?;
    let io = Progress {
        requests: stats.requests,
        bytes: stats.bytes,
    };
    let mut answer = crate::answer(&query, &out.output, io)?;
    answer.splits = out.splits as u32;
    if out.splits > 1 {
        // the splits' reads are the query's too
        let report = pool_report();
        answer.busy_ms = report.busy_ms;
        answer.requests += report.requests;
        answer.bytes += report.bytes;
    }
    LAST.set(Some(out.output));
    serde_json::to_string(&answer).map_err(|e| e.to_string())
}

async fn split_answer(request: &str) -> Result<Vec<u8>, String> {
    let r: SplitRequest = deltalens_json::from_str(request)
        .map_err(|e| format!("the coordinator sent a split this worker cannot read: {e}"))?;
    let url = r.request.url.trim().trim_end_matches('/').to_string();
    let query = crate::prepare(&r.request.sql, &url, r.request.version)?;
    let counter = storage_for(&r.request, &url)?;
    // what it read stays readable (`progress`) until the next split: worker.js reports it
    RUNNING.set(Some(Arc::clone(&counter)));
    let table = Table::new(counter, &url);
    crate::run_split(&table, &query, &r.split, &r.request.budgets).await
}

/// Read the split of `request` (a [`SplitRequest`] as JSON) in a worker of the pool: its
/// partial state as Arrow IPC, or an error message.
#[wasm_bindgen]
pub async fn split(request: String) -> Result<Vec<u8>, JsValue> {
    split_answer(&request)
        .await
        .map_err(|e| JsValue::from_str(&e))
}

/// Run the query of `request` (a [`Request`] as JSON); its [`crate::protocol::Answer`]
/// as JSON, or an error message.
#[wasm_bindgen]
pub async fn query(request: String) -> Result<String, JsValue> {
    answer(&request).await.map_err(|e| JsValue::from_str(&e))
}

/// What the running query has read so far, as JSON ([`Progress`]): its own reads and
/// those of the splits its pool has answered.
#[wasm_bindgen]
pub fn progress() -> String {
    let own = RUNNING.with_borrow(|r| r.as_ref().map(|c| c.stats()));
    let pool = pool_report();
    let p = Progress {
        requests: own.as_ref().map_or(0, |s| s.requests) + pool.requests,
        bytes: own.as_ref().map_or(0, |s| s.bytes) + pool.bytes,
    };
    serde_json::to_string(&p).unwrap_or_default()
}

/// The last result as a file in `format` (see [`crate::file`]).
#[wasm_bindgen]
pub fn download(format: String) -> Result<Vec<u8>, JsValue> {
    LAST.with_borrow(|last| match last {
        Some(out) => crate::file(out, &format),
        None => Err("no result to download: run a query first".into()),
    })
    .map_err(|e| JsValue::from_str(&e))
}

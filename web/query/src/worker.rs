//! The exports `web/query/worker.js` calls: [`query`], [`progress`] while it runs, and
//! [`download`] of its result.
//!
//! The table's storage is built as the page builds it (`deltalens-fetch-storage` from the
//! same options, retried, cached) and kept while the table and options stay the same, so
//! a second query finds the log and the footers cached. Each query reads through budgets
//! of its own (requests, bytes, time) and a counter the page polls.

use std::cell::RefCell;
use std::sync::Arc;

use deltalens_api::Output;
use deltalens_core::Table;
use deltalens_fetch_storage::{BrowserOptions, FetchStorage, Sleep, boxed_sleep};
use deltalens_storage::{
    BudgetStorage, Budgets as StorageBudgets, CachingStorage, CountingStorage, RetryPolicy,
    RetryStorage,
};
use wasm_bindgen::prelude::*;

use crate::protocol::{Progress, Request, StorageOptions};

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

async fn answer(request: &str) -> Result<String, String> {
    let req: Request = deltalens_json::from_str(request)
        .map_err(|e| format!("the page sent a request the query module cannot read: {e}"))?;
    let url = req.url.trim().trim_end_matches('/').to_string();
    let query = crate::prepare(&req.sql, &url, req.version)?;
    let cached = cached_for(&url, &req.storage)?;
    let budgets = StorageBudgets {
        max_requests: Some(req.budgets.max_requests),
        max_bytes: Some(req.budgets.max_bytes),
        max_millis: Some(req.budgets.max_millis as f64),
    };
    let counter = Arc::new(CountingStorage::new(BudgetStorage::new(
        cached, budgets, now_ms,
    )));
    RUNNING.set(Some(Arc::clone(&counter)));
    LAST.set(None);
    let table = Table::new(counter.clone(), &url);
    let out = crate::run(&table, &query, &req.budgets).await;
    RUNNING.set(None);
    let stats = counter.stats();
    let out = out?;
    let io = Progress {
        requests: stats.requests,
        bytes: stats.bytes,
    };
    let answer = crate::answer(&query, &out, io)?;
    LAST.set(Some(out));
    serde_json::to_string(&answer).map_err(|e| e.to_string())
}

/// Run the query of `request` (a [`Request`] as JSON); its [`crate::protocol::Answer`]
/// as JSON, or an error message.
#[wasm_bindgen]
pub async fn query(request: String) -> Result<String, JsValue> {
    answer(&request).await.map_err(|e| JsValue::from_str(&e))
}

/// What the running query has read so far, as JSON ([`Progress`]).
#[wasm_bindgen]
pub fn progress() -> String {
    let p = RUNNING.with_borrow(|r| {
        r.as_ref().map_or(Progress::default(), |c| {
            let s = c.stats();
            Progress {
                requests: s.requests,
                bytes: s.bytes,
            }
        })
    });
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

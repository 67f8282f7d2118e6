//! The storage under one request: the table's backend (an R2 binding, or `fetch` for
//! `s3://`, `abfss://`/`az://`, `https://`) under a [`BudgetStorage`] (subrequests, bytes,
//! wall time), under a [`RetryStorage`] (transient failures — network errors, 408, 429,
//! 5xx — tried again after a short jittered wait; every attempt is charged to the budget,
//! and waits count against the wall time), under a [`CachingStorage`] whose memory is
//! shared by every request of the isolate for the same table root — so log files,
//! checkpoints and Parquet footers read by one request are not fetched again by the next,
//! and cache hits cost no budget.

// `DynStorage` is an `Arc` by the core's contract; on wasm32 nothing is `Send` and the
// isolate has one thread.
#![allow(clippy::arc_with_non_send_sync)]

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use deltalens_core::Table;
use deltalens_fetch_storage::{FetchStorage, Sleep, boxed_sleep};
use deltalens_storage::{
    BudgetMeter, BudgetStorage, CachingStorage, DynStorage, RetryPolicy, RetryStorage, SharedCache,
    Store, TableUrl,
};
use worker::Env;

use crate::config::Config;
use crate::errors::ErrorResponse;
use crate::r2::R2Storage;
use deltalens_api::Failure;

/// Table roots with a cache in this isolate (least recently used first).
const ROOTS: usize = 8;

thread_local! {
    static CACHES: RefCell<Vec<(String, SharedCache)>> = const { RefCell::new(Vec::new()) };
}

/// The cache of `root`: each of at most [`ROOTS`] roots gets an equal share of
/// `total_bytes`; single reads above a quarter of a share (large column chunks) are not
/// kept.
fn cache_for(root: &str, total_bytes: usize) -> SharedCache {
    CACHES.with(|c| {
        let mut c = c.borrow_mut();
        let found = c.iter().position(|(r, _)| r == root);
        let entry = match found {
            Some(i) => c.remove(i),
            None => {
                if c.len() >= ROOTS {
                    c.remove(0);
                }
                let share = total_bytes / ROOTS;
                (root.to_string(), SharedCache::new(share, share / 4))
            }
        };
        let cache = entry.1.clone();
        c.push(entry);
        cache
    })
}

/// Retries of one read: short waits (50 ms, then 100 ms, 200 ms, …, at most 1 s; jittered
/// to between half and all of that), since a request has a wall-time budget of seconds,
/// reads one file after another, and each attempt is a subrequest.
fn retry_policy(retries: u32) -> RetryPolicy {
    RetryPolicy {
        retries,
        initial_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_secs(1),
    }
}

/// Milliseconds, for the wall-time budget.
pub fn now() -> f64 {
    js_sys::Date::now()
}

/// A table opened for one request, with its budget meter.
pub struct Opened {
    pub table: Table,
    pub budget: Arc<BudgetStorage<DynStorage>>,
    /// The storage under the table (cached, retried, budgeted), for the relay.
    pub storage: DynStorage,
}

/// Opens `url` for one request, with `options` for its fetch backend (the worker's
/// configured credentials, or those a catalog vended for it).
pub fn open(url: &str, env: &Env, config: &Config) -> Result<Opened, ErrorResponse> {
    open_with(url, env, config, &config.storage)
}

pub fn open_with(
    url: &str,
    env: &Env,
    config: &Config,
    options: &deltalens_fetch_storage::BrowserOptions,
) -> Result<Opened, ErrorResponse> {
    let parsed = TableUrl::parse(url)
        .map_err(|e| ErrorResponse::new(Failure::InvalidTableUrl, e.to_string()))?;
    // the backend charges its own extra requests (listing pages after the first, a HEAD
    // before an Azure tail) on the request's meter before making them
    let meter = Arc::new(BudgetMeter::new(config.budgets, now));
    let backend: DynStorage = match &parsed.store {
        Store::R2 { binding } => {
            let (binding, path) = (binding.as_str(), parsed.key.as_str());
            let bucket = env.bucket(binding).map_err(|_| {
                ErrorResponse::new(
                    Failure::InvalidTableUrl,
                    format!(
                        "{url}: this worker has no R2 binding named {binding}; add [[r2_buckets]] binding = \"{binding}\" to wrangler.toml"
                    ),
                )
            })?;
            Arc::new(R2Storage::new(bucket, binding, path).with_meter(meter.backend_meter()))
        }
        _ => Arc::new(
            FetchStorage::open(url, options)
                .map_err(|e| ErrorResponse::new(Failure::InvalidTableUrl, e.0))?
                .on_server()
                .with_meter(meter.backend_meter()),
        ),
    };
    let budget = Arc::new(BudgetStorage::with_meter(backend, meter));
    let retry = RetryStorage::new(
        budget.clone(),
        retry_policy(config.retries),
        boxed_sleep as Sleep,
    );
    let cache = cache_for(&parsed.canonical(), config.cache_bytes);
    let storage: DynStorage = Arc::new(CachingStorage::with_cache(retry, cache));
    Ok(Opened {
        table: Table::new(storage.clone(), url),
        budget,
        storage,
    })
}

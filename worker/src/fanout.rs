//! A split of a fanned-out query, sent to this worker's own instances through a service
//! binding (`SELF` by default: a `[[services]]` entry pointing at this Worker) as
//! `POST /v1/partial`, and its answer read back: an Arrow IPC partial state, or the other
//! instance's JSON error as [`ApiError::Remote`]. The coordinator's retries and the
//! number of its calls are `deltalens_api::fan_out`'s; each split is sent with its share
//! of what is left of this request's bytes, decoded bytes, buffered rows and the client's
//! sub-requests (`budget_*` parameters, which the other instance can only lower its
//! budgets by) and most of the wall time left, so the whole tree stays within them.

use deltalens_api::{ApiError, Partial, TreeBudgets};
use deltalens_core::Split;
use deltalens_storage::BudgetStorage;
use worker::wasm_bindgen::JsValue;
use worker::{Env, Headers, Method, Request, RequestInit};

use crate::config::Config;

/// What the instance answering a split read (its `x-deltalens-bytes-read` and
/// `x-deltalens-subrequests`), for the coordinator's answer to report the whole tree's.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reads {
    /// Bytes read from storage.
    pub bytes: u64,
    /// Storage requests made.
    pub subrequests: u64,
}

/// The share of the wall time left that a split is given: the rest is the coordinator's,
/// to merge the answers (and a split out of time says so before the coordinator is).
const SPLIT_TIME_SHARE: f64 = 0.9;

/// What is left of this request's budgets (`config`'s, less what `budget` has counted)
/// for its splits to share: bytes, decoded bytes, buffered rows, the client's
/// sub-requests, and [`SPLIT_TIME_SHARE`] of the wall time left.
pub fn left<S>(config: &Config, budget: &BudgetStorage<S>) -> TreeBudgets {
    TreeBudgets {
        bytes: config
            .budgets
            .max_bytes
            .map(|m| m.saturating_sub(budget.bytes())),
        decoded_bytes: Some(config.max_decoded_bytes),
        rows_buffered: Some(config.max_rows_buffered),
        subrequests: config
            .tree_max_requests
            .map(|m| m.saturating_sub(budget.requests())),
        millis: budget
            .meter()
            .remaining_ms()
            .map(|ms| ms * SPLIT_TIME_SHARE)
            .or(config.budgets.max_millis),
    }
}

/// `split` of the request `what` (`{"sql": …}` or a scan's `{"scan": [[name, value], …]}`)
/// answered by another instance, with the caller's `Authorization` passed on, given
/// `left` of this request's budgets to share; with what that instance read.
pub async fn ask(
    env: &Env,
    config: &Config,
    what: &serde_json::Value,
    split: &Split,
    auth: Option<&str>,
    left: &TreeBudgets,
) -> Result<(Partial, Reads), ApiError> {
    let unreachable = |m: String| ApiError::Remote {
        status: 502,
        code: "split_unreachable".into(),
        message: m,
    };
    let mut body = what.clone();
    body["split"] = serde_json::to_value(split).map_err(|e| unreachable(e.to_string()))?;
    let body = body.to_string();
    let headers = Headers::new();
    let set = |k: &str, v: &str| headers.set(k, v).map_err(|e| unreachable(e.to_string()));
    set("content-type", "application/json")?;
    if let Some(secret) = &config.fanout_secret {
        set("x-deltalens-fanout-secret", secret)?;
    }
    if let Some(a) = auth {
        set("authorization", a)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers.clone())
        .with_body(Some(JsValue::from_str(&body)));
    // each split gets its share of what is left of this request's budgets
    let shares = config.fanout.map(|p| p.split_budgets(left));
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(shares.unwrap_or_default())
        .finish();
    // the host is not looked up: a service binding delivers to its Worker
    let url = format!("https://deltalens.internal/v1/partial?{query}");
    let req = Request::new_with_init(&url, &init).map_err(|e| unreachable(e.to_string()))?;
    let binding = &config.fanout_binding;
    let fetcher = env.service(binding).map_err(|e| {
        unreachable(format!(
            "no service binding {binding} ({e}): add a [[services]] entry for this Worker, or unset DELTALENS_FANOUT_BYTES"
        ))
    })?;
    let mut resp = fetcher
        .fetch_request(req)
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let status = resp.status_code();
    let bytes = resp.bytes().await.map_err(|e| unreachable(e.to_string()))?;
    if status == 200 {
        let count = |name: &str| {
            let v = resp.headers().get(name).ok().flatten();
            v.and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0)
        };
        let reads = Reads {
            bytes: count("x-deltalens-bytes-read"),
            subrequests: count("x-deltalens-subrequests"),
        };
        return Ok((Partial::from_ipc(&bytes, config.max_rows_buffered)?, reads));
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let text = |k: &str| v["error"][k].as_str().map(str::to_string);
    Err(ApiError::Remote {
        status,
        code: text("code").unwrap_or_else(|| "split_failed".into()),
        message: text("message")
            .unwrap_or_else(|| format!("HTTP {status} without an error document")),
    })
}

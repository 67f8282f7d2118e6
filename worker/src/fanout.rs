//! A split of a fanned-out query, sent to this worker's own instances through a service
//! binding (`SELF` by default: a `[[services]]` entry pointing at this Worker) as
//! `POST /v1/partial`, and its answer read back: an Arrow IPC partial state, or the other
//! instance's JSON error as [`ApiError::Remote`]; with what that instance reports it
//! spent, answer or error. The coordinator's retries and the number of its calls are
//! `deltalens_api::fan_out`'s; each attempt is sent with budgets from
//! [`deltalens_api::SplitBudgets`] (`budget_*` parameters, which the other instance can
//! only lower its own by): a share of what is left of this request's bytes and of the
//! client's sub-requests, retries paid from the same pool, bounds on decoded bytes and
//! buffered rows, and most of the wall time left.

use deltalens_api::{ApiError, Partial, Spent, TreeBudgets};
use deltalens_core::Split;
use deltalens_storage::BudgetStorage;
use worker::wasm_bindgen::JsValue;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use crate::config::Config;

/// The share of the wall time left that a split is given: the rest is the coordinator's,
/// to merge the answers (and a split out of time says so before the coordinator is).
const SPLIT_TIME_SHARE: f64 = 0.9;

/// What is left of this request's budgets (`config`'s, less what `budget` has counted)
/// for its splits to share: bytes, decoded bytes, buffered rows, and the client's
/// sub-requests (the configured cap is per invocation, as Cloudflare's limit is).
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
    }
}

/// The wall time a split is sent: [`SPLIT_TIME_SHARE`] of what `budget` has left, or the
/// configured budget where it has no clock.
pub fn split_millis<S>(config: &Config, budget: &BudgetStorage<S>) -> Option<f64> {
    budget
        .meter()
        .remaining_ms()
        .map(|ms| ms * SPLIT_TIME_SHARE)
        .or(config.budgets.max_millis)
}

/// `split` of the request `what` (`{"sql": …}` or a scan's `{"scan": [[name, value], …]}`)
/// answered by another instance, with the caller's `Authorization` passed on and the
/// budget parameters `budgets`; with what that instance reports it spent (`None` when
/// no answer of its came back, or it reported nothing).
pub async fn ask(
    env: &Env,
    config: &Config,
    what: &serde_json::Value,
    split: &Split,
    auth: Option<&str>,
    budgets: &[(&'static str, String)],
) -> (Result<Partial, ApiError>, Option<Spent>) {
    let mut resp = match send(env, config, what, split, auth, budgets).await {
        Ok(r) => r,
        Err(e) => return (Err(e), None),
    };
    let spent = spent(&resp);
    let status = resp.status_code();
    let bytes = match resp.bytes().await {
        Ok(b) => b,
        Err(e) => return (Err(unreachable(e.to_string())), spent),
    };
    if status == 200 {
        return (Partial::from_ipc(&bytes, config.max_rows_buffered), spent);
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let text = |k: &str| v["error"][k].as_str().map(str::to_string);
    let e = ApiError::Remote {
        status,
        code: text("code").unwrap_or_else(|| "split_failed".into()),
        message: text("message")
            .unwrap_or_else(|| format!("HTTP {status} without an error document")),
    };
    (Err(e), spent)
}

fn unreachable(m: String) -> ApiError {
    ApiError::Remote {
        status: 502,
        code: "split_unreachable".into(),
        message: m,
    }
}

/// What an answer of a split's instance says it spent (`x-deltalens-bytes-read`,
/// `x-deltalens-subrequests`, on answers and errors alike); `None` without them.
fn spent(resp: &Response) -> Option<Spent> {
    let count = |name: &str| {
        let v = resp.headers().get(name).ok().flatten()?;
        v.trim().parse::<u64>().ok()
    };
    Some(Spent {
        bytes: count("x-deltalens-bytes-read")?,
        subrequests: count("x-deltalens-subrequests")?,
    })
}

/// The call of `split` through the service binding.
async fn send(
    env: &Env,
    config: &Config,
    what: &serde_json::Value,
    split: &Split,
    auth: Option<&str>,
    budgets: &[(&'static str, String)],
) -> Result<Response, ApiError> {
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
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(budgets.iter().map(|(k, v)| (*k, v.as_str())))
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
    fetcher
        .fetch_request(req)
        .await
        .map_err(|e| unreachable(e.to_string()))
}

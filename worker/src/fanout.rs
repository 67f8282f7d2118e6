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

use std::cell::{Cell, RefCell};

use deltalens_api::{ApiError, Failure, Partial, Spent, SplitBudgets, TreeBudgets};
use deltalens_core::Split;
use deltalens_storage::{BudgetStorage, DynStorage};
use worker::wasm_bindgen::JsValue;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

use crate::config::Config;

/// The share of the wall time left that a split is given: the rest is the coordinator's,
/// to merge the answers (and a split out of time says so before the coordinator is).
const SPLIT_TIME_SHARE: f64 = 0.9;

/// One fanned-out request's calls to its splits: what they are sent (`what`: `{"sql": …}`
/// or a scan's `{"scan": [[name, value], …]}`, with the caller's `Authorization`), the
/// pool of the request's budgets they share (made at the first call: the coordinator's
/// reads of the log come before it), the calls sent and what the split workers reported
/// they spent.
pub struct Tree<'a> {
    env: &'a Env,
    config: &'a Config,
    what: &'a serde_json::Value,
    auth: Option<String>,
    budget: &'a BudgetStorage<DynStorage>,
    calls: Cell<u64>,
    reported: Cell<Spent>,
    pool: RefCell<Option<SplitBudgets>>,
}

impl<'a> Tree<'a> {
    /// The calls of a request whose own reads `budget` counts.
    pub fn new(
        env: &'a Env,
        config: &'a Config,
        what: &'a serde_json::Value,
        auth: Option<String>,
        budget: &'a BudgetStorage<DynStorage>,
    ) -> Self {
        Tree {
            env,
            config,
            what,
            auth,
            budget,
            calls: Cell::new(0),
            reported: Cell::new(Spent::default()),
            pool: RefCell::new(None),
        }
    }

    /// Calls sent, retries included.
    pub fn calls(&self) -> u64 {
        self.calls.get()
    }

    /// What the split workers reported they spent, failed attempts included.
    pub fn reported(&self) -> Spent {
        self.reported.get()
    }

    /// One attempt of `split` (of a plan of `splits`), answered by another instance: sent
    /// its budgets from the pool and most of the wall time left, and ended with this
    /// request's wall time (naming the split) when it does not answer in time.
    pub async fn ask(&self, split: Split, splits: usize) -> Result<Partial, ApiError> {
        let name = format!("split {} of the fan-out", split.id);
        let attempt = self
            .pool
            .borrow_mut()
            .get_or_insert_with(|| SplitBudgets::new(splits, self.left()))
            .take(split.id, self.split_millis());
        let asked = async {
            // counted when sent (not when the time was already up)
            self.calls.set(self.calls.get() + 1);
            self.send(&split, &attempt.params).await
        };
        let (answer, spent) = match self.budget.before_deadline(&name, asked).await {
            Ok(outcome) => outcome,
            Err(e) => return Err(deltalens_core::Error::from(e).into()),
        };
        if let Some(pool) = self.pool.borrow_mut().as_mut() {
            pool.settle(&attempt, spent);
        }
        if let Some(s) = spent {
            self.reported.set(self.reported.get().plus(s));
        }
        answer
    }

    /// What is left of this request's budgets (its configuration's, less what it has
    /// counted) for its splits to share: bytes, decoded bytes, buffered rows, and the
    /// client's sub-requests (the configured cap is per invocation, as Cloudflare's limit
    /// is).
    fn left(&self) -> TreeBudgets {
        let config = self.config;
        TreeBudgets {
            bytes: config
                .budgets
                .max_bytes
                .map(|m| m.saturating_sub(self.budget.bytes())),
            decoded_bytes: Some(config.max_decoded_bytes),
            rows_buffered: Some(config.max_rows_buffered),
            subrequests: config
                .tree_max_requests
                .map(|m| m.saturating_sub(self.budget.requests())),
        }
    }

    /// The wall time a split is sent: [`SPLIT_TIME_SHARE`] of what is left, or the
    /// configured budget where there is no clock.
    fn split_millis(&self) -> Option<f64> {
        self.budget
            .meter()
            .remaining_ms()
            .map(|ms| ms * SPLIT_TIME_SHARE)
            .or(self.config.budgets.max_millis)
    }

    /// `split` answered by another instance, with the budget parameters `budgets`; with
    /// what that instance reports it spent (`None` when no answer of its came back, or
    /// it reported nothing).
    async fn send(
        &self,
        split: &Split,
        budgets: &[(&'static str, String)],
    ) -> (Result<Partial, ApiError>, Option<Spent>) {
        let mut resp = match self.call(split, budgets).await {
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
            return (
                Partial::from_ipc(&bytes, self.config.max_rows_buffered),
                spent,
            );
        }
        let v: serde_json::Value = deltalens_json::from_slice(&bytes).unwrap_or_default();
        let text = |k: &str| v["error"][k].as_str().map(str::to_string);
        let e = ApiError::Remote {
            status,
            code: text("code").unwrap_or_else(|| "split_failed".into()),
            message: text("message")
                .unwrap_or_else(|| format!("HTTP {status} without an error document")),
        };
        (Err(e), spent)
    }

    /// The call of `split` through the service binding.
    async fn call(
        &self,
        split: &Split,
        budgets: &[(&'static str, String)],
    ) -> Result<Response, ApiError> {
        let config = self.config;
        let mut body = self.what.clone();
        body["split"] = serde_json::to_value(split).map_err(|e| unreachable(e.to_string()))?;
        let body = body.to_string();
        let headers = Headers::new();
        let set = |k: &str, v: &str| headers.set(k, v).map_err(|e| unreachable(e.to_string()));
        set("content-type", "application/json")?;
        if let Some(secret) = &config.fanout_secret {
            set("x-deltalens-fanout-secret", secret)?;
        }
        if let Some(a) = &self.auth {
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
        let fetcher = self.env.service(binding).map_err(|e| {
            unreachable(format!(
                "no service binding {binding} ({e}): add a [[services]] entry for this Worker, or unset DELTALENS_FANOUT_BYTES"
            ))
        })?;
        fetcher
            .fetch_request(req)
            .await
            .map_err(|e| unreachable(e.to_string()))
    }
}

fn unreachable(m: String) -> ApiError {
    ApiError::Remote {
        status: Failure::SplitUnreachable.status(),
        code: Failure::SplitUnreachable.code().into(),
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

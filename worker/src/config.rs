//! The worker's configuration, from `wrangler.toml` vars and Worker secrets:
//!
//! | name | meaning | default |
//! | --- | --- | --- |
//! | `DELTALENS_ALLOWED_TABLES` | comma-separated table URL prefixes | none (nothing allowed) |
//! | `DELTALENS_AUTH_TOKEN` (secret) | require `Authorization: Bearer <token>` | none |
//! | `DELTALENS_PUBLIC` | `"true"`: serve without a token (a public read API; a token, when set, is still required) | `"false"` |
//! | `DELTALENS_MAX_ROWS` | rows a response may hold | 10000 |
//! | `DELTALENS_MAX_ROWS_BUFFERED` | rows held in memory to group, aggregate or sort | 1000000 |
//! | `DELTALENS_MAX_BYTES` | bytes read from storage per request | 67108864 |
//! | `DELTALENS_MAX_SUBREQUESTS` | storage requests per request | 45 |
//! | `DELTALENS_MAX_WALL_MS` | wall time per request | 20000 |
//! | `DELTALENS_CORS_ORIGINS` | origins allowed to call from a page (`*` for any) | none |
//! | `DELTALENS_CACHE_BYTES` | log/footer cache per isolate | 33554432 |
//! | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (secrets), `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_VIRTUAL_HOSTED_STYLE` | `s3://` tables | anonymous AWS |
//! | `AZURE_STORAGE_SAS_TOKEN` (secret), `AZURE_STORAGE_ENDPOINT`, `AZURE_STORAGE_ACCOUNT_NAME` | `abfss://`, `az://` tables | public |
//! | `UC_ENDPOINT` + `UC_TOKEN` (secret), or `DATABRICKS_HOST` + `DATABRICKS_TOKEN` (secret) | `uc://catalog.schema.table` tables (allow `uc://catalog` prefixes); credentials vended per table | none |
//!
//! With neither a token nor `DELTALENS_PUBLIC = "true"` the worker serves nothing: every
//! request is a 503 `not_configured` naming both settings (a deployment must choose).

use std::cell::OnceCell;
use std::rc::Rc;

use deltalens_api::access::Allowlist;
use deltalens_api::execute::Limits;
use deltalens_fetch_storage::BrowserOptions;
use deltalens_storage::Budgets;
use worker::Env;

#[derive(Clone)]
pub struct Config {
    pub allowlist: Allowlist,
    pub auth_token: Option<String>,
    /// Serving without a token was chosen explicitly.
    pub public: bool,
    pub max_rows: usize,
    pub max_rows_buffered: usize,
    /// Bytes one request's scan may decode (Parquet pages into Arrow arrays).
    pub max_decoded_bytes: u64,
    /// Bytes one Parquet page may claim uncompressed (the decoder refuses a larger page
    /// before allocating it): an isolate has 128 MB.
    pub max_page_bytes: u64,
    /// Bytes of decompressed pages and dictionaries one row group's columns may hold at
    /// once (each column keeps its current page): twice a page by default.
    pub max_held_page_bytes: u64,
    /// Attempts after the first for a read that failed transiently.
    pub retries: u32,
    pub budgets: Budgets,
    pub cors_origins: Vec<String>,
    pub cache_bytes: usize,
    pub storage: BrowserOptions,
    /// Fan-out of large queries to this worker's own instances, one split each, through
    /// the service binding `fanout_binding` (`None`: every query runs here).
    pub fanout: Option<deltalens_api::FanOutPolicy>,
    /// The service binding a split is sent through (`SELF` by default).
    pub fanout_binding: String,
    /// The secret a split's request carries (`x-deltalens-fanout-secret`): only this
    /// Worker's own fan-out may call `POST /v1/partial`, which trusts the split it is sent
    /// (its files and deletion vectors are not checked against the log again).
    pub fanout_secret: Option<String>,
    /// The client's `budget_subrequests`, which holds for the whole fan-out tree: its
    /// splits share what the coordinator leaves of it. The configured
    /// `DELTALENS_MAX_SUBREQUESTS` is per invocation, as Cloudflare's limit is (each
    /// split's worker has its own).
    pub tree_max_requests: Option<u64>,
}

/// A var or secret, trimmed; `None` when unset or blank.
fn get(env: &Env, name: &str) -> Option<String> {
    let v = env
        .secret(name)
        .map(|s| s.to_string())
        .or_else(|_| env.var(name).map(|v| v.to_string()))
        .ok()?;
    let v = v.trim().to_string();
    (!v.is_empty()).then_some(v)
}

fn number(env: &Env, name: &str, default: u64) -> Result<u64, String> {
    match get(env, name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| format!("{name} is {v:?}, not a whole number: fix the Worker's vars")),
    }
}

thread_local! {
    /// This isolate's configuration (or why it is unusable), parsed at its first request.
    /// Not keyed by anything: a deployed worker's vars and secrets are fixed for the
    /// isolate's life (a deployment or a changed secret starts new isolates), so every
    /// request of the isolate would parse the same values.
    static ISOLATE: OnceCell<Result<Rc<Config>, String>> = const { OnceCell::new() };
}

impl Config {
    /// The isolate's configuration: parsed from `env` on the first call, the same one
    /// (shared, never changed: a request's budgets are lowered on its own copy, see
    /// [`Config::for_request`]) on every later call. The first successful parse also
    /// sets the core's Parquet page-size and held-pages limits, which hold for the whole isolate.
    pub fn for_isolate(env: &Env) -> Result<Rc<Config>, String> {
        ISOLATE.with(|cell| {
            cell.get_or_init(|| {
                let config = Config::from_env(env)?;
                deltalens_core::limits::set_max_page_bytes(config.max_page_bytes);
                deltalens_core::limits::set_max_held_page_bytes(config.max_held_page_bytes);
                Ok(Rc::new(config))
            })
            .clone()
        })
    }

    fn from_env(env: &Env) -> Result<Config, String> {
        let max_rows = number(env, "DELTALENS_MAX_ROWS", 10_000)? as usize;
        let max_rows_buffered = number(env, "DELTALENS_MAX_ROWS_BUFFERED", 1_000_000)? as usize;
        let max_decoded_bytes = number(env, "DELTALENS_MAX_DECODED_BYTES", 256 << 20)?;
        let max_page_bytes = number(env, "DELTALENS_MAX_PAGE_BYTES", 32 << 20)?;
        let max_held_page_bytes = number(env, "DELTALENS_MAX_HELD_PAGE_BYTES", 64 << 20)?;
        // as many as the tab (an Azure tail is a HEAD then a GET: a retry repeats both)
        let default_retries = deltalens_storage::RetryPolicy::default().retries;
        let retries = number(env, "DELTALENS_RETRIES", default_retries.into())?.min(10) as u32;
        let public = match get(env, "DELTALENS_PUBLIC").as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => {
                return Err(format!(
                    "DELTALENS_PUBLIC is {v:?}: set it to \"true\" (serve without a token) or \"false\""
                ));
            }
        };
        let budgets = Budgets {
            max_requests: Some(number(env, "DELTALENS_MAX_SUBREQUESTS", 45)?),
            max_bytes: Some(number(env, "DELTALENS_MAX_BYTES", 64 << 20)?),
            max_millis: Some(number(env, "DELTALENS_MAX_WALL_MS", 20_000)? as f64),
        };
        let fanout_secret = get(env, "DELTALENS_FANOUT_SECRET");
        let fanout = match get(env, "DELTALENS_FANOUT_BYTES") {
            None => None,
            Some(_) if fanout_secret.as_ref().is_none_or(|s| s.len() < 16) => {
                return Err(
                    "DELTALENS_FANOUT_BYTES is set but the secret DELTALENS_FANOUT_SECRET (16 characters or more) is not: the split workers cannot tell the fan-out's calls from a client's (`npx wrangler secret put DELTALENS_FANOUT_SECRET`)".into(),
                );
            }
            Some(_) => {
                let width = number(env, "DELTALENS_FANOUT_WIDTH", 4)?;
                if !(2..=32).contains(&width) {
                    return Err(format!(
                        "DELTALENS_FANOUT_WIDTH is {width}: a fan-out asks 2 to 32 workers"
                    ));
                }
                Some(deltalens_api::FanOutPolicy {
                    min_bytes: number(env, "DELTALENS_FANOUT_BYTES", u64::MAX)?,
                    width: width as usize,
                    options: deltalens_api::FanOutOptions::default(),
                })
            }
        };
        Ok(Config {
            fanout,
            fanout_secret,
            tree_max_requests: None,
            fanout_binding: get(env, "DELTALENS_FANOUT_BINDING").unwrap_or_else(|| "SELF".into()),
            allowlist: Allowlist::parse(&get(env, "DELTALENS_ALLOWED_TABLES").unwrap_or_default()),
            auth_token: get(env, "DELTALENS_AUTH_TOKEN"),
            public,
            max_rows,
            max_rows_buffered,
            max_decoded_bytes,
            max_page_bytes,
            max_held_page_bytes,
            retries,
            budgets,
            cors_origins: get(env, "DELTALENS_CORS_ORIGINS")
                .map(|v| v.split(',').map(|s| s.trim().to_string()).collect())
                .unwrap_or_default(),
            cache_bytes: number(env, "DELTALENS_CACHE_BYTES", 32 << 20)? as usize,
            storage: BrowserOptions {
                s3_endpoint: get(env, "AWS_ENDPOINT_URL"),
                s3_region: get(env, "AWS_REGION"),
                s3_access_key_id: get(env, "AWS_ACCESS_KEY_ID"),
                s3_secret_access_key: get(env, "AWS_SECRET_ACCESS_KEY"),
                s3_session_token: get(env, "AWS_SESSION_TOKEN"),
                s3_virtual_hosted: get(env, "AWS_VIRTUAL_HOSTED_STYLE")
                    .is_some_and(|v| v == "true"),
                azure_sas: get(env, "AZURE_STORAGE_SAS_TOKEN"),
                azure_endpoint: get(env, "AZURE_STORAGE_ENDPOINT"),
                azure_account: get(env, "AZURE_STORAGE_ACCOUNT_NAME"),
                // the worker reads the stores itself
                relay: None,
                relay_token: None,
            },
        })
    }

    /// Why this worker may not serve yet: neither a token nor the public flag is set.
    pub fn not_configured(&self) -> Option<&'static str> {
        (self.auth_token.is_none() && !self.public).then_some(
            "this worker is not configured to serve: set the secret DELTALENS_AUTH_TOKEN (`npx wrangler secret put DELTALENS_AUTH_TOKEN`; clients then send `Authorization: Bearer <token>`), or set the var DELTALENS_PUBLIC = \"true\" to serve the allowed tables to anyone without a token",
        )
    }

    /// The rows a query may return and hold.
    pub fn limits(&self) -> Limits {
        Limits {
            max_rows: Some(self.max_rows),
            max_rows_buffered: Some(self.max_rows_buffered),
            max_decoded_bytes: Some(self.max_decoded_bytes),
        }
    }

    /// One request's configuration: this one with the client's own lower budgets applied
    /// — `budget_rows`, `budget_rows_buffered`, `budget_decoded_bytes`, `budget_bytes`,
    /// `budget_subrequests`, `budget_ms` request parameters, which can only lower the
    /// configured ones — and those parameters removed from `params`.
    pub fn for_request(&self, params: &mut Vec<(String, String)>) -> Result<Config, String> {
        let mut config = self.clone();
        config.lower_budgets(params)?;
        Ok(config)
    }

    fn lower_budgets(&mut self, params: &mut Vec<(String, String)>) -> Result<(), String> {
        let mut rest = Vec::new();
        for (k, v) in params.drain(..) {
            let n = || -> Result<u64, String> {
                v.parse()
                    .map_err(|_| format!("{k} is {v:?}, not a whole number"))
            };
            let lower = |cur: Option<u64>, n: u64| Some(cur.map_or(n, |c| c.min(n)));
            let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            match k.as_str() {
                // a count beyond usize (32 bits on wasm32) lowers nothing
                "budget_rows" => self.max_rows = self.max_rows.min(count(n()?)),
                "budget_rows_buffered" => {
                    self.max_rows_buffered = self.max_rows_buffered.min(count(n()?))
                }
                "budget_decoded_bytes" => self.max_decoded_bytes = self.max_decoded_bytes.min(n()?),
                "budget_bytes" => self.budgets.max_bytes = lower(self.budgets.max_bytes, n()?),
                "budget_subrequests" => {
                    let n = n()?;
                    self.budgets.max_requests = lower(self.budgets.max_requests, n);
                    self.tree_max_requests = lower(self.tree_max_requests, n);
                }
                "budget_ms" => {
                    let ms = n()? as f64;
                    self.budgets.max_millis =
                        Some(self.budgets.max_millis.map_or(ms, |c| c.min(ms)));
                }
                _ => rest.push((k, v)),
            }
        }
        *params = rest;
        Ok(())
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if allowed.
    pub fn cors_origin(&self, origin: Option<&str>) -> Option<String> {
        let origin = origin?;
        if self.cors_origins.iter().any(|o| o == "*") {
            return Some("*".into());
        }
        self.cors_origins
            .iter()
            .any(|o| o == origin)
            .then(|| origin.to_string())
    }
}

//! Requests in, responses out: configuration, method and path, bearer token, allowlist,
//! then the core.

use deltalens_api::request::{parse_get, parse_query};
use deltalens_api::{
    ApiRequest, Spent, parse_partial, respond, respond_fanned_out, scan_for_splits,
};
use deltalens_core::Split;
use deltalens_storage::{BudgetStorage, DynStorage};
use js_sys::{Reflect, Uint8Array};
use serde_json::{Value, json};
use worker::wasm_bindgen::JsValue;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{Env, Headers, Method, Request, Response};

use crate::config::Config;
use crate::errors::ErrorResponse;
use deltalens_api::Failure;

/// The largest `POST /v1/query` body accepted.
const MAX_BODY: usize = 64 << 10;
/// The largest `POST /v1/partial` body accepted: a split names its files with their
/// statistics.
const MAX_PARTIAL_BODY: usize = 16 << 20;

pub async fn handle(req: Request, env: Env) -> worker::Result<Response> {
    // parsed once per isolate (which also applies its page-size limit), then shared
    let config = match Config::for_isolate(&env) {
        Ok(c) => c,
        Err(m) => return respond_error(&ErrorResponse::new(Failure::BadConfiguration, m), None),
    };
    let origin = req.headers().get("origin").ok().flatten();
    let cors = config.cors_origin(origin.as_deref());
    // neither a token nor an explicit public flag: nothing is served
    if let Some(m) = config.not_configured() {
        return respond_error(
            &ErrorResponse::new(Failure::NotConfigured, m),
            cors.as_deref(),
        );
    }
    if req.method() == Method::Options {
        let h = Headers::new();
        if let Some(o) = &cors {
            h.set("access-control-allow-origin", o)?;
            h.set("access-control-allow-methods", "GET, HEAD, POST, OPTIONS")?;
            // range: the relay's reads (an explorer tab reading through this worker)
            h.set(
                "access-control-allow-headers",
                "authorization, content-type, range",
            )?;
            h.set("access-control-max-age", "86400")?;
            h.set("vary", "origin")?;
        }
        return Ok(Response::empty()?.with_status(204).with_headers(h));
    }
    match route(req, &env, &config).await {
        Ok(r) => with_cors(r, cors.as_deref()),
        Err(e) => respond_error(&e, cors.as_deref()),
    }
}

fn with_cors(r: Response, origin: Option<&str>) -> worker::Result<Response> {
    if let Some(o) = origin {
        let h = r.headers().clone();
        h.set("access-control-allow-origin", o)?;
        h.set(
            "access-control-expose-headers",
            "x-deltalens-version, x-deltalens-subrequests, x-deltalens-bytes-read, x-deltalens-rows, x-deltalens-cache, content-range, content-length, etag, last-modified",
        )?;
        h.set("vary", "origin")?;
        return Ok(r.with_headers(h));
    }
    Ok(r)
}

fn respond_error(e: &ErrorResponse, origin: Option<&str>) -> worker::Result<Response> {
    let h = Headers::new();
    h.set("content-type", "application/json")?;
    if e.status == Failure::Unauthorized.status() {
        h.set("www-authenticate", "Bearer")?;
    }
    if let Some(spent) = e.spent {
        h.set("x-deltalens-subrequests", &spent.subrequests.to_string())?;
        h.set("x-deltalens-bytes-read", &spent.bytes.to_string())?;
    }
    let r = Response::ok(e.body())?
        .with_status(e.status)
        .with_headers(h);
    with_cors(r, origin)
}

/// Constant-time comparison of the presented token with the configured one.
fn token_matches(given: &str, want: &str) -> bool {
    let (a, b) = (given.as_bytes(), want.as_bytes());
    let mut diff = a.len() ^ b.len();
    for (i, y) in b.iter().enumerate() {
        diff |= usize::from(a.get(i).copied().unwrap_or(0) ^ y);
    }
    diff == 0
}

async fn route(req: Request, env: &Env, config: &Config) -> Result<Response, ErrorResponse> {
    if let Some(want) = &config.auth_token {
        let given = req.headers().get("authorization").ok().flatten();
        let ok = given
            .as_deref()
            .and_then(|g| g.strip_prefix("Bearer "))
            .is_some_and(|g| token_matches(g.trim(), want));
        if !ok {
            return Err(ErrorResponse::new(
                Failure::Unauthorized,
                "this worker needs `Authorization: Bearer <token>` with its DELTALENS_AUTH_TOKEN",
            ));
        }
    }
    let url = req.url()?;
    let mut params: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    // this request's budgets, on its own copy: the isolate's configuration stays as is
    let config = &config
        .for_request(&mut params)
        .map_err(|m| ErrorResponse::new(Failure::InvalidParameter, m))?;
    let path = url.path().to_string();
    if matches!(req.method(), Method::Get | Method::Head) {
        let range = req.headers().get("range").ok().flatten();
        // the query without the budget parameters (`budget_bytes=…`, taken above)
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter())
            .finish();
        let head = req.method() == Method::Head;
        if let Some(answer) = crate::relay::answer(&path, &query, head, range, env, config).await {
            return answer;
        }
    }
    // nothing is read from storage before the table is opened: an error until then says
    // it spent nothing, and one after it what it had spent (a fan-out's coordinator pays a
    // failed split's reads from the tree's budgets with it; a split whose call failed
    // without saying counts as having spent all it was given)
    let nothing_spent = |e: ErrorResponse| e.with_spent(Spent::default());
    let (api, fan) = match parse_api(&req, config, &params, &path)
        .await
        .map_err(nothing_spent)?
    {
        Parsed::Done(r) => return Ok(r),
        Parsed::Api(api, fan) => (api, fan),
    };
    // before anything is fetched: the table must be allowed
    config
        .allowlist
        .check(api.table())
        .map_err(|e| nothing_spent(e.into()))?;
    // a pinned version's answer, when this worker kept it (nothing is read then)
    let pinned = crate::pinned::key(&url.origin().ascii_serialization(), &path, &api, config);
    if let Some(key) = &pinned
        && let Some(kept) = crate::pinned::get(key).await
    {
        return Ok(kept);
    }
    let opened = crate::catalog::open(api.table(), env, config)
        .await
        .map_err(nothing_spent)?;
    // a request in flight ends with the wall-time error when the time is up
    opened.budget.set_timer(deltalens_fetch_storage::sleep);
    let r = answer(&req, env, config, api, fan, &opened)
        .await
        .map_err(|e| e.with_spent(spent_by(&opened.budget)))?;
    match pinned {
        Some(key) => Ok(crate::pinned::put(&key, r).await?),
        None => Ok(r),
    }
}

/// What a table route's request is: answered already (`GET /`), or a question for the
/// table, with what its splits are sent where it may fan out (the SQL, or a scan's
/// parameters).
enum Parsed {
    Done(Response),
    Api(ApiRequest, Option<Value>),
}

/// The request `req` to `path` with the query `params`, parsed.
async fn parse_api(
    req: &Request,
    config: &Config,
    params: &[(String, String)],
    path: &str,
) -> Result<Parsed, ErrorResponse> {
    // what a split request of a fanned-out answer carries: the SQL, or a scan's parameters
    let mut fan: Option<Value> = None;
    let api = match (req.method(), path) {
        (Method::Get, "/") => {
            let body = json!({
                "service": "deltalens",
                "version": env!("CARGO_PKG_VERSION"),
                "routes": ["GET /v1/info", "GET /v1/health", "GET /v1/schema", "GET /v1/history", "GET /v1/files", "GET /v1/diff",
                           "GET /v1/scan", "GET /v1/changes", "POST /v1/query", "POST /v1/partial",
                           "GET /v1/object", "GET /v1/list", "GET /v1/tables"],
                "allowed_table_prefixes": config.allowlist.len(),
            });
            return json_response(&body).map(Parsed::Done);
        }
        (Method::Post, "/v1/query") => {
            let body = read_body(req, MAX_BODY).await?;
            let text = String::from_utf8(body).map_err(|_| {
                ErrorResponse::new(Failure::InvalidParameter, "the query body is not UTF-8")
            })?;
            let api = parse_query(&text, params)?;
            fan = sql_of(&text).map(|sql| json!({ "sql": sql }));
            api
        }
        (Method::Post, "/v1/partial") => {
            // only this Worker's own fan-out: the split is trusted as sent
            let Some(want) = config.fanout.and(config.fanout_secret.as_deref()) else {
                return Err(ErrorResponse::new(
                    Failure::NoRoute,
                    "/v1/partial answers only this Worker's own fan-out, which is off (DELTALENS_FANOUT_BYTES)",
                ));
            };
            let given = req
                .headers()
                .get("x-deltalens-fanout-secret")
                .ok()
                .flatten();
            if !given.is_some_and(|g| token_matches(&g, want)) {
                return Err(ErrorResponse::new(
                    Failure::Forbidden,
                    "/v1/partial answers only this Worker's own fan-out",
                ));
            }
            parse_partial(&read_body(req, MAX_PARTIAL_BODY).await?)?
        }
        (_, "/v1/query") => {
            return Err(ErrorResponse::new(
                Failure::MethodNotAllowed,
                "send the SQL with POST /v1/query",
            ));
        }
        (Method::Get | Method::Head, p) if p.starts_with("/v1/") => {
            if p.trim_end_matches('/') == "/v1/scan" {
                fan = Some(json!({ "scan": scan_for_splits(params) }));
            }
            parse_get(p, params)?
        }
        (_, p) if p.starts_with("/v1/") => {
            return Err(ErrorResponse::new(
                Failure::MethodNotAllowed,
                format!("{p} answers GET"),
            ));
        }
        (_, p) => {
            return Err(ErrorResponse::new(
                Failure::NoRoute,
                format!(
                    "{p} is not a route: GET /v1/info, /v1/health, /v1/schema, /v1/history, /v1/files, /v1/diff, /v1/scan, /v1/changes, POST /v1/query"
                ),
            ));
        }
    };
    Ok(Parsed::Api(api, fan))
}

/// What `budget` has counted: bytes read and storage requests.
fn spent_by(budget: &BudgetStorage<DynStorage>) -> Spent {
    Spent {
        bytes: budget.bytes(),
        subrequests: budget.requests(),
    }
}

/// The answer to `api` (with `fan`, what its splits are sent, where it may fan out) on
/// the `opened` table.
async fn answer(
    req: &Request,
    env: &Env,
    config: &Config,
    api: ApiRequest,
    fan: Option<Value>,
    opened: &crate::storage::Opened,
) -> Result<Response, ErrorResponse> {
    // the health report's ages are measured from this isolate's clock
    let now_ms = crate::storage::now() as i64;
    // the fan-out's calls to split workers, where the request may fan out
    let auth = req.headers().get("authorization").ok().flatten();
    let tree = fan
        .as_ref()
        .map(|what| crate::fanout::Tree::new(env, config, what, auth, &opened.budget));
    let fanned = match (&api, &config.fanout, &tree) {
        (ApiRequest::Rows { query, format }, Some(policy), Some(tree)) => {
            let call = |split: &Split, splits: usize| tree.ask(split.clone(), splits);
            respond_fanned_out(query, *format, &opened.table, config.limits(), policy, call).await?
        }
        _ => None,
    };
    let (a, split_count) = match fanned {
        Some((a, n)) => (a, Some(n)),
        None => (
            respond(api, &opened.table, config.limits(), now_ms).await?,
            None,
        ),
    };
    // the work after the last subrequest counts too
    opened
        .budget
        .check_time("the response")
        .map_err(|e| ErrorResponse::from(deltalens_core::Error::from(e)))?;
    let h = Headers::new();
    h.set("content-type", a.content_type)?;
    h.set("x-deltalens-version", &a.version.to_string())?;
    let own = spent_by(&opened.budget);
    h.set("x-deltalens-subrequests", &own.subrequests.to_string())?;
    h.set("x-deltalens-bytes-read", &own.bytes.to_string())?;
    if let Some(n) = a.rows {
        h.set("x-deltalens-rows", &n.to_string())?;
    }
    if let (Some(n), Some(tree)) = (split_count, &tree) {
        // the whole tree: the splits asked, the calls sent for them (retries included),
        // and what the split workers reported they read, failed attempts included (the
        // headers above are this instance's)
        let r = tree.reported();
        h.set("x-deltalens-splits", &n.to_string())?;
        h.set("x-deltalens-split-calls", &tree.calls().to_string())?;
        h.set("x-deltalens-splits-bytes-read", &r.bytes.to_string())?;
        h.set("x-deltalens-splits-subrequests", &r.subrequests.to_string())?;
    }
    h.set("cache-control", "no-store")?;
    Ok(Response::from_bytes(a.body)?.with_headers(h))
}

fn json_response(v: &Value) -> Result<Response, ErrorResponse> {
    let h = Headers::new();
    h.set("content-type", "application/json")?;
    Ok(Response::ok(v.to_string())?.with_headers(h))
}

/// The SQL text of a `POST /v1/query` body (the body, or its JSON's `sql`).
fn sql_of(body: &str) -> Option<String> {
    let t = body.trim_start();
    if t.starts_with('{') {
        let v: Value = deltalens_json::from_str(t).ok()?;
        return v.get("sql")?.as_str().map(str::to_string);
    }
    Some(body.to_string())
}

/// A request body, refused with a 413 naming the limit when it is longer than
/// `max_body`: a `Content-Length` above it before anything is read, a body without one
/// (chunked) as soon as what has streamed in passes it.
async fn read_body(req: &Request, max_body: usize) -> Result<Vec<u8>, ErrorResponse> {
    let too_large = |size: String| {
        ErrorResponse::new(
            Failure::QueryTooLarge,
            format!(
                "the query body is {size} bytes; the limit is {max_body} bytes: send a shorter query"
            ),
        )
    };
    if let Some(announced) = req.headers().get("content-length").ok().flatten() {
        let n: u64 = announced.trim().parse().map_err(|_| {
            ErrorResponse::new(
                Failure::InvalidParameter,
                format!("Content-Length {announced:?} is not a number"),
            )
        })?;
        if n > max_body as u64 {
            return Err(too_large(n.to_string()));
        }
    }
    let Some(stream) = req.inner().body() else {
        return Ok(Vec::new());
    };
    let failed = |e: JsValue| {
        ErrorResponse::new(
            Failure::InvalidParameter,
            format!(
                "the query body could not be read: {}",
                e.as_string().unwrap_or_else(|| format!("{e:?}"))
            ),
        )
    };
    let reader = worker::web_sys::ReadableStreamDefaultReader::new(&stream).map_err(failed)?;
    let mut body = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(failed)?;
        let field = |name: &str| Reflect::get(&chunk, &JsValue::from_str(name));
        if field("done").map_err(failed)?.as_bool().unwrap_or(true) {
            return Ok(body);
        }
        let bytes = Uint8Array::new(&field("value").map_err(failed)?);
        if body.len() + bytes.length() as usize > max_body {
            let _ = reader.cancel();
            return Err(too_large(format!("more than {max_body}")));
        }
        body.extend_from_slice(&bytes.to_vec());
    }
}

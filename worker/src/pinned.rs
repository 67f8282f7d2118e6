//! Answers of pinned versions, kept in the Cache API (`caches.default`): a table at
//! `VERSION AS OF n` (or a change feed between two versions) never changes, so the same
//! question of it has the same answer. Only rows of such a query (`POST /v1/query`,
//! `GET /v1/scan` with `version=`) are kept — never the latest version, a time, history or
//! health (which move) — and only after the bearer token and the allowlist passed.
//!
//! The key is a SHA-256 of everything the answer depends on: this build, the route, the
//! parsed question (SQL or parameters, format) and the request's limits; an attacker who
//! can ask questions cannot make two of them share a key. A kept answer is served with
//! `x-deltalens-cache: hit` and this request's own spending (none); a miss says `miss`.
//! The Cache API failing is never an error: the answer is computed as without it.

use deltalens_api::ApiRequest;
use deltalens_api::sql::{Bound, Source};
use deltalens_core::VersionSpec;
use sha2::{Digest, Sha256};
use worker::{Cache, Headers, Response};

use crate::config::Config;

/// How long a kept answer stays (the Cache API needs a `max-age`): a day.
const KEEP_SECONDS: u32 = 86_400;

/// Whether `api` asks about a version that never changes.
pub fn is_pinned(api: &ApiRequest) -> bool {
    let ApiRequest::Rows { query, .. } = api else {
        return false;
    };
    matches!(
        query.source,
        Source::Table {
            at: VersionSpec::Version(_),
            ..
        } | Source::Changes {
            from: Bound::Version(_),
            to: Some(Bound::Version(_)),
            ..
        }
    )
}

/// The cache key of `api` asked at `origin` (`scheme://host`) on `path`, when it is
/// pinned: a URL on the worker's own origin naming the SHA-256 of the question.
pub fn key(origin: &str, path: &str, api: &ApiRequest, config: &Config) -> Option<String> {
    if !is_pinned(api) {
        return None;
    }
    let question = format!(
        "{}\n{path}\n{api:?}\n{:?}\n{:?}",
        env!("CARGO_PKG_VERSION"),
        config.limits(),
        config.budgets
    );
    let digest = Sha256::digest(question.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("{origin}/.deltalens-pinned/{hex}"))
}

/// The answer kept under `key`, served as this request's: nothing read for it.
pub async fn get(key: &str) -> Option<Response> {
    let kept = Cache::default().get(key, false).await.ok()??;
    let h = kept.headers().clone();
    h.set("cache-control", "no-store").ok()?;
    h.set("x-deltalens-cache", "hit").ok()?;
    h.set("x-deltalens-subrequests", "0").ok()?;
    h.set("x-deltalens-bytes-read", "0").ok()?;
    Some(kept.with_headers(h))
}

/// Keep `answer` (a 200) under `key` and return it, marked as a miss.
pub async fn put(key: &str, mut answer: Response) -> worker::Result<Response> {
    let h = answer.headers().clone();
    h.set("x-deltalens-cache", "miss")?;
    if answer.status_code() == 200
        && let Ok(copy) = answer.cloned()
    {
        let kept = Headers::new();
        for (name, value) in copy.headers().entries() {
            kept.set(&name, &value)?;
        }
        kept.set("cache-control", &format!("public, max-age={KEEP_SECONDS}"))?;
        // a failed put keeps nothing: the next request computes the answer again
        let _ = Cache::default().put(key, copy.with_headers(kept)).await;
    }
    Ok(answer.with_headers(h))
}

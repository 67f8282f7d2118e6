//! An opened table: its storage (browser `fetch`, counted and timed), the core `Table`,
//! and what the page remembers — the URL state (`?table=…&version=…&tab=…`, never
//! credentials; the Query tab's SQL as `q=`) and recently opened tables (credentials:
//! [`crate::credentials`]).

use std::sync::Arc;

use deltalens_core::Table;
use deltalens_fetch_storage::{BrowserOptions, FetchStorage, LocationError, Sleep, boxed_sleep};

use deltalens_storage::{CachingStorage, CountingStorage, RequestStats, RetryPolicy, RetryStorage};

/// Session cache for footers and log files (immutable per version).
const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Requests counted and timed; immutable bytes cached; 5xx and network errors retried with
/// backoff; then the browser's fetch.
pub type Counted = CountingStorage<CachingStorage<RetryStorage<Arc<FetchStorage>, Sleep>>>;

/// One opened table.
pub struct Session {
    pub url: String,
    /// The relay it is read through, as given (`/` for the page's own server).
    pub via: Option<String>,
    pub table: Table,
    pub counter: Arc<Counted>,
    pub fetch: Arc<FetchStorage>,
    /// The options it was opened with (the Query tab's worker opens it with the same).
    pub options: BrowserOptions,
}

pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

impl Session {
    /// Open `url` through `via` (as given; `opts.relay` is it resolved) with the given
    /// storage options (nothing is fetched yet).
    pub fn open(
        url: &str,
        via: Option<String>,
        opts: &BrowserOptions,
    ) -> Result<Session, LocationError> {
        let url = url.trim().trim_end_matches('/').to_string();
        let via = via.filter(|r| !r.trim().is_empty());
        let fetch = Arc::new(FetchStorage::open(&url, opts)?);
        let retry = RetryStorage::new(
            Arc::clone(&fetch),
            RetryPolicy::default(),
            boxed_sleep as Sleep,
        );
        let counter = Arc::new(CountingStorage::with_clock(
            CachingStorage::new(retry, CACHE_BYTES),
            now_ms,
        ));
        let table = Table::new(counter.clone(), &url);
        Ok(Session {
            url,
            via,
            table,
            counter,
            fetch,
            options: opts.clone(),
        })
    }

    pub fn stats(&self) -> RequestStats {
        self.counter.stats()
    }
}

/// A relay given relative to this page (`/`: the server that served it) as an absolute
/// URL; an absolute one as it is.
pub fn resolve_relay(via: &str) -> String {
    let via = via.trim();
    let base = web_sys::window().and_then(|w| w.location().href().ok());
    match base.and_then(|b| web_sys::Url::new_with_base(via, &b).ok()) {
        Some(u) => u.href(),
        None => via.to_string(),
    }
}

const RECENT_KEY: &str = "deltalens.recent";

/// Recently opened table URLs, newest first (never credentials).
pub fn recent() -> Vec<String> {
    crate::device::get(RECENT_KEY)
        .and_then(|v| deltalens_json::from_str(&v).ok())
        .unwrap_or_default()
}

pub fn remember_recent(url: &str) {
    let mut r = recent();
    r.retain(|u| u != url);
    r.insert(0, url.to_string());
    r.truncate(10);
    if let Ok(v) = serde_json::to_string(&r) {
        crate::device::set(RECENT_KEY, &v);
    }
}

/// The view in the page URL: table, version and tab (never credentials).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UrlState {
    pub table: Option<String>,
    /// The relay the table is read through (never a credential).
    pub via: Option<String>,
    pub version: Option<u64>,
    pub tab: Option<String>,
    /// The Query tab's SQL (`q=`).
    pub query: Option<String>,
}

pub fn read_url() -> UrlState {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    let Ok(p) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return UrlState::default();
    };
    UrlState {
        table: p.get("table").filter(|t| !t.is_empty()),
        via: p.get("via").filter(|t| !t.is_empty()),
        version: p.get("version").and_then(|v| v.parse().ok()),
        tab: p.get("tab"),
        query: p.get("q").filter(|q| !q.trim().is_empty()),
    }
}

/// Put `s` in the page URL: a new history entry when it differs from the URL shown (so
/// Back and Forward step through tables, versions and tabs), nothing when it is the same.
pub fn write_url(s: &UrlState) {
    let Ok(p) = web_sys::UrlSearchParams::new() else {
        return;
    };
    if let Some(t) = &s.table {
        p.append("table", t);
    }
    if let Some(v) = &s.via {
        p.append("via", v);
    }
    if let Some(v) = s.version {
        p.append("version", &v.to_string());
    }
    if let Some(t) = &s.tab {
        p.append("tab", t);
    }
    if let Some(q) = &s.query {
        p.append("q", q);
    }
    let q: String = p.to_string().into();
    let Some(w) = web_sys::window() else {
        return;
    };
    let shown = w.location().search().unwrap_or_default();
    let url = format!("?{q}");
    if shown == url || (shown.is_empty() && q.is_empty()) {
        return;
    }
    if let Ok(h) = w.history() {
        // the first view of a page replaces its entry (the URL it was opened with)
        let result = if shown.is_empty() || shown == "?" {
            h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        } else {
            h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        };
        let _ = result;
    }
}

//! The page's state: which table is open ([`Ctx::session`]), the version shown — without
//! its files ([`Ctx::info`]: schema, properties, history render at once), its file totals
//! as they stream in and then its `$partitions` ([`Ctx::totals`], [`Ctx::partitions`]:
//! one pass over the files, in the background, beside a preview or the history); the
//! tabs that list or read files stream them themselves, never holding the whole list —
//! the tab and version,
//! what is running and the last error, and the actions that change it (open, load a
//! version, time travel, run and cancel a long operation). Components read it with
//! [`use_ctx`]; nothing here renders.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use deltalens_core::file_totals::FileTotals;
use deltalens_core::time_travel::parse_timestamp;
use deltalens_core::version_info::PROGRESS_EVERY_FILES;
use deltalens_core::{HistoryEntry, VersionInfo, VersionSpec};
use deltalens_present::HealthSeries;
use deltalens_present::health::{HISTORY_COMMITS, Health, HealthTally, VersionFacts};
use deltalens_present::{PartitionRow, PartitionTotals};
use futures::future::{AbortHandle, Abortable};
use leptos::prelude::*;
use leptos::task::spawn_local;

use deltalens_storage::relay::CatalogEntry;

use crate::credentials::Form;
use crate::errors::{explain, explain_present};
use crate::query::protocol::{Answer, Progress};
use crate::session::{self, Session, UrlState};

/// The tabs of the page, in the order shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Overview,
    Schema,
    History,
    Data,
    Changes,
    Diff,
    Files,
    Query,
}

impl Tab {
    pub const ALL: [Tab; 8] = [
        Tab::Overview,
        Tab::Schema,
        Tab::History,
        Tab::Data,
        Tab::Changes,
        Tab::Diff,
        Tab::Files,
        Tab::Query,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tab::Overview => "overview",
            Tab::Schema => "schema",
            Tab::History => "history",
            Tab::Data => "data",
            Tab::Changes => "changes",
            Tab::Diff => "diff",
            Tab::Files => "files",
            Tab::Query => "query",
        }
    }

    /// The tab named `s` (as in the URL's `tab=`), if any.
    pub fn parse(s: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The Query tab's last query: its SQL, the version on screen when it ran, what it read
/// while running, and its answer once there.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryRun {
    pub sql: String,
    pub shown: u64,
    pub progress: Option<Progress>,
    pub answer: Option<Answer>,
    /// Why it failed (shown in the tab, beside the SQL).
    pub error: Option<String>,
}

/// State shared by every part of the page.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub session: RwSignal<Option<Rc<Session>>, LocalStorage>,
    /// The version shown, without its files.
    pub info: RwSignal<Option<Arc<VersionInfo>>, LocalStorage>,
    /// Totals over its files so far, and whether they are complete.
    pub totals: RwSignal<Option<(FileTotals, bool)>>,
    /// Its `$partitions`, from the same pass over its files, once complete.
    pub partitions: RwSignal<Option<Vec<PartitionRow>>>,
    /// Its health report: the same pass over its files, then its tombstones and the
    /// newest commits of history, once read.
    pub health: RwSignal<Option<Health>>,
    /// Health at versions spread over the history up to the version shown, once asked for.
    pub health_series: RwSignal<Option<HealthSeries>>,
    /// The version whose files are being counted, while they are.
    pub counting: RwSignal<Option<u64>>,
    /// The newest version known.
    pub latest: RwSignal<Option<u64>>,
    /// The version being looked at (`None`: follow the latest).
    pub version: RwSignal<Option<u64>>,
    pub tab: RwSignal<Tab>,
    /// What is running (for the status line), if anything.
    pub busy: RwSignal<Option<String>>,
    /// Requests and bytes since the table was opened, and reads a server answered with
    /// the whole file (it ignores Range).
    pub io: RwSignal<(u64, u64, u64)>,
    pub error: RwSignal<Option<String>>,
    /// History entries loaded so far, newest first.
    pub history: RwSignal<Vec<HistoryEntry>>,
    /// A Unity Catalog catalog or schema being browsed (through a relay): its name and
    /// what it holds, once listed.
    pub catalog: RwSignal<Option<(String, Option<Vec<CatalogEntry>>)>>,
    /// The Query tab's SQL (as in the URL's `q=`), once one is run or linked.
    pub query: RwSignal<Option<String>>,
    /// Its last run.
    pub query_run: RwSignal<Option<QueryRun>>,
    /// A table from the page URL or a catalog whose requests would carry one of the
    /// form's secrets, waiting for the user's answer ([`Ctx::open_link`]).
    pub pending: RwSignal<Option<LinkOpen>>,
    /// Where the user agreed, in this page, that secrets go: their own Opens and the links
    /// they answered "with my credentials".
    consented: StoredValue<Vec<String>>,
    cancel: StoredValue<Option<AbortHandle>, LocalStorage>,
    /// How many operations [`Ctx::run`] started: one replaced by a newer one ends
    /// silently (the newer one owns the status line and the error).
    runs: StoredValue<u64>,
    stop_count: StoredValue<Option<AbortHandle>, LocalStorage>,
}

impl Ctx {
    /// Nothing open, the overview tab.
    pub(crate) fn new() -> Ctx {
        Ctx {
            session: RwSignal::new_local(None),
            info: RwSignal::new_local(None),
            totals: RwSignal::new(None),
            partitions: RwSignal::new(None),
            health: RwSignal::new(None),
            health_series: RwSignal::new(None),
            counting: RwSignal::new(None),
            latest: RwSignal::new(None),
            version: RwSignal::new(None),
            tab: RwSignal::new(Tab::Overview),
            busy: RwSignal::new(None),
            io: RwSignal::new((0, 0, 0)),
            error: RwSignal::new(None),
            history: RwSignal::new(Vec::new()),
            catalog: RwSignal::new(None),
            query: RwSignal::new(None),
            query_run: RwSignal::new(None),
            pending: RwSignal::new(None),
            consented: StoredValue::new(Vec::new()),
            cancel: StoredValue::new_local(None),
            runs: StoredValue::new(0),
            stop_count: StoredValue::new_local(None),
        }
    }

    /// Copy the session's request counters into [`Ctx::io`].
    pub fn refresh_io(self) {
        if let Some(s) = self.session.get_untracked() {
            let st = s.stats();
            self.io
                .set((st.requests, st.bytes, s.fetch.ranges_ignored()));
        }
    }

    /// Run a long operation: shows progress, can be cancelled (the future is dropped,
    /// which aborts its requests), and reports its error.
    pub fn run(
        self,
        label: impl Into<String>,
        fut: impl Future<Output = Result<(), String>> + 'static,
    ) {
        self.cancel_run();
        let (handle, reg) = AbortHandle::new_pair();
        self.cancel.set_value(Some(handle));
        let id = self.runs.get_value().wrapping_add(1);
        self.runs.set_value(id);
        self.busy.set(Some(label.into()));
        self.error.set(None);
        spawn_local(async move {
            let out = Abortable::new(fut, reg).await;
            if self.runs.get_value() != id {
                // replaced by a newer operation (Run pressed again): not an error
                return;
            }
            match out {
                Ok(Ok(())) => {}
                Ok(Err(e)) => self.error.set(Some(e)),
                Err(_) => self.error.set(Some("Cancelled.".into())),
            }
            self.busy.set(None);
            self.refresh_io();
        });
    }

    /// Abort what is running and the counting of files, if anything (the Cancel button).
    pub fn cancel(self) {
        self.cancel_run();
        if self.counting.get_untracked().is_some() {
            self.stop_counting();
            self.error.set(Some(
                "Cancelled: the files were not all counted (totals and $partitions are missing)."
                    .into(),
            ));
        }
    }

    /// Abort the operation [`Ctx::run`] started, if it still runs.
    fn cancel_run(self) {
        if let Some(h) = self.cancel.get_value() {
            h.abort();
        }
        self.cancel.set_value(None);
    }

    fn stop_counting(self) {
        if let Some(h) = self.stop_count.get_value() {
            h.abort();
        }
        self.stop_count.set_value(None);
        self.counting.set(None);
    }

    /// Count the files of `info` in the background — totals as they stream in, then
    /// `$partitions` — beside whatever else runs (a preview, the history): one pass over
    /// the files, whose memory follows a window of the checkpoint and the partitions.
    fn count_files(self, info: Arc<VersionInfo>) {
        self.stop_counting();
        let (handle, reg) = AbortHandle::new_pair();
        self.stop_count.set_value(Some(handle));
        self.counting.set(Some(info.version));
        spawn_local(async move {
            // the version's schema, properties and history render first
            next_frame().await;
            let now_ms = js_sys::Date::now() as i64;
            let pass = async {
                let mut totals = FileTotals::new();
                let mut parts = PartitionTotals::default();
                let mut tally = HealthTally::new(&info.metadata, now_ms);
                let partitioned = !info.partition_columns().is_empty();
                let mut failed = None;
                info.for_each_file(&mut |f| {
                    let values = info.partition_values_json(&f)?;
                    tally.file(&f, partitioned.then_some(&values));
                    if let Err(e) = parts.add(values, &f) {
                        failed = Some(explain_present(&e));
                        return Ok(false);
                    }
                    totals.add(&f);
                    if totals.files.is_multiple_of(PROGRESS_EVERY_FILES) {
                        self.totals.set(Some((totals.clone(), false)));
                        self.refresh_io();
                    }
                    Ok(true)
                })
                .await
                .map_err(|e| explain(&e))?;
                if let Some(e) = failed {
                    return Err(e);
                }
                self.totals.set(Some((totals, true)));
                self.partitions.set(Some(parts.finish()));
                // then the health report: the tombstones and the newest commits
                info.for_each_tombstone(&mut |r| {
                    tally.tombstone(&r);
                    Ok(true)
                })
                .await
                .map_err(|e| explain(&e))?;
                let Some(sess) = self.session.get_untracked() else {
                    return Ok(());
                };
                let history = sess
                    .table
                    .history(Some(HISTORY_COMMITS))
                    .await
                    .map_err(|e| explain(&e))?;
                let facts = VersionFacts::of(&sess.url, &info);
                self.health
                    .set(Some(Health::build(facts, tally, &history, now_ms)));
                Ok(())
            };
            match Abortable::new(pass, reg).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => self.error.set(Some(e)),
                // stopped: another version is shown, or the user cancelled
                Err(_) => return,
            }
            self.counting.set(None);
            self.stop_count.set_value(None);
            self.refresh_io();
        });
    }

    /// Show tab `t` (a history entry of its own).
    pub fn show_tab(self, t: Tab) {
        self.tab.set(t);
        self.write_url();
    }

    /// One version back (`-1`) or forward (`+1`) from the one shown, within the table's.
    pub fn step_version(self, delta: i64) {
        let (Some(shown), Some(latest)) = (self.shown_version(), self.latest.get_untracked())
        else {
            return;
        };
        let next = shown.saturating_add_signed(delta).min(latest);
        if next != shown {
            self.load(if next == latest { None } else { Some(next) });
        }
    }

    /// Restore what the page URL says (Back, Forward): table, relay, version and tab.
    pub fn restore(self, form: &Form) {
        let want = session::read_url();
        if let Some(t) = want.tab.as_deref().and_then(Tab::parse) {
            self.tab.set(t);
        }
        if want.query.is_some() {
            self.query.set(want.query.clone());
        }
        let Some(table) = want.table else {
            return;
        };
        let current = self.session.get_untracked();
        let same_table = current
            .as_ref()
            .is_some_and(|s| s.url == table && s.via == want.via);
        if !same_table {
            // an entry is a link: its relay beside the form, and asked about first when a
            // secret would go with it
            self.open_link(table, want.via, want.version, form);
        } else if self.version.get_untracked() != want.version
            && self.catalog.get_untracked().is_none()
        {
            self.load(want.version);
        }
    }

    /// Put the table, version and tab in the page URL.
    pub fn write_url(self) {
        session::write_url(&UrlState {
            table: self.session.get_untracked().map(|s| s.url.clone()),
            via: self.session.get_untracked().and_then(|s| s.via.clone()),
            version: self.version.get_untracked(),
            tab: Some(self.tab.get_untracked().name().to_string()),
            query: self
                .query
                .get_untracked()
                .filter(|_| self.tab.get_untracked() == Tab::Query),
        });
    }

    /// Show `version` (latest when `None`): first the version without its files, then
    /// the totals over its files as they stream in (memory follows a window of the
    /// checkpoint, not the file count).
    pub fn load(self, version: Option<u64>) {
        let Some(s) = self.session.get_untracked() else {
            return;
        };
        self.version.set(version);
        self.write_url();
        // the files of the version shown until now are no longer counted
        self.stop_counting();
        self.run(loading_label(version), async move {
            let spec = version.map_or(VersionSpec::Latest, VersionSpec::Version);
            let info = s.table.version_info(spec).await.map_err(|e| explain(&e))?;
            let newest = self
                .newest(&s, version, info.version)
                .await
                .map_err(|e| explain(&e))?;
            if let Some(l) = newest {
                self.latest.set(Some(l));
            }
            let info = Arc::new(info);
            self.totals.set(None);
            self.partitions.set(None);
            self.health.set(None);
            self.health_series.set(None);
            self.info.set(Some(Arc::clone(&info)));
            self.count_files(info);
            Ok(())
        });
    }

    /// Read the health at `points` versions spread over the newest commits of history,
    /// ending at the version shown (the Overview's "over history" chart).
    pub fn read_health_series(self, points: usize) {
        let (Some(s), Some(v)) = (self.session.get_untracked(), self.shown_version()) else {
            return;
        };
        let now_ms = js_sys::Date::now() as i64;
        self.run(
            format!("reading the health at {points} versions"),
            async move {
                let history = s
                    .table
                    .history(Some(HISTORY_COMMITS))
                    .await
                    .map_err(|e| explain(&e))?;
                let series = HealthSeries::read(&s.table, &history, Some(v), points, now_ms)
                    .await
                    .map_err(|e| explain_present(&e))?;
                if self.shown_version() == Some(v) {
                    self.health_series.set(Some(series));
                }
                Ok(())
            },
        );
    }

    /// The version shown, if one is open.
    pub fn shown_version(self) -> Option<u64> {
        self.info.with(|i| i.as_ref().map(|i| i.version))
    }

    /// The newest version when reading `version` (latest when `None`) found `read`
    /// newer than the newest known: `read` itself for the latest, else a second, cheap
    /// open finds it (the slider needs it). `None` when the newest known stands.
    async fn newest(
        self,
        s: &Session,
        version: Option<u64>,
        read: u64,
    ) -> deltalens_core::Result<Option<u64>> {
        if version.is_none() {
            return Ok(Some(read));
        }
        if self.latest.get_untracked().is_some_and(|l| read <= l) {
            return Ok(None);
        }
        Ok(Some(
            s.table.version_info(VersionSpec::Latest).await?.version,
        ))
    }

    /// Open a table that did not come from the user's own Open (a link, Back and Forward,
    /// a catalog entry): at once when none of the form's secrets would go with it or the
    /// user agreed to send them where it reads, else [`Ctx::pending`] asks first.
    pub fn open_link(self, table: String, via: Option<String>, version: Option<u64>, form: &Form) {
        let link = LinkOpen::new(table, via, version, form);
        let agreed = link
            .origin
            .as_ref()
            .is_some_and(|o| self.consented.with_value(|c| c.contains(o)));
        if link.secrets.is_empty() || agreed {
            self.pending.set(None);
            self.open(link.table, link.via, form, link.version);
        } else {
            self.pending.set(Some(link));
        }
    }

    /// The user's answer to [`Ctx::pending`]: with the secrets bound where it reads (and
    /// agreed for the rest of this page), or with none.
    pub fn answer_link(self, with_credentials: bool, form: &Form) {
        let Some(link) = self.pending.get_untracked() else {
            return;
        };
        self.pending.set(None);
        if with_credentials {
            self.consent(link.origin.clone());
            self.open(link.table, link.via, form, link.version);
        } else {
            self.open(link.table, link.via, &form.without_secrets(), link.version);
        }
    }

    /// The user agreed that secrets bound to `scope` go there (their own Open).
    pub fn consent(self, scope: Option<String>) {
        if let Some(s) = scope {
            self.consented.update_value(|c| {
                if !c.contains(&s) {
                    c.push(s);
                }
            });
        }
    }

    /// Open a table URL, read through `via` (a relay as given: in a link, the form or
    /// the session; `None`: straight from storage), and show it. The form's secrets go
    /// with it only where they are bound ([`Form::options_for`]).
    pub fn open(self, url: String, via: Option<String>, form: &Form, version: Option<u64>) {
        let via = via.filter(|v| !v.trim().is_empty());
        let resolved = via.as_deref().map(session::resolve_relay);
        let opened = form
            .options_for(&url, resolved.as_deref())
            .and_then(|plan| Session::open(&url, via, &plan.options));
        match opened {
            Ok(s) => {
                // a query of another table is not this one's (a link's names this one)
                if self
                    .query
                    .get_untracked()
                    .is_some_and(|q| !q.contains(&s.url))
                {
                    self.query.set(None);
                }
                self.query_run.set(None);
                self.session.set(Some(Rc::new(s)));
                self.stop_counting();
                self.info.set(None);
                self.totals.set(None);
                self.partitions.set(None);
                self.health.set(None);
                self.health_series.set(None);
                self.latest.set(None);
                self.history.set(Vec::new());
                if is_catalog(&s_url(&self)) {
                    self.browse();
                } else {
                    self.catalog.set(None);
                    self.load(version);
                }
            }
            Err(e) => self.error.set(Some(e.to_string())),
        }
    }

    /// List the catalog or schema opened (instead of reading a table).
    fn browse(self) {
        let Some(s) = self.session.get_untracked() else {
            return;
        };
        self.catalog.set(Some((s.url.clone(), None)));
        self.write_url();
        self.run(format!("listing {}", s.url), async move {
            let entries = s.fetch.catalog().await.map_err(|e| e.to_string())?;
            self.catalog.set(Some((s.url.clone(), Some(entries))));
            Ok(())
        });
    }

    /// Time travel to the version current at `ts` (TIMESTAMP AS OF).
    pub fn travel_to(self, ts: String) {
        let Some(s) = self.session.get_untracked() else {
            return;
        };
        self.run(format!("finding the version at {ts}"), async move {
            let ms = parse_timestamp(&ts).map_err(|e| explain(&e))?;
            let v = s
                .table
                .version_at_timestamp(ms)
                .await
                .map_err(|e| explain(&e))?;
            self.load(Some(v));
            Ok(())
        });
    }
}

/// A table opened from the page URL (a link, Back, Forward) or a catalog entry: where its
/// requests go and which of the form's secrets would go with them.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkOpen {
    pub table: String,
    pub via: Option<String>,
    pub version: Option<u64>,
    /// Where its requests go, as a secret is bound (relay or account origin, S3 bucket).
    pub origin: Option<String>,
    /// The kinds of secret that would go with it.
    pub secrets: Vec<&'static str>,
}

impl LinkOpen {
    fn new(table: String, via: Option<String>, version: Option<u64>, form: &Form) -> LinkOpen {
        let resolved = via.as_deref().map(session::resolve_relay);
        // a table that cannot be opened carries nothing (the open says why)
        let (origin, secrets) = match form.options_for(&table, resolved.as_deref()) {
            Ok(plan) => (plan.origin, plan.secrets),
            Err(_) => (None, Vec::new()),
        };
        LinkOpen {
            table,
            via,
            version,
            origin,
            secrets,
        }
    }
}

/// The page's state (a fresh one outside the app, e.g. in a component test).
/// Move the keyboard focus to the element with `id`, if there is one.
pub fn focus(id: &str) {
    use wasm_bindgen::JsCast;
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}

/// The URL of the session just opened.
fn s_url(ctx: &Ctx) -> String {
    ctx.session
        .get_untracked()
        .map(|s| s.url.clone())
        .unwrap_or_default()
}

/// Whether `url` names a Unity Catalog catalog or schema (browsed, not read).
pub fn is_catalog(url: &str) -> bool {
    matches!(
        deltalens_storage::TableUrl::parse(url).map(|t| t.store),
        Ok(deltalens_storage::Store::UnityCatalog { name }) if name.len() < 3
    )
}

pub fn use_ctx() -> Ctx {
    use_context::<Ctx>().unwrap_or_else(Ctx::new)
}

/// What the status line says while `version` (latest when `None`) is read.
fn loading_label(version: Option<u64>) -> String {
    match version {
        Some(v) => format!("reading version {v}"),
        None => "reading the latest version".to_string(),
    }
}

/// Resolves once the browser has had a frame to render what changed (or after 100 ms,
/// where frames do not come: a background tab).
pub async fn next_frame() {
    let frame = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.request_animation_frame(&resolve);
        }
    });
    let frame = wasm_bindgen_futures::JsFuture::from(frame);
    futures::future::select(frame, gloo_timers::future::TimeoutFuture::new(100)).await;
    // a frame's callbacks run before it paints: one more task after it
    yield_to_browser().await
}

/// Resolves in a later task: the browser may handle input and paint in between (a
/// storage read answered from the session's cache resolves at once, so long work made
/// of such reads would otherwise run as one task).
pub async fn yield_to_browser() {
    gloo_timers::future::TimeoutFuture::new(0).await
}

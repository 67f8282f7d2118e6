//! Per-request budgets: a decorator that refuses to go past a number of requests, a number
//! of bytes or a deadline, so one query cannot run away with an edge worker's subrequests,
//! memory or time. Each refusal is a [`StorageError::BudgetExceeded`] naming the budget.
//!
//! Budgets are charged before the work where the work's size is known, and a request that
//! cannot fit is refused without being made:
//!
//! - **requests**: each call counts one before it is made; a listing counts one per page
//!   of its answer — before each page when the backend reports its pages on the
//!   [`BudgetMeter`] ([`BudgetMeter::backend_meter`]), otherwise after the listing as the
//!   pages its length needs at the store's page size (1,000 objects by default, see
//!   [`BudgetStorage::with_list_page_size`]);
//! - **bytes**: a bounded range's length, a suffix's `n` and a `get_tail`'s `n` (each capped
//!   by the object's size when a listing, head or tail answer gave it) are reserved before
//!   the request and refused when they do not fit the remainder; what comes back settles
//!   the reservation (a shorter answer is refunded, a longer one is charged). A whole `get`
//!   or an open-ended range, whose length is unknown, is refused when nothing is left or
//!   when a known size does not fit, and otherwise made as a ranged read of at most the
//!   remainder + 1 bytes: a single answer never brings more than the remainder into memory
//!   (one byte more says "too large"). Requests in flight together each see the remainder
//!   at their start, so together they may pass the budget by their own lengths before the
//!   next charge refuses;
//! - **wall time**: checked before each request and raced against each request in flight
//!   when the caller gave a timer ([`BudgetStorage::set_timer`]): a store that stalls ends
//!   with the wall-time error when the time is up, not when the store answers.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;

use crate::{
    ByteRange, Clock, MaybeSendFuture, MaybeSendSync, ObjectMeta, Result, Storage, StorageError,
};

/// Limits of one request; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budgets {
    /// Storage requests (a worker's subrequests).
    pub max_requests: Option<u64>,
    /// Bytes read from storage.
    pub max_bytes: Option<u64>,
    /// Wall time in milliseconds from the decorator's creation.
    pub max_millis: Option<f64>,
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetKind {
    /// Storage requests (a worker's subrequests).
    Subrequests,
    /// Bytes read from storage.
    Bytes,
    /// Wall time, in milliseconds.
    WallTime,
    /// Rows a response may return.
    Rows,
    /// Rows held in memory at once to group, aggregate, sort or filter them.
    RowsBuffered,
}

impl BudgetKind {
    /// The name used in error codes and messages.
    pub fn name(self) -> &'static str {
        match self {
            BudgetKind::Subrequests => "subrequests",
            BudgetKind::Bytes => "bytes",
            BudgetKind::WallTime => "wall_time_ms",
            BudgetKind::Rows => "rows",
            BudgetKind::RowsBuffered => "rows_buffered",
        }
    }

    /// The error saying this budget of `limit` ran out at `used` while reading `what`.
    pub fn exceeded(self, limit: u64, used: u64, what: &str) -> StorageError {
        exceeded(self, limit, used, what)
    }
}

impl std::fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The counters of one request's budgets, shared by its [`BudgetStorage`] and, when the
/// backend reports its own subrequests and bodies, by the backend (see
/// [`BudgetMeter::backend_meter`]).
#[derive(Debug)]
pub struct BudgetMeter {
    budgets: Budgets,
    clock: Clock,
    start: f64,
    requests: AtomicU64,
    bytes: AtomicU64,
    /// The backend counts the pages of its listings itself.
    backend_pages: AtomicBool,
}

impl BudgetMeter {
    /// Start the clock now.
    pub fn new(budgets: Budgets, clock: Clock) -> Self {
        BudgetMeter {
            budgets,
            clock,
            start: clock(),
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            backend_pages: AtomicBool::new(false),
        }
    }

    /// The meter for a backend that calls [`BudgetMeter::subrequest`] before each request
    /// it makes beyond the one its caller asked for (each listing page after the first, a
    /// HEAD it needs first) and [`BudgetMeter::body`] with a body's announced length
    /// before reading it. Taking it tells the [`BudgetStorage`] not to estimate listing
    /// pages on top.
    pub fn backend_meter(self: &Arc<Self>) -> Arc<Self> {
        self.backend_pages.store(true, Ordering::Relaxed);
        Arc::clone(self)
    }

    /// The budgets enforced.
    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// Requests counted so far (refused ones are not counted).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes counted so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Bytes still allowed; `None` without a byte budget.
    pub fn remaining_bytes(&self) -> Option<u64> {
        self.budgets
            .max_bytes
            .map(|max| max.saturating_sub(self.bytes()))
    }

    /// Milliseconds since creation.
    pub fn elapsed_ms(&self) -> f64 {
        (self.clock)() - self.start
    }

    /// Milliseconds left; `None` without a deadline.
    pub fn remaining_ms(&self) -> Option<f64> {
        self.budgets.max_millis.map(|max| max - self.elapsed_ms())
    }

    /// Fail with [`StorageError::BudgetExceeded`] when the deadline has passed.
    pub fn check_time(&self, path: &str) -> Result<()> {
        if let Some(max) = self.budgets.max_millis {
            let used = self.elapsed_ms();
            if used > max {
                return Err(self.late(path));
            }
        }
        Ok(())
    }

    fn late(&self, path: &str) -> StorageError {
        let max = self.budgets.max_millis.unwrap_or(0.0);
        exceeded(
            BudgetKind::WallTime,
            max as u64,
            self.elapsed_ms().max(max) as u64,
            path,
        )
    }

    /// Count one more request before it is made (a listing page after the first, a
    /// backend's extra HEAD): refused when the deadline has passed or no request is left.
    pub fn subrequest(&self, path: &str) -> Result<()> {
        self.check_time(path)?;
        self.charge_requests(path, 1)
    }

    fn charge_requests(&self, path: &str, n: u64) -> Result<()> {
        let total = self.requests.fetch_add(n, Ordering::Relaxed) + n;
        if let Some(max) = self.budgets.max_requests
            && total > max
        {
            self.requests.fetch_sub(n, Ordering::Relaxed);
            return Err(exceeded(BudgetKind::Subrequests, max, total, path));
        }
        Ok(())
    }

    /// Refuse a body of `announced` bytes (its `Content-Length`) that does not fit the
    /// remainder, before reading it. Charges nothing: what is read is charged by the
    /// [`BudgetStorage`].
    pub fn body(&self, path: &str, announced: u64) -> Result<()> {
        match self.budgets.max_bytes {
            Some(max) if self.bytes().saturating_add(announced) > max => Err(exceeded(
                BudgetKind::Bytes,
                max,
                self.bytes().saturating_add(announced),
                path,
            )),
            _ => Ok(()),
        }
    }

    /// Reserve `n` bytes before a request, or refuse it.
    fn reserve(&self, path: &str, n: u64) -> Result<()> {
        let Some(max) = self.budgets.max_bytes else {
            self.bytes.fetch_add(n, Ordering::Relaxed);
            return Ok(());
        };
        let mut current = self.bytes();
        loop {
            let total = current.saturating_add(n);
            if total > max {
                return Err(exceeded(BudgetKind::Bytes, max, total, path));
            }
            match self.bytes.compare_exchange_weak(
                current,
                total,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => current = now,
            }
        }
    }

    /// Settle a reservation of `reserved` bytes with the `got` that came back: refund the
    /// rest, or charge the excess and fail when it passes the budget.
    fn settle(&self, path: &str, reserved: u64, got: u64) -> Result<()> {
        if got <= reserved {
            self.bytes.fetch_sub(reserved - got, Ordering::Relaxed);
            return Ok(());
        }
        let extra = got - reserved;
        let total = self.bytes.fetch_add(extra, Ordering::Relaxed) + extra;
        match self.budgets.max_bytes {
            Some(max) if total > max => Err(exceeded(BudgetKind::Bytes, max, total, path)),
            _ => Ok(()),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;
#[cfg(not(target_arch = "wasm32"))]
type Timer = Box<dyn Fn(Duration) -> Sleep + Send + Sync>;
#[cfg(target_arch = "wasm32")]
type Sleep = Pin<Box<dyn Future<Output = ()>>>;
#[cfg(target_arch = "wasm32")]
type Timer = Box<dyn Fn(Duration) -> Sleep>;

/// Sizes learnt from listings, heads and tails, kept for this many paths at most.
const KNOWN_SIZES: usize = 10_000;

/// Objects a listing page holds at most on S3, R2 and GCS (Azure: 5,000).
const DEFAULT_LIST_PAGE: u64 = 1000;

/// A decorator enforcing [`Budgets`] (the rules are in the module's documentation).
pub struct BudgetStorage<S> {
    inner: S,
    meter: Arc<BudgetMeter>,
    timer: OnceLock<Timer>,
    sizes: Mutex<HashMap<String, u64>>,
    list_page_size: u64,
}

impl<S: std::fmt::Debug> std::fmt::Debug for BudgetStorage<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BudgetStorage")
            .field("inner", &self.inner)
            .field("meter", &self.meter)
            .field("timer", &self.timer.get().is_some())
            .field("list_page_size", &self.list_page_size)
            .finish()
    }
}

impl<S> BudgetStorage<S> {
    /// Start the clock now.
    pub fn new(inner: S, budgets: Budgets, clock: Clock) -> Self {
        Self::with_meter(inner, Arc::new(BudgetMeter::new(budgets, clock)))
    }

    /// Enforce the budgets of `meter` (shared with a backend that reports its own
    /// subrequests: see [`BudgetMeter::backend_meter`]).
    pub fn with_meter(inner: S, meter: Arc<BudgetMeter>) -> Self {
        Self {
            inner,
            meter,
            timer: OnceLock::new(),
            sizes: Mutex::new(HashMap::new()),
            list_page_size: DEFAULT_LIST_PAGE,
        }
    }

    /// The most objects one listing page of the backend holds (1,000 by default: S3, R2,
    /// GCS; Azure's is 5,000), for counting pages when the backend does not report them.
    pub fn with_list_page_size(mut self, objects: u64) -> Self {
        self.list_page_size = objects.max(1);
        self
    }

    /// Race each request against the wall time left, waiting with `sleep` (a runtime
    /// timer natively, a `setTimeout` future in a worker or a page), as [`crate::RetryStorage`]
    /// does. Only the first timer set counts.
    pub fn set_timer<F, Fut>(&self, sleep: F)
    where
        F: Fn(Duration) -> Fut + MaybeSendSync + 'static,
        Fut: Future<Output = ()> + MaybeSendFuture + 'static,
    {
        let timer: Timer = Box::new(move |d| -> Sleep { Box::pin(sleep(d)) });
        let _ = self.timer.set(timer);
    }

    /// [`BudgetStorage::set_timer`] while building.
    pub fn with_timer<F, Fut>(self, sleep: F) -> Self
    where
        F: Fn(Duration) -> Fut + MaybeSendSync + 'static,
        Fut: Future<Output = ()> + MaybeSendFuture + 'static,
    {
        self.set_timer(sleep);
        self
    }

    /// The counters (shared with the backend when it reports to them).
    pub fn meter(&self) -> &Arc<BudgetMeter> {
        &self.meter
    }

    /// Requests made so far (refused ones are not counted).
    pub fn requests(&self) -> u64 {
        self.meter.requests()
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.meter.bytes()
    }

    /// Milliseconds since creation.
    pub fn elapsed_ms(&self) -> f64 {
        self.meter.elapsed_ms()
    }

    /// Fail with [`StorageError::BudgetExceeded`] when the deadline has passed (callers
    /// doing long work between requests check it too).
    pub fn check_time(&self, path: &str) -> Result<()> {
        self.meter.check_time(path)
    }

    fn known_size(&self, path: &str) -> Option<u64> {
        self.sizes.lock().ok()?.get(path).copied()
    }

    fn learn<'a>(&self, sizes: impl IntoIterator<Item = (&'a str, u64)>) {
        if let Ok(mut known) = self.sizes.lock() {
            for (path, size) in sizes {
                if known.len() >= KNOWN_SIZES && !known.contains_key(path) {
                    break;
                }
                known.insert(path.to_string(), size);
            }
        }
    }

    /// The bytes `range` of `path` can bring, when that is known before the request.
    fn range_len(&self, path: &str, range: &ByteRange) -> Option<u64> {
        let size = self.known_size(path);
        match (range, size) {
            (_, Some(size)) => range.resolve(size).map(|r| r.end - r.start).or(Some(0)),
            (ByteRange::Bounded(r), None) => Some(r.end.saturating_sub(r.start)),
            (ByteRange::Suffix(n), None) => Some(*n),
            (ByteRange::From(_), None) => None,
        }
    }

    /// `work` (not a storage request: a call to another worker, say), unless the wall
    /// time runs out first: then the wall-time budget's error, naming `what`. Without a
    /// timer or a deadline, `work` as it comes.
    pub async fn before_deadline<T>(&self, what: &str, work: impl Future<Output = T>) -> Result<T> {
        self.timed(what, async { Ok(work.await) }).await
    }

    /// `work`, unless the wall time runs out first.
    async fn timed<T>(&self, path: &str, work: impl Future<Output = Result<T>>) -> Result<T> {
        let (Some(timer), Some(left)) = (self.timer.get(), self.meter.remaining_ms()) else {
            return work.await;
        };
        // NaN counts as no time left; a duration that does not fit is the work as it comes
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if !(left > 0.0) {
            return Err(self.meter.late(path));
        }
        let Ok(left) = Duration::try_from_secs_f64(left / 1000.0) else {
            return work.await;
        };
        let deadline = timer(left);
        match race(work, deadline).await {
            Some(r) => r,
            None => Err(self.meter.late(path)),
        }
    }
}

/// The first of `work` and `deadline` to finish: `None` when the deadline came first.
async fn race<T>(work: impl Future<Output = T>, deadline: impl Future<Output = ()>) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let mut deadline = std::pin::pin!(deadline);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        if deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

impl<S: Storage> BudgetStorage<S> {
    /// A read of `reserved` known bytes: reserved first, settled with what came back.
    async fn reserved_read(&self, path: &str, range: ByteRange, reserved: u64) -> Result<Bytes> {
        self.meter.reserve(path, reserved)?;
        match self.timed(path, self.inner.get_range(path, range)).await {
            Ok(b) => {
                self.meter.settle(path, reserved, b.len() as u64)?;
                Ok(b)
            }
            Err(e) => {
                self.meter.settle(path, reserved, 0)?;
                Err(e)
            }
        }
    }

    /// A read from `start` to the end of an object of unknown length: at most the
    /// remainder + 1 bytes are asked for, so an object that does not fit fails the
    /// budget without more than that in memory.
    async fn capped_read(&self, path: &str, start: u64, whole: bool) -> Result<Bytes> {
        let Some(left) = self.meter.remaining_bytes() else {
            let b = match whole {
                true => self.timed(path, self.inner.get(path)).await?,
                false => {
                    self.timed(path, self.inner.get_range(path, ByteRange::From(start)))
                        .await?
                }
            };
            self.meter.settle(path, 0, b.len() as u64)?;
            return Ok(b);
        };
        let max = self.meter.budgets.max_bytes.unwrap_or(0);
        if left == 0 {
            return Err(exceeded(
                BudgetKind::Bytes,
                max,
                max.saturating_add(1),
                path,
            ));
        }
        let range = ByteRange::Bounded(start..start.saturating_add(left).saturating_add(1));
        let b = match self.timed(path, self.inner.get_range(path, range)).await {
            Ok(b) => b,
            // bytes 0-… cannot be satisfied only by an empty object
            Err(StorageError::Http { status: 416, .. } | StorageError::InvalidRange { .. })
                if whole =>
            {
                Bytes::new()
            }
            Err(e) => return Err(e),
        };
        self.meter.settle(path, 0, b.len() as u64)?;
        Ok(b)
    }
}

fn exceeded(budget: BudgetKind, limit: u64, used: u64, path: &str) -> StorageError {
    StorageError::BudgetExceeded {
        budget,
        limit,
        used,
        path: path.to_string(),
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage> Storage for BudgetStorage<S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        self.meter.subrequest(prefix)?;
        let out = self
            .timed(prefix, self.inner.list(prefix, start_after))
            .await?;
        if !self.meter.backend_pages.load(Ordering::Relaxed) {
            let pages = (out.len() as u64).div_ceil(self.list_page_size).max(1);
            self.meter.charge_requests(prefix, pages - 1)?;
        }
        self.learn(out.iter().map(|o| (o.path.as_str(), o.size)));
        Ok(out)
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        self.meter.subrequest(path)?;
        match (self.range_len(path, &range), &range) {
            (Some(n), _) => self.reserved_read(path, range, n).await,
            (None, ByteRange::From(start)) => self.capped_read(path, *start, false).await,
            // every other range has a known length
            (None, _) => self.reserved_read(path, range, 0).await,
        }
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        self.meter.subrequest(path)?;
        if let Some(size) = self.known_size(path) {
            // refused up front when it cannot fit; read capped all the same (the object
            // may have changed since its size was seen)
            self.meter.body(path, size)?;
        }
        self.capped_read(path, 0, true).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.meter.subrequest(path)?;
        let meta = self.timed(path, self.inner.head(path)).await?;
        self.learn([(path, meta.size)]);
        Ok(meta)
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        self.meter.subrequest(path)?;
        let reserved = self.known_size(path).map_or(n, |size| size.min(n));
        self.meter.reserve(path, reserved)?;
        let r = match self.timed(path, self.inner.get_tail(path, n)).await {
            Ok(r) => r,
            Err(e) => {
                self.meter.settle(path, reserved, 0)?;
                return Err(e);
            }
        };
        self.meter.settle(path, reserved, r.0.len() as u64)?;
        self.learn([(path, r.1)]);
        Ok(r)
    }

    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn requests_are_budgeted(&self) -> bool {
        self.meter.budgets.max_requests.is_some() || self.inner.requests_are_budgeted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStorage;
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    static NOW: AtomicU64 = AtomicU64::new(0);
    fn fake_clock() -> f64 {
        NOW.load(Ordering::Relaxed) as f64
    }

    fn store() -> MemoryStorage {
        let m = MemoryStorage::new();
        m.put("a", "0123456789", 0);
        m
    }

    fn kind(e: StorageError) -> BudgetKind {
        match e {
            StorageError::BudgetExceeded { budget, .. } => budget,
            other => panic!("not a budget error: {other}"),
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn requests_budget_refuses_the_next_request() {
        let b = BudgetStorage::new(
            store(),
            Budgets {
                max_requests: Some(2),
                ..Default::default()
            },
            fake_clock,
        );
        block_on(b.get("a")).unwrap();
        block_on(b.head("a")).unwrap();
        let e = block_on(b.get_range("a", ByteRange::Suffix(2))).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Subrequests);
        assert_eq!(b.requests(), 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn bytes_budget_counts_what_came_back() {
        let b = BudgetStorage::new(
            store(),
            Budgets {
                max_bytes: Some(12),
                ..Default::default()
            },
            fake_clock,
        );
        block_on(b.get_range("a", ByteRange::Bounded(0..6))).unwrap();
        block_on(b.get_range("a", ByteRange::Bounded(0..6))).unwrap();
        let e = block_on(b.get_range("a", ByteRange::Bounded(0..1))).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Bytes);
        assert!(e_msg(BudgetKind::Bytes).contains("bytes"));
    }

    fn e_msg(k: BudgetKind) -> String {
        exceeded(k, 1, 2, "p").to_string()
    }

    /// Records each request that reaches it (`op path range`).
    #[derive(Debug, Default)]
    struct Recorder {
        inner: MemoryStorage,
        seen: std::sync::Mutex<Vec<String>>,
    }

    impl Recorder {
        fn with(objects: &[(&str, usize)]) -> Self {
            let r = Recorder::default();
            for (path, len) in objects {
                r.inner.put(path, vec![b'x'; *len], 0);
            }
            r
        }
        fn log(&self, what: String) {
            if let Ok(mut s) = self.seen.lock() {
                s.push(what);
            }
        }
        fn seen(&self) -> Vec<String> {
            self.seen.lock().map(|s| s.clone()).unwrap_or_default()
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
    #[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
    impl Storage for Recorder {
        async fn list(&self, p: &str, s: Option<&str>) -> Result<Vec<ObjectMeta>> {
            self.log(format!("list {p}"));
            self.inner.list(p, s).await
        }
        async fn get_range(&self, p: &str, r: ByteRange) -> Result<Bytes> {
            self.log(format!("get_range {p} {r}"));
            self.inner.get_range(p, r).await
        }
        async fn get(&self, p: &str) -> Result<Bytes> {
            self.log(format!("get {p}"));
            self.inner.get(p).await
        }
        async fn head(&self, p: &str) -> Result<ObjectMeta> {
            self.log(format!("head {p}"));
            self.inner.head(p).await
        }
        async fn get_tail(&self, p: &str, n: u64) -> Result<(Bytes, u64)> {
            self.log(format!("get_tail {p} {n}"));
            let data = self.inner.get_range(p, ByteRange::Suffix(n)).await?;
            Ok((data, self.inner.head(p).await?.size))
        }
    }

    fn bytes_budget(inner: Recorder, max: u64) -> BudgetStorage<Recorder> {
        BudgetStorage::new(
            inner,
            Budgets {
                max_bytes: Some(max),
                ..Default::default()
            },
            fake_clock,
        )
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn known_lengths_are_charged_before_the_fetch() {
        let b = bytes_budget(Recorder::with(&[("a", 100)]), 20);
        block_on(b.get_range("a", ByteRange::Bounded(0..15))).unwrap();
        // 5 bytes left: a range of 10 or a suffix of 6 is refused without a request
        for r in [ByteRange::Bounded(20..30), ByteRange::Suffix(6)] {
            let e = block_on(b.get_range("a", r.clone())).unwrap_err();
            assert_eq!(kind(e), BudgetKind::Bytes, "{r}");
        }
        assert_eq!(
            kind(block_on(b.get_tail("a", 6)).unwrap_err()),
            BudgetKind::Bytes
        );
        assert_eq!(b.inner.seen(), vec!["get_range a bytes=0-14"]);
        assert_eq!(b.bytes(), 15);
        // what fits is read; a suffix longer than the object is charged what came back
        block_on(b.get_range("a", ByteRange::Bounded(50..55))).unwrap();
        assert_eq!(b.bytes(), 20);
        let c = bytes_budget(Recorder::with(&[("s", 10)]), 1000);
        assert_eq!(
            block_on(c.get_range("s", ByteRange::Suffix(500)))
                .unwrap()
                .len(),
            10
        );
        assert_eq!(block_on(c.get_tail("s", 500)).unwrap().1, 10);
        assert_eq!(c.bytes(), 20);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_whole_get_never_brings_more_than_the_remainder() {
        // unknown size: the get becomes a read of at most the remainder + 1 bytes
        let b = bytes_budget(Recorder::with(&[("big", 1000), ("small", 30)]), 100);
        assert_eq!(block_on(b.get("small")).unwrap().len(), 30);
        let e = block_on(b.get("big")).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Bytes);
        assert_eq!(
            b.inner.seen(),
            vec!["get_range small bytes=0-100", "get_range big bytes=0-70"]
        );
        // an open-ended range likewise
        let f = bytes_budget(Recorder::with(&[("big", 1000)]), 100);
        let e = block_on(f.get_range("big", ByteRange::From(10))).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Bytes);
        assert_eq!(f.inner.seen(), vec!["get_range big bytes=10-110"]);
        // nothing left: refused before any request
        let c = bytes_budget(Recorder::with(&[("a", 10)]), 10);
        block_on(c.get("a")).unwrap();
        let e = block_on(c.get("a")).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Bytes);
        assert_eq!(c.inner.seen().len(), 1);
        // a size known from a listing or a head refuses a get that cannot fit up front
        let d = bytes_budget(Recorder::with(&[("log/1", 500), ("log/2", 5)]), 100);
        block_on(d.list("log/", None)).unwrap();
        assert_eq!(
            kind(block_on(d.get("log/1")).unwrap_err()),
            BudgetKind::Bytes
        );
        assert_eq!(block_on(d.get("log/2")).unwrap().len(), 5);
        assert_eq!(
            d.inner.seen(),
            vec!["list log/", "get_range log/2 bytes=0-100"]
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn every_listing_page_counts_as_a_request() {
        let store = Recorder::default();
        for i in 0..2500 {
            store
                .inner
                .put(&format!("_delta_log/{i:020}.json"), "{}", 0);
        }
        // three pages of at most 1000 objects: three requests
        let b = BudgetStorage::new(
            store,
            Budgets {
                max_requests: Some(3),
                ..Default::default()
            },
            fake_clock,
        );
        assert_eq!(block_on(b.list("_delta_log/", None)).unwrap().len(), 2500);
        assert_eq!(b.requests(), 3);
        let e = block_on(b.head("_delta_log/00000000000000000000.json")).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Subrequests);
        let small = BudgetStorage::new(
            Recorder::with(&[("a", 1)]),
            Budgets {
                max_requests: Some(2),
                ..Default::default()
            },
            fake_clock,
        );
        block_on(small.list("", None)).unwrap();
        assert_eq!(small.requests(), 1);
        let tight = BudgetStorage::new(
            b.inner,
            Budgets {
                max_requests: Some(2),
                ..Default::default()
            },
            fake_clock,
        );
        let e = block_on(tight.list("_delta_log/", None)).unwrap_err();
        assert_eq!(kind(e), BudgetKind::Subrequests);
    }

    /// Every request hangs (a store that stopped answering mid-transfer).
    #[derive(Debug)]
    struct Stalls;

    #[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
    #[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
    impl Storage for Stalls {
        async fn list(&self, _: &str, _: Option<&str>) -> Result<Vec<ObjectMeta>> {
            std::future::pending().await
        }
        async fn get_range(&self, _: &str, _: ByteRange) -> Result<Bytes> {
            std::future::pending().await
        }
        async fn get(&self, _: &str) -> Result<Bytes> {
            std::future::pending().await
        }
        async fn head(&self, _: &str) -> Result<ObjectMeta> {
            std::future::pending().await
        }
        async fn get_tail(&self, _: &str, _: u64) -> Result<(Bytes, u64)> {
            std::future::pending().await
        }
    }

    /// Give `b` a timer that fires at once (as if the time left had passed), and the
    /// durations it was set for.
    fn instant_timer<S: Storage>(
        b: &BudgetStorage<S>,
    ) -> &'static std::sync::Mutex<Vec<std::time::Duration>> {
        let waits: &'static std::sync::Mutex<Vec<std::time::Duration>> =
            Box::leak(Box::new(std::sync::Mutex::new(Vec::new())));
        b.set_timer(move |d| {
            if let Ok(mut w) = waits.lock() {
                w.push(d);
            }
            async {}
        });
        waits
    }

    static STALL_NOW: AtomicU64 = AtomicU64::new(5000);
    fn stall_clock() -> f64 {
        STALL_NOW.load(Ordering::Relaxed) as f64
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_stalled_fetch_ends_with_the_wall_time_error() {
        let b = BudgetStorage::new(
            Stalls,
            Budgets {
                max_millis: Some(50.0),
                ..Default::default()
            },
            stall_clock,
        );
        STALL_NOW.store(5020, Ordering::Relaxed);
        // the caller's timer: here it fires at once, as if the 30 ms left had passed
        let waits = instant_timer(&b);
        let errors = [
            block_on(b.get("a")).unwrap_err(),
            block_on(b.get_range("a", ByteRange::Bounded(0..1))).unwrap_err(),
            block_on(b.get_tail("a", 8)).unwrap_err(),
            block_on(b.head("a")).unwrap_err(),
            block_on(b.list("", None)).unwrap_err(),
        ];
        for e in errors {
            assert_eq!(kind(e), BudgetKind::WallTime);
        }
        let waits = waits.lock().unwrap().clone();
        assert_eq!(waits, vec![std::time::Duration::from_millis(30); 5]);
    }

    static CALL_NOW: AtomicU64 = AtomicU64::new(1000);
    fn call_clock() -> f64 {
        CALL_NOW.load(Ordering::Relaxed) as f64
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn work_that_is_not_a_request_ends_at_the_deadline_too() {
        // a call to another worker (a split of a fan-out) that never answers
        let b = BudgetStorage::new(
            MemoryStorage::new(),
            Budgets {
                max_millis: Some(100.0),
                ..Default::default()
            },
            call_clock,
        );
        // without a timer, the work as it comes
        assert_eq!(
            block_on(b.before_deadline("split 0", async { 7 })).unwrap(),
            7
        );
        CALL_NOW.store(1040, Ordering::Relaxed);
        let waits = instant_timer(&b);
        let e =
            block_on(b.before_deadline("split 0 of 3", std::future::pending::<()>())).unwrap_err();
        assert!(e.to_string().contains("split 0 of 3"), "{e}");
        assert_eq!(kind(e), BudgetKind::WallTime);
        // the timer was set for what was left: 60 of 100 ms
        let waits = waits.lock().unwrap().clone();
        assert_eq!(waits, vec![std::time::Duration::from_millis(60)]);
        // past the deadline, refused before the work starts
        CALL_NOW.store(1200, Ordering::Relaxed);
        let e = block_on(b.before_deadline("split 1 of 3", async { 7 })).unwrap_err();
        assert_eq!(kind(e), BudgetKind::WallTime);
        assert_eq!(waits.len(), 1);
    }

    /// Lists in pages of two objects, each page after the first counted on the meter
    /// before it is fetched (as a paging backend does).
    #[derive(Debug)]
    struct Paged {
        inner: MemoryStorage,
        meter: Arc<BudgetMeter>,
        pages: AtomicU64,
    }

    #[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
    #[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
    impl Storage for Paged {
        async fn list(&self, p: &str, s: Option<&str>) -> Result<Vec<ObjectMeta>> {
            let all = self.inner.list(p, s).await?;
            let mut out = Vec::new();
            for (i, page) in all.chunks(2).enumerate() {
                if i > 0 {
                    self.meter.subrequest(p)?;
                }
                self.pages.fetch_add(1, Ordering::Relaxed);
                out.extend_from_slice(page);
            }
            Ok(out)
        }
        async fn get_range(&self, p: &str, r: ByteRange) -> Result<Bytes> {
            self.inner.get_range(p, r).await
        }
        async fn get(&self, p: &str) -> Result<Bytes> {
            self.inner.get(p).await
        }
        async fn head(&self, p: &str) -> Result<ObjectMeta> {
            self.inner.head(p).await
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_paging_backend_counts_each_page_before_fetching_it() {
        let budgets = Budgets {
            max_requests: Some(3),
            max_bytes: Some(100),
            ..Default::default()
        };
        let paged = |n: usize| {
            let meter = Arc::new(BudgetMeter::new(budgets, fake_clock));
            let inner = MemoryStorage::new();
            for i in 0..n {
                inner.put(&format!("{i}"), "x", 0);
            }
            let backend = Paged {
                inner,
                meter: meter.backend_meter(),
                pages: AtomicU64::new(0),
            };
            // the estimate (pages of 1 object here) is not added on top
            BudgetStorage::with_meter(backend, meter).with_list_page_size(1)
        };
        let b = paged(6);
        assert_eq!(block_on(b.list("", None)).unwrap().len(), 6);
        assert_eq!(
            (b.requests(), b.inner.pages.load(Ordering::Relaxed)),
            (3, 3)
        );
        // a fourth page is refused before it is fetched
        let b = paged(7);
        assert_eq!(
            kind(block_on(b.list("", None)).unwrap_err()),
            BudgetKind::Subrequests
        );
        assert_eq!(b.inner.pages.load(Ordering::Relaxed), 3);
        // a body whose announced length does not fit is refused before it is read
        let m = b.meter();
        assert!(m.body("p", 100).is_ok());
        assert_eq!(kind(m.body("p", 101).unwrap_err()), BudgetKind::Bytes);
        assert_eq!(m.remaining_bytes(), Some(100));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn deadline_refuses_after_the_time_is_up() {
        NOW.store(1000, Ordering::Relaxed);
        let b = BudgetStorage::new(
            store(),
            Budgets {
                max_millis: Some(50.0),
                ..Default::default()
            },
            fake_clock,
        );
        block_on(b.get("a")).unwrap();
        NOW.store(1051, Ordering::Relaxed);
        assert_eq!(
            kind(block_on(b.get("a")).unwrap_err()),
            BudgetKind::WallTime
        );
        assert_eq!(kind(b.check_time("x").unwrap_err()), BudgetKind::WallTime);
        let _ = AtomicU64::new(0);
    }
}

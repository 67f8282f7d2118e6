use std::sync::Mutex;

use bytes::Bytes;

use crate::{ByteRange, ObjectMeta, Result, Storage};

/// The kind of a recorded request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// [`Storage::list`].
    List,
    /// [`Storage::get_range`].
    GetRange,
    /// [`Storage::get`] (the whole object).
    Get,
    /// [`Storage::head`].
    Head,
}

/// One request seen by [`CountingStorage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// Which operation.
    pub kind: RequestKind,
    /// The object's path, or the listed prefix.
    pub path: String,
    /// The byte range of a `get_range`; `None` for the other operations.
    pub range: Option<ByteRange>,
    /// Bytes returned (0 for list and head, and for failed requests).
    pub bytes: u64,
    /// Whether the request succeeded.
    pub ok: bool,
    /// When the request started and ended, in microseconds of the clock given to
    /// [`CountingStorage::with_clock`] (both 0 without a clock).
    pub start_us: u64,
    /// When the request ended (see `start_us`).
    pub end_us: u64,
}

/// Totals over the recorded requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestStats {
    /// Requests of every kind.
    pub requests: u64,
    /// List requests.
    pub lists: u64,
    /// Get requests, whole or ranged.
    pub gets: u64,
    /// Head requests.
    pub heads: u64,
    /// Bytes returned by every request.
    pub bytes: u64,
    /// The longest chain of requests each started after the previous one ended: how many
    /// round trips a client waits for, however many requests run in parallel (0 without a
    /// clock).
    pub round_trips: u64,
}

/// The longest chain of requests in `records` each of which started after the previous
/// one ended.
pub fn round_trips(records: &[RequestRecord]) -> u64 {
    let mut order: Vec<&RequestRecord> = records.iter().collect();
    order.sort_by_key(|r| (r.start_us, r.end_us));
    let mut depth: Vec<u64> = Vec::with_capacity(order.len());
    for (i, r) in order.iter().enumerate() {
        let before = (0..i)
            .filter(|&j| order[j].end_us <= r.start_us)
            .map(|j| depth[j])
            .max()
            .unwrap_or(0);
        depth.push(before + 1);
    }
    depth.into_iter().max().unwrap_or(0)
}

/// A clock in milliseconds (any origin): `performance.now()` in a browser, an `Instant`
/// natively.
pub type Clock = fn() -> f64;

/// A decorator that records every request made through it and the bytes returned.
#[derive(Debug)]
pub struct CountingStorage<S> {
    inner: S,
    log: Mutex<Vec<RequestRecord>>,
    clock: Option<Clock>,
}

impl<S> CountingStorage<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            log: Mutex::new(Vec::new()),
            clock: None,
        }
    }

    /// Wrap `inner` and time every request with `clock`, so the records form a timeline
    /// and [`RequestStats::round_trips`] is known.
    pub fn with_clock(inner: S, clock: Clock) -> Self {
        Self {
            clock: Some(clock),
            ..Self::new(inner)
        }
    }

    fn now_us(&self) -> u64 {
        self.clock.map_or(0, |c| (c() * 1000.0).max(0.0) as u64)
    }

    /// The wrapped storage.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Every request so far, in completion order.
    pub fn records(&self) -> Vec<RequestRecord> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Totals so far.
    pub fn stats(&self) -> RequestStats {
        let mut s = RequestStats::default();
        let records = self.records();
        if self.clock.is_some() {
            s.round_trips = round_trips(&records);
        }
        for r in records {
            s.requests += 1;
            s.bytes += r.bytes;
            match r.kind {
                RequestKind::List => s.lists += 1,
                RequestKind::Get | RequestKind::GetRange => s.gets += 1,
                RequestKind::Head => s.heads += 1,
            }
        }
        s
    }

    /// Forget what was recorded.
    pub fn reset(&self) {
        if let Ok(mut l) = self.log.lock() {
            l.clear();
        }
    }

    fn record(
        &self,
        kind: RequestKind,
        path: &str,
        range: Option<ByteRange>,
        bytes: u64,
        ok: bool,
        start_us: u64,
    ) {
        let end_us = self.now_us();
        if let Ok(mut l) = self.log.lock() {
            l.push(RequestRecord {
                kind,
                path: path.to_string(),
                range,
                bytes,
                ok,
                start_us,
                end_us,
            });
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage> Storage for CountingStorage<S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        let t = self.now_us();
        let r = self.inner.list(prefix, start_after).await;
        self.record(RequestKind::List, prefix, None, 0, r.is_ok(), t);
        r
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        let t = self.now_us();
        let r = self.inner.get_range(path, range.clone()).await;
        let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
        self.record(RequestKind::GetRange, path, Some(range), n, r.is_ok(), t);
        r
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        let t = self.now_us();
        let r = self.inner.get(path).await;
        let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
        self.record(RequestKind::Get, path, None, n, r.is_ok(), t);
        r
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let t = self.now_us();
        let r = self.inner.head(path).await;
        self.record(RequestKind::Head, path, None, 0, r.is_ok(), t);
        r
    }

    /// Recorded as one suffix request (backends answer it in one where they can).
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        let t = self.now_us();
        let r = self.inner.get_tail(path, n).await;
        let got = r.as_ref().map(|(b, _)| b.len() as u64).unwrap_or(0);
        let range = Some(ByteRange::Suffix(n));
        self.record(RequestKind::GetRange, path, range, got, r.is_ok(), t);
        r
    }

    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn requests_are_budgeted(&self) -> bool {
        self.inner.requests_are_budgeted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStorage;
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn counts_requests_and_bytes() {
        let mem = MemoryStorage::new();
        mem.put("a", "hello world", 0);
        let c = CountingStorage::new(mem);
        block_on(c.get("a")).unwrap();
        block_on(c.get_range("a", ByteRange::Suffix(5))).unwrap();
        block_on(c.list("", None)).unwrap();
        assert!(block_on(c.get("missing")).is_err());
        let s = c.stats();
        assert_eq!(s.requests, 4);
        assert_eq!(s.gets, 3);
        assert_eq!(s.lists, 1);
        assert_eq!(s.bytes, 16);
        assert!(!c.records()[3].ok);
        c.reset();
        assert_eq!(c.stats(), RequestStats::default());
    }

    fn rec(start_us: u64, end_us: u64) -> RequestRecord {
        RequestRecord {
            kind: RequestKind::Get,
            path: String::new(),
            range: None,
            bytes: 0,
            ok: true,
            start_us,
            end_us,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn round_trips_follow_the_longest_chain() {
        assert_eq!(round_trips(&[]), 0);
        // three in parallel: one round trip
        assert_eq!(round_trips(&[rec(0, 10), rec(1, 12), rec(2, 9)]), 1);
        // a, then b and c in parallel, then d after c: three
        let t = [rec(0, 10), rec(10, 20), rec(11, 15), rec(16, 30)];
        assert_eq!(round_trips(&t), 3);
        // a request overlapping the previous one does not add a round trip
        assert_eq!(round_trips(&[rec(0, 10), rec(9, 20)]), 1);
    }
}

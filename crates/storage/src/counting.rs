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
/// one ended (O(n log n): a request's depth is one more than the deepest request that
/// ended before it started).
pub fn round_trips(records: &[RequestRecord]) -> u64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut order: Vec<&RequestRecord> = records.iter().collect();
    order.sort_by_key(|r| (r.start_us, r.end_us));
    // requests seen so far, soonest end first; `done` is the deepest of those that ended
    let mut open: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::with_capacity(order.len());
    let (mut done, mut deepest) = (0u64, 0u64);
    for r in order {
        while let Some(&Reverse((end, depth))) = open.peek() {
            if end > r.start_us {
                break;
            }
            done = done.max(depth);
            open.pop();
        }
        let depth = done + 1;
        deepest = deepest.max(depth);
        open.push(Reverse((r.end_us, depth)));
    }
    deepest
}

/// A clock in milliseconds (any origin): `performance.now()` in a browser, an `Instant`
/// natively.
pub type Clock = fn() -> f64;

/// A decorator that counts every request made through it and the bytes returned, and
/// (unless [`CountingStorage::without_records`]) records each one.
///
/// Totals are kept as requests finish, so [`CountingStorage::stats`] costs the same after
/// a million requests as after one; the round trips are counted the same way (a request's
/// depth is one more than the deepest request that had finished when it started).
#[derive(Debug)]
pub struct CountingStorage<S> {
    inner: S,
    log: Mutex<Log>,
    clock: Option<Clock>,
    keep_records: bool,
}

#[derive(Debug, Default)]
struct Log {
    records: Vec<RequestRecord>,
    totals: RequestStats,
    /// The deepest chain among the requests that have finished.
    finished_depth: u64,
}

/// When a request started, and the depth of the chain it follows.
#[derive(Debug, Clone, Copy)]
struct Started {
    start_us: u64,
    after_depth: u64,
}

impl<S> CountingStorage<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            log: Mutex::new(Log::default()),
            clock: None,
            keep_records: true,
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

    /// Keep the totals only, not a record per request ([`CountingStorage::records`] is
    /// then empty): memory stays the same however many requests a scan makes.
    pub fn without_records(self) -> Self {
        Self {
            keep_records: false,
            ..self
        }
    }

    fn now_us(&self) -> u64 {
        self.clock.map_or(0, |c| (c() * 1000.0).max(0.0) as u64)
    }

    /// The wrapped storage.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Every request so far, in completion order (none after
    /// [`CountingStorage::without_records`]).
    pub fn records(&self) -> Vec<RequestRecord> {
        self.log
            .lock()
            .map(|l| l.records.clone())
            .unwrap_or_default()
    }

    /// Totals so far (constant time).
    pub fn stats(&self) -> RequestStats {
        self.log.lock().map(|l| l.totals).unwrap_or_default()
    }

    /// Forget what was recorded.
    pub fn reset(&self) {
        if let Ok(mut l) = self.log.lock() {
            *l = Log::default();
        }
    }

    /// The clock is read under the lock, so a request that finished before another
    /// started is always seen by it.
    fn start(&self) -> Started {
        match self.log.lock() {
            Ok(l) => Started {
                start_us: self.now_us(),
                after_depth: l.finished_depth,
            },
            Err(_) => Started {
                start_us: self.now_us(),
                after_depth: 0,
            },
        }
    }

    fn record(
        &self,
        kind: RequestKind,
        path: &str,
        range: Option<ByteRange>,
        bytes: u64,
        ok: bool,
        started: Started,
    ) {
        let Ok(mut l) = self.log.lock() else {
            return;
        };
        let end_us = self.now_us();
        let t = &mut l.totals;
        t.requests += 1;
        t.bytes += bytes;
        match kind {
            RequestKind::List => t.lists += 1,
            RequestKind::Get | RequestKind::GetRange => t.gets += 1,
            RequestKind::Head => t.heads += 1,
        }
        if self.clock.is_some() {
            let depth = started.after_depth + 1;
            t.round_trips = t.round_trips.max(depth);
            l.finished_depth = l.finished_depth.max(depth);
        }
        if self.keep_records {
            l.records.push(RequestRecord {
                kind,
                path: path.to_string(),
                range,
                bytes,
                ok,
                start_us: started.start_us,
                end_us,
            });
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage> Storage for CountingStorage<S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        let t = self.start();
        let r = self.inner.list(prefix, start_after).await;
        self.record(RequestKind::List, prefix, None, 0, r.is_ok(), t);
        r
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        let t = self.start();
        let r = self.inner.get_range(path, range.clone()).await;
        let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
        self.record(RequestKind::GetRange, path, Some(range), n, r.is_ok(), t);
        r
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        let t = self.start();
        let r = self.inner.get(path).await;
        let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
        self.record(RequestKind::Get, path, None, n, r.is_ok(), t);
        r
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let t = self.start();
        let r = self.inner.head(path).await;
        self.record(RequestKind::Head, path, None, 0, r.is_ok(), t);
        r
    }

    /// Recorded as one suffix request (backends answer it in one where they can).
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        let t = self.start();
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

    /// The longest chain by trying every earlier request (the definition).
    fn round_trips_by_definition(records: &[RequestRecord]) -> u64 {
        let mut order: Vec<&RequestRecord> = records.iter().collect();
        order.sort_by_key(|r| (r.start_us, r.end_us));
        let mut depth: Vec<u64> = Vec::new();
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

    #[wasm_bindgen_test(unsupported = test)]
    fn round_trips_agree_with_their_definition() {
        // pseudo-random timelines (an LCG; no dependency)
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for n in [1, 2, 5, 30, 200] {
            let t: Vec<RequestRecord> = (0..n)
                .map(|_| {
                    let s = next(1000);
                    rec(s, s + next(60))
                })
                .collect();
            assert_eq!(
                round_trips(&t),
                round_trips_by_definition(&t),
                "{n} requests"
            );
        }
    }

    std::thread_local! {
        static NOW_MS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    }
    fn test_clock() -> f64 {
        NOW_MS.with(|c| c.get())
    }
    fn at(ms: f64) {
        NOW_MS.with(|c| c.set(ms));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn totals_and_round_trips_are_kept_as_requests_finish() {
        for keep in [true, false] {
            let mem = MemoryStorage::new();
            mem.put("a", "hello", 0);
            let c = CountingStorage::with_clock(mem, test_clock);
            let c = if keep { c } else { c.without_records() };
            // four requests, each started after the one before ended: four round trips
            for (ms, whole) in [(0.0, true), (1.0, true), (2.0, false)] {
                at(ms);
                if whole {
                    block_on(c.get("a")).unwrap();
                } else {
                    block_on(c.get_range("a", ByteRange::Suffix(2))).unwrap();
                }
            }
            at(3.0);
            block_on(c.head("a")).unwrap();
            let s = c.stats();
            assert_eq!((s.requests, s.gets, s.heads, s.bytes), (4, 3, 1, 12));
            assert_eq!(s.round_trips, 4);
            if keep {
                assert_eq!(round_trips(&c.records()), s.round_trips);
            } else {
                assert!(c.records().is_empty());
            }
            c.reset();
            assert_eq!(c.stats(), RequestStats::default());
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn stats_after_many_requests_cost_no_more_than_after_one() {
        // 200,000 requests, stats read after each as a progress line does: with totals
        // recomputed from the records this is 2·10^10 steps (hours); kept, it is instant
        let mem = MemoryStorage::new();
        mem.put("a", "x", 0);
        let c = CountingStorage::with_clock(mem, test_clock).without_records();
        let mut seen = 0;
        for i in 0..200_000u32 {
            at(f64::from(i));
            block_on(c.head("a")).unwrap();
            seen = c.stats().requests;
        }
        assert_eq!(seen, 200_000);
        assert_eq!(c.stats().round_trips, 200_000);
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

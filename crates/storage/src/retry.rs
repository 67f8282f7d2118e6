use std::future::Future;
use std::time::Duration;

use bytes::Bytes;

use crate::{ByteRange, MaybeSendSync, ObjectMeta, Result, Storage, StorageError};

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub initial_backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// Errors worth another attempt: network failures and the HTTP statuses that say "try
/// again" (408, 429, 5xx) — not answers (404, 400, 403, 412, 416, unsupported listing,
/// an answer that contradicts its request) nor an exhausted budget.
pub fn is_transient(e: &StorageError) -> bool {
    match e {
        StorageError::Backend { .. } | StorageError::Unreachable { .. } => true,
        // a stall is waited out once, not once per attempt
        StorageError::TimedOut { .. } => false,
        StorageError::Http { status, .. } => matches!(status, 408 | 429 | 500..=599),
        _ => false,
    }
}

/// A pseudo-random wait in `[cap / 2, cap]` ("equal jitter"), so that requests failing
/// together do not retry together. `key` varies it per request; no clock or OS
/// randomness is needed (the decorator runs in browsers and workers too).
fn jittered(cap: Duration, key: &str, attempt: u32) -> Duration {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut x = COUNTER.fetch_add(0x9e37_79b9_7f4a_7c15, std::sync::atomic::Ordering::Relaxed)
        ^ u64::from(attempt).rotate_left(32);
    for b in key.bytes() {
        x = (x ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    let half = cap / 2;
    let spread = (cap - half).as_micros() as u64;
    half + Duration::from_micros(if spread == 0 { 0 } else { x % (spread + 1) })
}

/// A decorator that retries transient failures with exponential backoff. Waiting is
/// left to `sleep` (a runtime timer natively, a `setTimeout` future in the browser), so
/// the decorator needs no runtime itself.
pub struct RetryStorage<S, F> {
    inner: S,
    policy: RetryPolicy,
    sleep: F,
}

impl<S: std::fmt::Debug, F> std::fmt::Debug for RetryStorage<S, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryStorage")
            .field("inner", &self.inner)
            .field("policy", &self.policy)
            .finish()
    }
}

impl<S, F> RetryStorage<S, F> {
    /// Retry `inner`'s transient failures as `policy` says, waiting with `sleep`.
    pub fn new(inner: S, policy: RetryPolicy, sleep: F) -> Self {
        Self {
            inner,
            policy,
            sleep,
        }
    }
}

impl<S, F, Fut> RetryStorage<S, F>
where
    F: Fn(Duration) -> Fut,
    Fut: Future<Output = ()>,
{
    async fn retry<T, G, GF>(&self, key: &str, op: G) -> Result<T>
    where
        G: Fn() -> GF,
        GF: Future<Output = Result<T>>,
    {
        let mut cap = self.policy.initial_backoff;
        let mut attempt = 0;
        loop {
            match op().await {
                Err(e) if is_transient(&e) && attempt < self.policy.retries => {
                    attempt += 1;
                    (self.sleep)(jittered(cap, key, attempt)).await;
                    cap = (cap * 2).min(self.policy.max_backoff);
                }
                other => return other,
            }
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S, F, Fut> Storage for RetryStorage<S, F>
where
    S: Storage,
    F: Fn(Duration) -> Fut + MaybeSendSync,
    Fut: Future<Output = ()> + MaybeSendFuture,
{
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        self.retry(prefix, || self.inner.list(prefix, start_after))
            .await
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        self.retry(path, || self.inner.get_range(path, range.clone()))
            .await
    }
    async fn get(&self, path: &str) -> Result<Bytes> {
        self.retry(path, || self.inner.get(path)).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.retry(path, || self.inner.head(path)).await
    }
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        self.retry(path, || self.inner.get_tail(path, n)).await
    }
    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn requests_are_budgeted(&self) -> bool {
        self.inner.requests_are_budgeted()
    }
}

/// `Send` on native targets; nothing on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSendFuture: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send> MaybeSendFuture for T {}
/// `Send` on native targets; nothing on wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSendFuture {}
#[cfg(target_arch = "wasm32")]
impl<T> MaybeSendFuture for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStorage;
    use futures::executor::block_on;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Fails the first `fail` requests with HTTP `status` (0: a network error, 1: a
    /// backend time-out).
    #[derive(Debug)]
    struct Flaky {
        inner: MemoryStorage,
        fail: AtomicU32,
        status: u16,
    }

    impl Flaky {
        fn check(&self, path: &str) -> Result<()> {
            if self.fail.load(Ordering::SeqCst) > 0 {
                self.fail.fetch_sub(1, Ordering::SeqCst);
                return Err(match self.status {
                    0 => StorageError::Backend {
                        path: path.into(),
                        operation: "get",
                        message: "connection reset".into(),
                    },
                    1 => StorageError::TimedOut {
                        path: path.into(),
                        operation: "get",
                        message: "no answer within 30 s".into(),
                    },
                    status => StorageError::Http {
                        path: path.into(),
                        operation: "get",
                        status,
                        message: "Slow Down".into(),
                    },
                });
            }
            Ok(())
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
    #[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
    impl Storage for Flaky {
        async fn list(&self, p: &str, s: Option<&str>) -> Result<Vec<ObjectMeta>> {
            self.check(p)?;
            self.inner.list(p, s).await
        }
        async fn get_range(&self, p: &str, r: ByteRange) -> Result<Bytes> {
            self.check(p)?;
            self.inner.get_range(p, r).await
        }
        async fn get(&self, p: &str) -> Result<Bytes> {
            self.check(p)?;
            self.inner.get(p).await
        }
        async fn head(&self, p: &str) -> Result<ObjectMeta> {
            self.check(p)?;
            self.inner.head(p).await
        }
    }

    fn store(fail: u32) -> (Flaky, &'static Mutex<Vec<Duration>>) {
        store_with(fail, 503)
    }

    fn store_with(fail: u32, status: u16) -> (Flaky, &'static Mutex<Vec<Duration>>) {
        let mem = MemoryStorage::new();
        mem.put("a", "data", 1);
        let waits: &'static Mutex<Vec<Duration>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        (
            Flaky {
                inner: mem,
                fail: AtomicU32::new(fail),
                status,
            },
            waits,
        )
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn retries_transient_errors_with_backoff() {
        let (flaky, waits) = store(3);
        let r = RetryStorage::new(flaky, RetryPolicy::default(), move |d| {
            waits.lock().unwrap().push(d);
            async {}
        });
        assert_eq!(block_on(r.get("a")).unwrap(), "data");
        // exponential caps 100, 200, 400 ms, each wait jittered within [cap/2, cap]
        let got = waits.lock().unwrap().clone();
        assert_eq!(got.len(), 3);
        for (w, cap) in got.iter().zip([100u64, 200, 400]) {
            let cap = Duration::from_millis(cap);
            assert!(
                *w >= cap / 2 && *w <= cap,
                "{w:?} not in [{:?}, {cap:?}]",
                cap / 2
            );
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn only_transient_failures_are_retried() {
        for (status, retried) in [
            (0, true),
            // a stalled store is not waited out once per attempt
            (1, false),
            (408, true),
            (429, true),
            (500, true),
            (503, true),
            (400, false),
            (403, false),
            (404, false),
            (412, false),
            (416, false),
        ] {
            let (flaky, waits) = store_with(1, status);
            let r = RetryStorage::new(flaky, RetryPolicy::default(), move |d| {
                waits.lock().unwrap().push(d);
                async {}
            });
            assert_eq!(block_on(r.get("a")).is_ok(), retried, "HTTP {status}");
            assert_eq!(
                waits.lock().unwrap().len(),
                usize::from(retried),
                "HTTP {status}"
            );
        }
        // jitter spreads the waits of simultaneous failures
        let waits: std::collections::BTreeSet<Duration> = (0..50)
            .map(|i| jittered(Duration::from_millis(100), &format!("p{i}"), 1))
            .collect();
        assert!(waits.len() > 25, "{} distinct waits", waits.len());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn gives_up_and_never_retries_answers() {
        let (flaky, waits) = store(10);
        let policy = RetryPolicy {
            retries: 2,
            ..Default::default()
        };
        let r = RetryStorage::new(flaky, policy, move |d| {
            waits.lock().unwrap().push(d);
            async {}
        });
        assert!(matches!(
            block_on(r.get("a")),
            Err(StorageError::Http { status: 503, .. })
        ));
        assert_eq!(waits.lock().unwrap().len(), 2);
        let (flaky, waits) = store(0);
        let r = RetryStorage::new(flaky, RetryPolicy::default(), move |d| {
            waits.lock().unwrap().push(d);
            async {}
        });
        assert!(block_on(r.get("missing")).unwrap_err().is_not_found());
        assert!(waits.lock().unwrap().is_empty());
    }
}

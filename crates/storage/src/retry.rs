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

/// Errors worth another attempt: backend failures (5xx, dropped connections), not answers
/// (missing objects, refused permissions, bad ranges, unsupported listing).
pub fn is_transient(e: &StorageError) -> bool {
    matches!(e, StorageError::Backend { .. })
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
    async fn retry<T, G, GF>(&self, op: G) -> Result<T>
    where
        G: Fn() -> GF,
        GF: Future<Output = Result<T>>,
    {
        let mut wait = self.policy.initial_backoff;
        let mut attempt = 0;
        loop {
            match op().await {
                Err(e) if is_transient(&e) && attempt < self.policy.retries => {
                    attempt += 1;
                    (self.sleep)(wait).await;
                    wait = (wait * 2).min(self.policy.max_backoff);
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
        self.retry(|| self.inner.list(prefix, start_after)).await
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        self.retry(|| self.inner.get_range(path, range.clone()))
            .await
    }
    async fn get(&self, path: &str) -> Result<Bytes> {
        self.retry(|| self.inner.get(path)).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.retry(|| self.inner.head(path)).await
    }
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        self.retry(|| self.inner.get_tail(path, n)).await
    }
    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn few_requests(&self) -> bool {
        self.inner.few_requests()
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

    /// Fails the first `fail` requests with a backend error.
    #[derive(Debug)]
    struct Flaky {
        inner: MemoryStorage,
        fail: AtomicU32,
    }

    impl Flaky {
        fn check(&self, path: &str) -> Result<()> {
            if self.fail.load(Ordering::SeqCst) > 0 {
                self.fail.fetch_sub(1, Ordering::SeqCst);
                return Err(StorageError::Backend {
                    path: path.into(),
                    operation: "get",
                    message: "503 Slow Down".into(),
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
        let mem = MemoryStorage::new();
        mem.put("a", "data", 1);
        let waits: &'static Mutex<Vec<Duration>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        (
            Flaky {
                inner: mem,
                fail: AtomicU32::new(fail),
            },
            waits,
        )
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn retries_transient_errors_with_backoff() {
        let (flaky, waits) = store(3);
        let r = RetryStorage::new(flaky, RetryPolicy::default(), move |d| {
            waits.lock().unwrap().push(d);
            async {}
        });
        assert_eq!(block_on(r.get("a")).unwrap(), "data");
        assert_eq!(
            *waits.lock().unwrap(),
            [
                Duration::from_millis(100),
                Duration::from_millis(200),
                Duration::from_millis(400)
            ]
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
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
            Err(StorageError::Backend { .. })
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

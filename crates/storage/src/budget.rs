//! Per-request budgets: a decorator that refuses to go past a number of requests, a number
//! of bytes or a deadline, so one query cannot run away with an edge worker's subrequests,
//! memory or time. Each refusal is a [`StorageError::BudgetExceeded`] naming the budget.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use crate::{ByteRange, Clock, ObjectMeta, Result, Storage, StorageError};

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
    Subrequests,
    Bytes,
    WallTime,
    Rows,
}

impl BudgetKind {
    /// The name used in error codes and messages.
    pub fn name(self) -> &'static str {
        match self {
            BudgetKind::Subrequests => "subrequests",
            BudgetKind::Bytes => "bytes",
            BudgetKind::WallTime => "wall_time_ms",
            BudgetKind::Rows => "rows",
        }
    }
}

impl std::fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A decorator enforcing [`Budgets`].
#[derive(Debug)]
pub struct BudgetStorage<S> {
    inner: S,
    budgets: Budgets,
    clock: Clock,
    start: f64,
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl<S> BudgetStorage<S> {
    /// Start the clock now.
    pub fn new(inner: S, budgets: Budgets, clock: Clock) -> Self {
        Self {
            inner,
            budgets,
            clock,
            start: clock(),
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// Requests made so far (including refused ones are not counted).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Milliseconds since creation.
    pub fn elapsed_ms(&self) -> f64 {
        (self.clock)() - self.start
    }

    /// Fail with [`StorageError::BudgetExceeded`] when the deadline has passed (callers
    /// doing long work between requests check it too).
    pub fn check_time(&self, path: &str) -> Result<()> {
        if let Some(max) = self.budgets.max_millis {
            let used = self.elapsed_ms();
            if used > max {
                return Err(exceeded(
                    BudgetKind::WallTime,
                    max as u64,
                    used as u64,
                    path,
                ));
            }
        }
        Ok(())
    }

    fn before(&self, path: &str) -> Result<()> {
        self.check_time(path)?;
        let n = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(max) = self.budgets.max_requests
            && n > max
        {
            self.requests.fetch_sub(1, Ordering::Relaxed);
            return Err(exceeded(BudgetKind::Subrequests, max, n, path));
        }
        Ok(())
    }

    fn after(&self, path: &str, got: u64) -> Result<()> {
        let total = self.bytes.fetch_add(got, Ordering::Relaxed) + got;
        if let Some(max) = self.budgets.max_bytes
            && total > max
        {
            return Err(exceeded(BudgetKind::Bytes, max, total, path));
        }
        Ok(())
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
        self.before(prefix)?;
        self.inner.list(prefix, start_after).await
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        self.before(path)?;
        let b = self.inner.get_range(path, range).await?;
        self.after(path, b.len() as u64)?;
        Ok(b)
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        self.before(path)?;
        let b = self.inner.get(path).await?;
        self.after(path, b.len() as u64)?;
        Ok(b)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.before(path)?;
        self.inner.head(path).await
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        self.before(path)?;
        let r = self.inner.get_tail(path, n).await?;
        self.after(path, r.0.len() as u64)?;
        Ok(r)
    }

    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn few_requests(&self) -> bool {
        self.budgets.max_requests.is_some() || self.inner.few_requests()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStorage;
    use futures::executor::block_on;
    use std::sync::atomic::AtomicU64;

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

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
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

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
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

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
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

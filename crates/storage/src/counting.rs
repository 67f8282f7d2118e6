use std::sync::Mutex;

use bytes::Bytes;

use crate::{ByteRange, ObjectMeta, Result, Storage};

/// The kind of a recorded request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    List,
    GetRange,
    Get,
    Head,
}

/// One request seen by [`CountingStorage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    pub kind: RequestKind,
    pub path: String,
    pub range: Option<ByteRange>,
    /// Bytes returned (0 for list and head, and for failed requests).
    pub bytes: u64,
    pub ok: bool,
}

/// Totals over the recorded requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestStats {
    pub requests: u64,
    pub lists: u64,
    pub gets: u64,
    pub heads: u64,
    pub bytes: u64,
}

/// A decorator that records every request made through it and the bytes returned.
#[derive(Debug)]
pub struct CountingStorage<S> {
    inner: S,
    log: Mutex<Vec<RequestRecord>>,
}

impl<S> CountingStorage<S> {
    /// Wrap `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            log: Mutex::new(Vec::new()),
        }
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
        for r in self.records() {
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
    ) {
        if let Ok(mut l) = self.log.lock() {
            l.push(RequestRecord {
                kind,
                path: path.to_string(),
                range,
                bytes,
                ok,
            });
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage> Storage for CountingStorage<S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        let r = self.inner.list(prefix, start_after).await;
        self.record(RequestKind::List, prefix, None, 0, r.is_ok());
        r
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        let r = self.inner.get_range(path, range.clone()).await;
        let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
        self.record(RequestKind::GetRange, path, Some(range), n, r.is_ok());
        r
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        let r = self.inner.get(path).await;
        let n = r.as_ref().map(|b| b.len() as u64).unwrap_or(0);
        self.record(RequestKind::Get, path, None, n, r.is_ok());
        r
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let r = self.inner.head(path).await;
        self.record(RequestKind::Head, path, None, 0, r.is_ok());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryStorage;
    use futures::executor::block_on;

    #[test]
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
}

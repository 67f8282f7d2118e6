use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::{ByteRange, ObjectMeta, Result, Storage};

/// What the cache keys on: whole objects, ranges of them, and heads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Get(String),
    Range(String, String),
    Head(String),
    Tail(String, u64),
}

#[derive(Debug, Default)]
struct Lru {
    entries: HashMap<Key, (Bytes, Option<ObjectMeta>)>,
    order: VecDeque<Key>,
    bytes: usize,
}

/// A decorator that keeps what it read for the session, within a memory bound: Delta log
/// files and data files never change once written, so repeated opens of the same table
/// version (footers, commits, checkpoints) cost no requests. `_last_checkpoint` (which
/// does change) and listings are never cached.
#[derive(Debug)]
pub struct CachingStorage<S> {
    inner: S,
    cache: SharedCache,
}

/// The memory behind a [`CachingStorage`], shareable between storages of the same table
/// root (an edge worker keeps one per table across requests, under a fresh per-request
/// stack of budgets and counters).
#[derive(Debug, Clone)]
pub struct SharedCache {
    capacity: usize,
    max_entry: usize,
    lru: Arc<Mutex<Lru>>,
}

impl SharedCache {
    /// Hold at most `capacity_bytes`, and no single read larger than `max_entry_bytes`
    /// (so large column chunks do not push out footers and log files).
    pub fn new(capacity_bytes: usize, max_entry_bytes: usize) -> Self {
        SharedCache {
            capacity: capacity_bytes,
            max_entry: max_entry_bytes.min(capacity_bytes),
            lru: Arc::new(Mutex::new(Lru::default())),
        }
    }

    /// Bytes held now.
    pub fn cached_bytes(&self) -> usize {
        self.lru.lock().map(|l| l.bytes).unwrap_or(0)
    }
}

fn cacheable(path: &str) -> bool {
    !path.ends_with("_last_checkpoint")
}

impl<S> CachingStorage<S> {
    /// Cache at most `capacity_bytes` of object bytes.
    pub fn new(inner: S, capacity_bytes: usize) -> Self {
        Self::with_cache(inner, SharedCache::new(capacity_bytes, capacity_bytes))
    }

    /// Wrap `inner`, keeping bytes in `cache` (which may be shared).
    pub fn with_cache(inner: S, cache: SharedCache) -> Self {
        Self { inner, cache }
    }

    /// Bytes held now.
    pub fn cached_bytes(&self) -> usize {
        self.cache.cached_bytes()
    }

    fn lookup(&self, key: &Key) -> Option<(Bytes, Option<ObjectMeta>)> {
        let mut l = self.cache.lru.lock().ok()?;
        let hit = l.entries.get(key).cloned()?;
        if let Some(pos) = l.order.iter().position(|k| k == key) {
            l.order.remove(pos);
        }
        l.order.push_back(key.clone());
        Some(hit)
    }

    fn store(&self, key: Key, data: Bytes, meta: Option<ObjectMeta>) {
        if data.len() > self.cache.max_entry {
            return;
        }
        let Ok(mut l) = self.cache.lru.lock() else {
            return;
        };
        if let Some((old, _)) = l.entries.insert(key.clone(), (data.clone(), meta)) {
            l.bytes -= old.len();
            if let Some(pos) = l.order.iter().position(|k| *k == key) {
                l.order.remove(pos);
            }
        }
        l.bytes += data.len();
        l.order.push_back(key);
        while l.bytes > self.cache.capacity {
            let Some(oldest) = l.order.pop_front() else {
                break;
            };
            if let Some((d, _)) = l.entries.remove(&oldest) {
                l.bytes -= d.len();
            }
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage> Storage for CachingStorage<S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        self.inner.list(prefix, start_after).await
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        if !cacheable(path) {
            return self.inner.get_range(path, range).await;
        }
        // a whole object already cached serves any range of it
        if let Some((whole, _)) = self.lookup(&Key::Get(path.to_string()))
            && let Some(r) = range.resolve(whole.len() as u64)
        {
            return Ok(whole.slice(r.start as usize..r.end as usize));
        }
        // a suffix read of the same length as an earlier tail read is that tail
        if let ByteRange::Suffix(n) = range
            && let Some((d, _)) = self.lookup(&Key::Tail(path.to_string(), n))
        {
            return Ok(d);
        }
        let key = Key::Range(path.to_string(), range.to_string());
        if let Some((d, _)) = self.lookup(&key) {
            return Ok(d);
        }
        let d = self.inner.get_range(path, range).await?;
        self.store(key, d.clone(), None);
        Ok(d)
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        if !cacheable(path) {
            return self.inner.get(path).await;
        }
        let key = Key::Get(path.to_string());
        if let Some((d, _)) = self.lookup(&key) {
            return Ok(d);
        }
        let d = self.inner.get(path).await?;
        self.store(key, d.clone(), None);
        Ok(d)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        if !cacheable(path) {
            return self.inner.head(path).await;
        }
        let key = Key::Head(path.to_string());
        if let Some((_, Some(m))) = self.lookup(&key) {
            return Ok(m);
        }
        let m = self.inner.head(path).await?;
        self.store(key, Bytes::new(), Some(m.clone()));
        Ok(m)
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        let tail = Key::Tail(path.to_string(), n);
        if cacheable(path)
            && let Some((d, Some(m))) = self.lookup(&tail)
        {
            return Ok((d, m.size));
        }
        let (d, size) = self.inner.get_tail(path, n).await?;
        if cacheable(path) {
            // kept once, with the size: a later tail or suffix read of this length is
            // answered from memory
            let meta = ObjectMeta {
                path: path.to_string(),
                size,
                last_modified_ms: None,
            };
            self.store(tail, d.clone(), Some(meta));
        }
        Ok((d, size))
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
    use crate::{CountingStorage, MemoryStorage};
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn repeated_reads_are_served_from_memory() {
        let mem = MemoryStorage::new();
        mem.put("_delta_log/00000000000000000000.json", "commit", 1);
        mem.put("_delta_log/_last_checkpoint", "{}", 1);
        mem.put("part.parquet", "0123456789", 1);
        let counted = CountingStorage::new(mem);
        let c = CachingStorage::new(counted, 1024);
        for _ in 0..3 {
            block_on(c.get("_delta_log/00000000000000000000.json")).unwrap();
            block_on(c.get_range("part.parquet", ByteRange::Suffix(4))).unwrap();
            block_on(c.get("_delta_log/_last_checkpoint")).unwrap();
            block_on(c.head("part.parquet")).unwrap();
        }
        let s = c.inner.stats();
        // commit, footer and head once each; _last_checkpoint every time
        assert_eq!((s.gets, s.heads), (5, 1));
        assert_eq!(
            block_on(c.get_range("part.parquet", ByteRange::Suffix(4))).unwrap(),
            "6789"
        );
        // a cached whole object serves ranges
        block_on(c.get("part.parquet")).unwrap();
        let before = c.inner.stats().requests;
        assert_eq!(
            block_on(c.get_range("part.parquet", ByteRange::Bounded(2..5))).unwrap(),
            "234"
        );
        assert_eq!(c.inner.stats().requests, before);
    }

    /// Two storages over one [`SharedCache`] (two requests of an edge worker): the second
    /// reads what the first read from memory, tails included; reads above the entry limit
    /// are never kept.
    #[wasm_bindgen_test(unsupported = test)]
    fn a_shared_cache_serves_the_next_storage() {
        let mem = std::sync::Arc::new(MemoryStorage::new());
        mem.put("_delta_log/00000000000000000001.json", "commit", 1);
        mem.put("small.parquet", vec![1u8; 40], 1);
        mem.put("big.parquet", vec![2u8; 500], 1);
        let shared = SharedCache::new(1000, 100);
        let first = CachingStorage::with_cache(CountingStorage::new(mem.clone()), shared.clone());
        block_on(first.get("_delta_log/00000000000000000001.json")).unwrap();
        assert_eq!(block_on(first.get_tail("small.parquet", 8)).unwrap().1, 40);
        block_on(first.get("big.parquet")).unwrap();
        assert_eq!(first.inner.stats().requests, 3);
        let second = CachingStorage::with_cache(CountingStorage::new(mem), shared.clone());
        block_on(second.get("_delta_log/00000000000000000001.json")).unwrap();
        let (tail, size) = block_on(second.get_tail("small.parquet", 8)).unwrap();
        assert_eq!((tail.len(), size), (8, 40));
        assert_eq!(
            second.inner.stats().requests,
            0,
            "served from the shared cache"
        );
        block_on(second.get("big.parquet")).unwrap();
        assert_eq!(
            second.inner.stats().requests,
            1,
            "above the entry limit: not kept"
        );
        assert!(shared.cached_bytes() <= 100);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn memory_is_bounded() {
        let mem = MemoryStorage::new();
        for i in 0..10 {
            mem.put(&format!("f{i}"), vec![0u8; 100], 1);
        }
        let c = CachingStorage::new(mem, 350);
        for i in 0..10 {
            block_on(c.get(&format!("f{i}"))).unwrap();
            assert!(c.cached_bytes() <= 350);
        }
        assert_eq!(c.cached_bytes(), 300);
        let big = MemoryStorage::new();
        big.put("huge", vec![0u8; 1000], 1);
        let c = CachingStorage::new(big, 350);
        block_on(c.get("huge")).unwrap();
        assert_eq!(c.cached_bytes(), 0);
    }
}

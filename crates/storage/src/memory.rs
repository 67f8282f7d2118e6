use std::collections::BTreeMap;
use std::sync::RwLock;

use bytes::Bytes;

use crate::{ByteRange, ObjectMeta, Result, Storage, StorageError};

/// An in-memory table store for tests: a sorted map from path to bytes and
/// modification time.
#[derive(Debug, Default)]
pub struct MemoryStorage {
    objects: RwLock<BTreeMap<String, (Bytes, i64)>>,
}

impl MemoryStorage {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Store `data` at `path` with modification time `last_modified_ms`.
    pub fn put(&self, path: &str, data: impl Into<Bytes>, last_modified_ms: i64) {
        if let Ok(mut objects) = self.objects.write() {
            objects.insert(path.to_string(), (data.into(), last_modified_ms));
        }
    }

    /// Remove the object at `path` (test set-up only; deltalens never deletes).
    pub fn remove(&self, path: &str) {
        if let Ok(mut objects) = self.objects.write() {
            objects.remove(path);
        }
    }

    fn lookup(&self, path: &str) -> Result<(Bytes, i64)> {
        let objects = self.objects.read().map_err(|_| StorageError::Backend {
            path: path.to_string(),
            operation: "get",
            message: "memory store lock poisoned".into(),
        })?;
        objects
            .get(path)
            .cloned()
            .ok_or_else(|| StorageError::NotFound {
                path: path.to_string(),
            })
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl Storage for MemoryStorage {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        let objects = self.objects.read().map_err(|_| StorageError::Backend {
            path: prefix.to_string(),
            operation: "list",
            message: "memory store lock poisoned".into(),
        })?;
        Ok(objects
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter(|(k, _)| start_after.is_none_or(|s| k.as_str() > s))
            .map(|(k, (data, mtime))| ObjectMeta {
                path: k.clone(),
                size: data.len() as u64,
                last_modified_ms: Some(*mtime),
            })
            .collect())
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        let (data, _) = self.lookup(path)?;
        range.slice(path, &data)
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        Ok(self.lookup(path)?.0)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let (data, mtime) = self.lookup(path)?;
        Ok(ObjectMeta {
            path: path.to_string(),
            size: data.len() as u64,
            last_modified_ms: Some(mtime),
        })
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        let (data, _) = self.lookup(path)?;
        Ok((ByteRange::Suffix(n).slice(path, &data)?, data.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn list_is_sorted_prefixed_and_offset() {
        let s = MemoryStorage::new();
        s.put("_delta_log/00000000000000000001.json", "b", 2);
        s.put("_delta_log/00000000000000000000.json", "a", 1);
        s.put("_delta_logx", "x", 1);
        s.put("part-0.parquet", "p", 1);
        let all = block_on(s.list("_delta_log/", None)).unwrap();
        let names: Vec<_> = all.iter().map(|o| o.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "_delta_log/00000000000000000000.json",
                "_delta_log/00000000000000000001.json"
            ]
        );
        let after =
            block_on(s.list("_delta_log/", Some("_delta_log/00000000000000000000.json"))).unwrap();
        assert_eq!(after.len(), 1);
        assert_eq!(after[0].last_modified_ms, Some(2));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ranges_and_errors() {
        let s = MemoryStorage::new();
        s.put("f", "0123456789", 1);
        assert_eq!(
            block_on(s.get_range("f", ByteRange::Suffix(3))).unwrap(),
            "789"
        );
        assert_eq!(
            block_on(s.get_range("f", ByteRange::Bounded(1..3))).unwrap(),
            "12"
        );
        assert!(matches!(
            block_on(s.get_range("f", ByteRange::From(11))),
            Err(StorageError::InvalidRange { .. })
        ));
        assert!(block_on(s.get("missing")).unwrap_err().is_not_found());
        assert_eq!(block_on(s.head("f")).unwrap().size, 10);
    }
}

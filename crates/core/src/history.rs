//! Commit history (Trino's `$history`), read from the commits' `commitInfo` only.

use deltalens_storage::Storage;
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::actions::parse_commit_info;
use crate::error::{Error, Result};
use crate::limits::FETCH_CONCURRENCY;
use crate::log::{LogListing, read_files};
use crate::table::Table;

/// One commit of the table, with Trino's `$history` columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// The commit's table version.
    pub version: u64,
    /// `commitInfo.timestamp` in ms since the epoch (the commit file's modification
    /// time when the commit has no commitInfo).
    pub timestamp: Option<i64>,
    /// `commitInfo.userId`; `None` when absent or null.
    pub user_id: Option<String>,
    /// `commitInfo.userName`; `None` when absent or null.
    pub user_name: Option<String>,
    /// `commitInfo.operation` (`WRITE`, `MERGE`, …); `None` when absent or null.
    pub operation: Option<String>,
    /// `commitInfo.operationParameters` as written; `None` when absent or null.
    pub operation_parameters: Option<Value>,
    /// `commitInfo.clusterId`; `None` when absent or null.
    pub cluster_id: Option<String>,
    /// `commitInfo.readVersion`: the version the writer read; `None` when absent or not an
    /// integer.
    pub read_version: Option<i64>,
    /// `commitInfo.isolationLevel`; `None` when absent or null.
    pub isolation_level: Option<String>,
    /// `commitInfo.isBlindAppend`; `None` when absent or not a boolean.
    pub is_blind_append: Option<bool>,
    /// `commitInfo.operationMetrics` as written; `None` when absent or null.
    pub operation_metrics: Option<Value>,
    /// `commitInfo.inCommitTimestamp` in milliseconds since the epoch; `None` when absent
    /// or not an integer.
    pub in_commit_timestamp: Option<i64>,
    /// `commitInfo.engineInfo`: the writer's name and version; `None` when absent.
    pub engine_info: Option<String>,
}

impl HistoryEntry {
    fn from_commit_info(
        version: u64,
        file_mtime: Option<i64>,
        ci: Option<&Map<String, Value>>,
    ) -> Self {
        let get = |k: &str| ci.and_then(|c| c.get(k)).filter(|v| !v.is_null());
        let string =
            |k: &str| get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
        HistoryEntry {
            version,
            timestamp: get("timestamp").and_then(Value::as_i64).or(file_mtime),
            user_id: string("userId"),
            user_name: string("userName"),
            operation: string("operation"),
            operation_parameters: get("operationParameters").cloned(),
            cluster_id: string("clusterId"),
            read_version: get("readVersion").and_then(Value::as_i64),
            isolation_level: string("isolationLevel"),
            is_blind_append: get("isBlindAppend").and_then(Value::as_bool),
            operation_metrics: get("operationMetrics").cloned(),
            in_commit_timestamp: get("inCommitTimestamp").and_then(Value::as_i64),
            engine_info: string("engineInfo"),
        }
    }
}

/// History newest first, at most `limit` entries. Reads only those commit files,
/// concurrently, and nothing else.
pub async fn read_history<S: Storage + ?Sized>(
    storage: &S,
    listing: &LogListing,
    limit: Option<usize>,
) -> Result<Vec<HistoryEntry>> {
    let files: Vec<_> = listing
        .commits
        .values()
        .rev()
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let data = read_files(storage, files.iter().map(|f| f.path())).await?;
    let mut entries = files
        .iter()
        .zip(data)
        .map(|(f, d)| {
            let ci = parse_commit_info(f.path(), &d)?;
            Ok(HistoryEntry::from_commit_info(
                f.version,
                f.meta.last_modified_ms,
                ci.as_ref(),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    // a commit whose log records no time is dated by its file, whose modification time a
    // log found without listing does not carry: the store gives it on HEAD
    let undated: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].timestamp.is_none() && files[i].meta.last_modified_ms.is_none())
        .collect();
    let times: Vec<Option<i64>> = futures::stream::iter(undated.iter().map(|&i| {
        let path = files[i].path();
        async move {
            let meta = storage.head(path).await.map_err(Error::from)?;
            Ok::<_, Error>(meta.last_modified_ms)
        }
    }))
    .buffered(FETCH_CONCURRENCY)
    .try_collect()
    .await?;
    for (i, t) in undated.into_iter().zip(times) {
        entries[i].timestamp = t;
    }
    Ok(entries)
}

impl Table {
    /// Commit history, newest first.
    pub async fn history(&self, limit: Option<usize>) -> Result<Vec<HistoryEntry>> {
        let storage = self.storage().as_ref();
        let listing = self.full_listing().await?;
        if listing.latest_version().is_none() {
            listing.segment(None, self.location())?;
        }
        // commit bodies read while discovering the log are not fetched again
        let storage = &crate::log::prefetch::WithPrefetched {
            inner: storage,
            pre: &listing.prefetched,
        };
        read_history(storage, &listing, limit).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::listing::list_log;
    use deltalens_storage::MemoryStorage;
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_only_the_newest_commits() {
        let mem = deltalens_storage::CountingStorage::new(MemoryStorage::new());
        // (bypass counting while writing)
        for v in 0..5u64 {
            let body = format!(
                r#"{{"commitInfo":{{"timestamp":{},"operation":"WRITE","operationParameters":{{"mode":"Append"}},"isBlindAppend":true,"readVersion":{},"userName":"ann"}}}}
{{"add":{{"path":"f{v}","size":1,"partitionValues":{{}},"modificationTime":0,"dataChange":true}}}}
"#,
                1000 + v,
                v.saturating_sub(1)
            );
            mem_put(&mem, v, &body);
        }
        mem_put(&mem, 5, "{\"add\":{\"path\":\"x\",\"size\":1}}\n");
        let listing = block_on(list_log(&mem)).unwrap();
        mem.reset();
        let h = block_on(read_history(&mem, &listing, Some(3))).unwrap();
        assert_eq!(h.iter().map(|e| e.version).collect::<Vec<_>>(), [5, 4, 3]);
        assert_eq!(mem.stats().gets, 3);
        assert_eq!(h[0].operation, None);
        assert_eq!(h[0].timestamp, Some(77), "falls back to file time");
        assert_eq!(h[1].operation.as_deref(), Some("WRITE"));
        assert_eq!(h[1].timestamp, Some(1004));
        assert_eq!(h[1].is_blind_append, Some(true));
        assert_eq!(h[1].read_version, Some(3));
        assert_eq!(h[1].user_name.as_deref(), Some("ann"));
        assert_eq!(
            h[1].operation_parameters.as_ref().unwrap()["mode"],
            "Append"
        );
        let all = block_on(read_history(&mem, &listing, None)).unwrap();
        assert_eq!(all.len(), 6);
    }

    fn mem_put(s: &deltalens_storage::CountingStorage<MemoryStorage>, v: u64, body: &str) {
        // CountingStorage exposes no writes: reach the inner store through a fresh handle.
        inner(s).put(&crate::log::commit_path(v), body.to_string(), 77);
    }

    fn inner(s: &deltalens_storage::CountingStorage<MemoryStorage>) -> &MemoryStorage {
        s.inner()
    }
}

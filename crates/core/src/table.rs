//! A Delta table at a location: the entry point of the core. What it answers is
//! implemented with each concept: [`Table::snapshot`] in `snapshot`, [`Table::history`]
//! in `history`, [`Table::version_at_timestamp`] in `time_travel`.

use deltalens_storage::DynStorage;

use crate::error::Result;
use crate::log::{Discover, LogListing, find_log};

/// Which version of a table to read (Spark's `VERSION AS OF` / `TIMESTAMP AS OF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionSpec {
    /// The newest version.
    #[default]
    Latest,
    /// This version number.
    Version(u64),
    /// Milliseconds since the epoch, UTC.
    Timestamp(i64),
}

/// A Delta table reached through a [`deltalens_storage::Storage`].
#[derive(Debug, Clone)]
pub struct Table {
    storage: DynStorage,
    location: String,
}

impl Table {
    /// The table at `location` (its root URL or path, as given), read through `storage`
    /// (rooted at the table). Data-file and deletion-vector paths the log writes as
    /// absolute URLs are resolved against `location`; messages name it.
    pub fn new(storage: DynStorage, location: impl Into<String>) -> Self {
        Table {
            storage,
            location: location.into(),
        }
    }

    /// The table's root URL or path, as given to [`Table::new`].
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The storage the table is read through, rooted at the table.
    pub fn storage(&self) -> &DynStorage {
        &self.storage
    }

    /// List the whole `_delta_log` (or discover it by name where listing is refused).
    pub async fn listing(&self) -> Result<LogListing> {
        self.full_listing().await
    }

    pub(crate) async fn full_listing(&self) -> Result<LogListing> {
        find_log(self.storage.as_ref(), &self.location, Discover::All).await
    }
}

#[cfg(test)]
mod corrupt_input_tests {
    //! Hand-written logs for corrupt-input cases: each gives a clear error, never a panic.
    use std::sync::Arc;

    use deltalens_storage::{CountingStorage, MemoryStorage};
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    use super::*;
    use crate::error::Error;
    use crate::log::{LAST_CHECKPOINT, commit_path};

    const P_AND_M: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}
"#;

    fn add(i: u64) -> String {
        format!(
            "{{\"add\":{{\"path\":\"f{i}.parquet\",\"size\":10,\"partitionValues\":{{}},\"modificationTime\":0,\"dataChange\":true,\"stats\":\"{{\\\"numRecords\\\":{i}}}\"}}}}\n"
        )
    }

    fn log(n: u64) -> MemoryStorage {
        let mem = MemoryStorage::new();
        for v in 0..n {
            let body = if v == 0 {
                format!("{P_AND_M}{}", add(v))
            } else {
                add(v)
            };
            mem.put(&commit_path(v), body, v as i64);
        }
        mem
    }

    fn open(mem: MemoryStorage) -> Table {
        Table::new(Arc::new(mem), "memory://t")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn reads_a_plain_log() {
        let s = block_on(open(log(4)).snapshot(VersionSpec::Latest)).unwrap();
        assert_eq!(
            (s.version, s.num_files(), s.num_rows().unwrap()),
            (3, 4, Some(6))
        );
        let s = block_on(open(log(4)).snapshot(VersionSpec::Version(1))).unwrap();
        assert_eq!((s.version, s.num_files()), (1, 2));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn bad_json_line() {
        let mem = log(3);
        mem.put(&commit_path(1), "{\"add\":{\"path\":\"x\",\n", 1);
        let e = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(matches!(e, Error::InvalidAction { line: 1, .. }), "{e}");
        assert!(
            e.to_string().contains("00000000000000000001.json line 1"),
            "{e}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn missing_version() {
        let mem = log(5);
        mem.remove(&commit_path(2));
        let t = open(mem);
        let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::MissingVersion {
                    version: 2,
                    target: 4
                }
            ),
            "{e}"
        );
        // versions before the gap still read
        assert_eq!(
            block_on(t.snapshot(VersionSpec::Version(1)))
                .unwrap()
                .version,
            1
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn missing_checkpoint_part_falls_back_to_commits() {
        let mem = log(3);
        mem.put(
            "_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet",
            "garbage that must never be read",
            1,
        );
        let c = CountingStorage::new(mem);
        let s = block_on(Table::new(Arc::new(c), "t").snapshot(VersionSpec::Latest)).unwrap();
        assert_eq!(
            (s.version, s.num_files(), s.checkpoint_version),
            (2, 3, None)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn corrupt_last_checkpoint_falls_back_to_listing() {
        for hint in ["{not json", "", r#"{"version":7}"#, r#"{"size":3}"#] {
            let mem = log(3);
            mem.put(LAST_CHECKPOINT, hint.to_string(), 1);
            let s = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap();
            assert_eq!((s.version, s.num_files()), (2, 3), "hint {hint:?}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn corrupt_checkpoint_is_a_parquet_error() {
        let mem = log(3);
        mem.put(
            "_delta_log/00000000000000000001.checkpoint.parquet",
            "PAR1 but not really",
            1,
        );
        let e = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(matches!(e, Error::Parquet { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("00000000000000000001.checkpoint.parquet"),
            "{e}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn unsupported_feature_and_version() {
        let mem = log(2);
        mem.put(
            &commit_path(2),
            r#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["columnMapping","catalogManaged"],"writerFeatures":[]}}"#,
            2,
        );
        let t = open(mem);
        let e = block_on(t.snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(
            matches!(&e, Error::UnsupportedFeature { feature } if feature == "catalogManaged"),
            "{e}"
        );
        // the older version is still readable
        block_on(t.snapshot(VersionSpec::Version(1))).unwrap();
        let mem = log(1);
        mem.put(
            &commit_path(1),
            r#"{"protocol":{"minReaderVersion":4,"minWriterVersion":7}}"#,
            2,
        );
        let e = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(
            matches!(e, Error::UnsupportedReaderVersion { version: 4 }),
            "{e}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn missing_protocol_or_metadata() {
        let mem = MemoryStorage::new();
        mem.put(&commit_path(0), add(0), 0);
        let e = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(matches!(e, Error::InvalidLog { .. }), "{e}");
        assert!(e.to_string().contains("no protocol action"), "{e}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn empty_location_is_not_a_table() {
        let e = block_on(open(MemoryStorage::new()).snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(matches!(e, Error::NotATable { .. }), "{e}");
        let e = block_on(open(MemoryStorage::new()).history(None)).unwrap_err();
        assert!(matches!(e, Error::NotATable { .. }), "{e}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn invalid_schema_string() {
        let mem = log(1);
        mem.put(
            &commit_path(1),
            r#"{"metaData":{"id":"t","format":{"provider":"parquet"},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"uint7\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}"#,
            1,
        );
        let e = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap_err();
        assert!(
            e.to_string().contains("unknown Delta type \"uint7\""),
            "{e}"
        );
    }
}

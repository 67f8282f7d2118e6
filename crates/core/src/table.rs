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

    /// A 37-byte `_last_checkpoint` claiming 10,000 parts cost 10,033 requests (a ranged
    /// read of each part, whether or not any exists). Now a hint over
    /// `MAX_CHECKPOINT_PARTS` is refused before any part is asked for, and one within it
    /// stops at its first missing part.
    #[wasm_bindgen_test(unsupported = test)]
    fn a_hint_of_many_parts_costs_few_requests() {
        use crate::log::probe::{Discover, discover_log};
        let max = crate::limits::MAX_CHECKPOINT_PARTS;
        for parts in [10_000, max, 2] {
            let hint = format!(r#"{{"version":1,"parts":{parts},"size":3}}"#);
            let mem = log(3);
            mem.put(LAST_CHECKPOINT, hint, 1);
            let c = Arc::new(CountingStorage::new(mem));
            // a store that lists: the hint's parts are not there, the listing decides
            let s = block_on(Table::new(c.clone(), "t").snapshot(VersionSpec::Latest)).unwrap();
            assert_eq!((s.version, s.num_files()), (2, 3), "{parts} parts");
            let n = c.stats().requests;
            println!("{parts} parts, listed: {n} requests");
            assert!(n <= 50, "{parts} parts: {n} requests");
            // found by name: refused naming the limit, or the log found after a few
            // requests
            c.reset();
            let found = block_on(discover_log(c.as_ref(), "t", Discover::Latest));
            let n = c.stats().requests;
            println!("{parts} parts, by name: {n} requests");
            match found {
                Err(e) => {
                    assert!(parts > max, "{parts} parts: {e}");
                    assert!(
                        matches!(
                            e,
                            Error::LimitExceeded {
                                limit: "MAX_CHECKPOINT_PARTS",
                                ..
                            }
                        ),
                        "{e}"
                    );
                    assert!(n <= 1, "{parts} parts: {n} requests before the refusal");
                }
                Ok(l) => {
                    assert!(parts <= max, "{parts} parts accepted");
                    assert_eq!(l.latest_version(), Some(2));
                    assert!(n <= 80, "{parts} parts: {n} requests");
                }
            }
        }
    }

    /// An add whose deletion vector deletes more rows than the file has (or fewer than
    /// none) showed `rows -9223372036854775804`: it is refused when the commit is read,
    /// naming the data file and both counts. A count of 0 to `numRecords`, or any
    /// count without `numRecords`, is read.
    #[wasm_bindgen_test(unsupported = test)]
    fn deletion_vector_cardinality_is_checked_against_num_records() {
        let with_dv = |stats: &str, cardinality: i64| {
            let mem = log(1);
            mem.put(
                &commit_path(1),
                format!(
                    r#"{{"add":{{"path":"dv.parquet","size":10,"partitionValues":{{}},"modificationTime":0,"dataChange":true,{stats}"deletionVector":{{"storageType":"u","pathOrInlineDv":"ab","offset":1,"sizeInBytes":3,"cardinality":{cardinality}}}}}}}"#
                ),
                1,
            );
            block_on(open(mem).snapshot(VersionSpec::Latest))
        };
        let three = r#""stats":"{\"numRecords\":3}","#;
        for (stats, card) in [(three, i64::MAX), (three, 4), (three, -1), ("", -5)] {
            let e = with_dv(stats, card).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, Error::InvalidAction { line: 1, .. }), "{e}");
            for part in ["00000000000000000001.json", "dv.parquet", &card.to_string()] {
                assert!(text.contains(part), "{part}: {text}");
            }
            if !stats.is_empty() {
                assert!(text.contains("numRecords 3"), "{text}");
            }
        }
        let s = with_dv(three, 3).unwrap();
        assert_eq!(s.num_rows().unwrap(), Some(0));
        let t = crate::file_totals::FileTotals::of(&s.files);
        assert_eq!((t.rows, t.deleted_rows), (Some(0), Some(3)));
        // without numRecords the count cannot be checked against it: read, rows unknown
        let s = with_dv("", 7).unwrap();
        assert_eq!(s.num_rows().unwrap(), None);
        // a negative numRecords is no count: it does not make the table's rows negative
        let mem = log(1);
        mem.put(
            &commit_path(1),
            add(0).replace(r#"\"numRecords\":0"#, r#"\"numRecords\":-9"#),
            1,
        );
        let s = block_on(open(mem).snapshot(VersionSpec::Latest)).unwrap();
        assert_eq!(s.num_rows().unwrap(), None);
    }

    /// The same check on an `add` read from a Parquet checkpoint.
    #[wasm_bindgen_test(unsupported = test)]
    fn deletion_vector_cardinality_is_checked_in_checkpoints() {
        use arrow_schema::{DataType as T, Field, Fields};
        let dv = Fields::from(vec![
            Field::new("storageType", T::Utf8, true),
            Field::new("pathOrInlineDv", T::Utf8, true),
            Field::new("offset", T::Int32, true),
            Field::new("sizeInBytes", T::Int32, true),
            Field::new("cardinality", T::Int64, true),
        ]);
        let add = Fields::from(vec![
            Field::new("path", T::Utf8, true),
            Field::new("size", T::Int64, true),
            Field::new("modificationTime", T::Int64, true),
            Field::new("dataChange", T::Boolean, true),
            Field::new("stats", T::Utf8, true),
            Field::new("deletionVector", T::Struct(dv), true),
        ]);
        let schema = Arc::new(arrow_schema::Schema::new(vec![Field::new(
            "add",
            T::Struct(add),
            true,
        )]));
        let checkpoint = |cardinality: i64| {
            let row = format!(
                r#"{{"add":{{"path":"dv.parquet","size":10,"modificationTime":0,"dataChange":true,"stats":"{{\"numRecords\":3}}","deletionVector":{{"storageType":"u","pathOrInlineDv":"ab","offset":1,"sizeInBytes":3,"cardinality":{cardinality}}}}}}}"#
            );
            let batch = arrow_json::ReaderBuilder::new(schema.clone())
                .build(row.as_bytes())
                .unwrap()
                .next()
                .unwrap()
                .unwrap();
            let mut out = Vec::new();
            let mut w =
                parquet::arrow::ArrowWriter::try_new(&mut out, schema.clone(), None).unwrap();
            w.write(&batch).unwrap();
            w.close().unwrap();
            // the checkpoint of version 1 holds the add; commit 2 the protocol and metadata
            let mem = log(2);
            mem.put("_delta_log/00000000000000000001.checkpoint.parquet", out, 1);
            mem.put(&commit_path(2), P_AND_M, 2);
            block_on(open(mem).snapshot(VersionSpec::Latest))
        };
        let s = checkpoint(2).unwrap();
        assert_eq!(
            (s.checkpoint_version, s.num_rows().unwrap()),
            (Some(1), Some(1))
        );
        for card in [4, i64::MAX, -1] {
            let e = checkpoint(card).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, Error::InvalidAction { line: 1, .. }), "{e}");
            for part in [
                "00000000000000000001.checkpoint.parquet",
                "dv.parquet",
                "numRecords 3",
                &card.to_string(),
            ] {
                assert!(text.contains(part), "{part}: {text}");
            }
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

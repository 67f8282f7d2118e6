//! Time travel by timestamp (Spark's `TIMESTAMP AS OF`): the latest commit at or before
//! a point in time, with in-commit timestamps where the table has them and monotonized
//! file modification times before.

use chrono::{TimeZone, Utc};
use deltalens_storage::Storage;

use crate::actions::{Metadata, Protocol, parse_commit_info};
use crate::error::{Error, Result};
use crate::log::prefetch::WithPrefetched;
use crate::log::{LogListing, read_files};
use crate::metadata::load_protocol_and_metadata;
use crate::protocol::has_feature;
use crate::table::Table;

/// Parse an ISO-8601 timestamp (zone optional, no zone = UTC) or a date (its start, UTC)
/// to milliseconds since the epoch.
pub fn parse_timestamp(input: &str) -> Result<i64> {
    let s = input.trim();
    let err = |reason: &str| Error::InvalidTimestamp {
        input: input.to_string(),
        reason: reason.to_string(),
    };
    if s.is_empty() {
        return Err(err("it is empty"));
    }
    match crate::text_value::timestamp_us(s) {
        Some(us) => Ok(us.div_euclid(1_000)),
        None => Err(err("it is not an ISO-8601 timestamp or date")),
    }
}

/// Render milliseconds since the epoch as ISO-8601 UTC.
pub fn format_timestamp(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(dt) => dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => format!("{ms} ms"),
    }
}

/// Spark's rule for file modification times: each commit's time is made strictly greater
/// than the previous one's.
pub fn monotonize(times: &mut [i64]) {
    for i in 1..times.len() {
        if times[i] <= times[i - 1] {
            times[i] = times[i - 1] + 1;
        }
    }
}

/// In-commit timestamp settings of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IctSettings {
    /// `delta.inCommitTimestampEnablementVersion`: the first version with in-commit
    /// timestamps; `None` when unset (enabled since creation) or not a number.
    pub enablement_version: Option<u64>,
    /// `delta.inCommitTimestampEnablementTimestamp`: when they were enabled, in
    /// milliseconds since the epoch; `None` when unset or not a number.
    pub enablement_timestamp: Option<i64>,
}

/// `Some` when the table has in-commit timestamps enabled.
pub fn ict_settings(protocol: &Protocol, metadata: &Metadata) -> Option<IctSettings> {
    let enabled = metadata.property("delta.enableInCommitTimestamps") == Some("true")
        || metadata.property("delta.enableInCommitTimestamps-preview") == Some("true");
    if !enabled || !(has_feature(protocol, "inCommitTimestamp") || protocol.min_writer_version < 7)
    {
        return None;
    }
    Some(IctSettings {
        enablement_version: metadata
            .property("delta.inCommitTimestampEnablementVersion")
            .and_then(|v| v.parse().ok()),
        enablement_timestamp: metadata
            .property("delta.inCommitTimestampEnablementTimestamp")
            .and_then(|v| v.parse().ok()),
    })
}

async fn read_ict<S: Storage + ?Sized>(storage: &S, listing: &LogListing, v: u64) -> Result<i64> {
    let f = listing.commits.get(&v).ok_or(Error::MissingVersion {
        version: v,
        target: v,
    })?;
    let data = storage.get(f.path()).await?;
    parse_commit_info(f.path(), &data)?
        .and_then(|c| c.get("inCommitTimestamp").and_then(|t| t.as_i64()))
        .ok_or_else(|| Error::InvalidLog {
            path: f.path().to_string(),
            message: "in-commit timestamps are enabled but this commit has no commitInfo.inCommitTimestamp".into(),
        })
}

/// The latest version whose commit timestamp is at or before `ts_ms`.
pub async fn version_at_timestamp<S: Storage + ?Sized>(
    storage: &S,
    listing: &LogListing,
    ict: Option<IctSettings>,
    ts_ms: i64,
) -> Result<u64> {
    let earliest = listing.earliest_version().unwrap_or(0);
    let versions: Vec<u64> = listing.commits.range(earliest..).map(|(v, _)| *v).collect();
    let (Some(&first), Some(&last)) = (versions.first(), versions.last()) else {
        return Err(Error::NotATable {
            location: "_delta_log".into(),
        });
    };
    let split = match ict {
        Some(s) => {
            let e = s.enablement_version.unwrap_or(first);
            versions.partition_point(|v| *v < e)
        }
        None => versions.len(),
    };
    let (file_time_versions, ict_versions) = versions.split_at(split);
    // commits found without listing have no modification time: their
    // commitInfo.timestamp stands in for it (bodies already fetched are reused)
    let unknown: Vec<u64> = file_time_versions
        .iter()
        .filter(|v| listing.commits[v].meta.last_modified_ms.is_none())
        .copied()
        .collect();
    let mut from_commits = std::collections::BTreeMap::new();
    if !unknown.is_empty() {
        let s = WithPrefetched {
            inner: storage,
            pre: &listing.prefetched,
        };
        let bodies = read_files(&s, unknown.iter().map(|v| listing.commits[v].path())).await?;
        for (v, data) in unknown.iter().zip(bodies) {
            let path = listing.commits[v].path();
            let t = parse_commit_info(path, &data)?
                .and_then(|c| c.get("timestamp").and_then(|t| t.as_i64()));
            from_commits.insert(*v, t.unwrap_or_default());
        }
    }
    let mut file_times: Vec<i64> = file_time_versions
        .iter()
        .map(|v| match listing.commits[v].meta.last_modified_ms {
            Some(t) => t,
            None => from_commits.get(v).copied().unwrap_or_default(),
        })
        .collect();
    monotonize(&mut file_times);

    let earliest_ts = match file_times.first() {
        Some(t) => *t,
        None => read_ict(storage, listing, first).await?,
    };
    let latest_ts = match ict_versions.last() {
        Some(v) => read_ict(storage, listing, *v).await?,
        None => file_times.last().copied().unwrap_or(earliest_ts),
    };
    let out_of_range = |relation, bound| Error::TimestampOutOfRange {
        requested: format_timestamp(ts_ms),
        relation,
        bound,
        earliest: format_timestamp(earliest_ts),
        earliest_version: first,
        latest: format_timestamp(latest_ts),
        latest_version: last,
    };
    if ts_ms < earliest_ts {
        return Err(out_of_range("before", "earliest available"));
    }
    if ts_ms > latest_ts {
        return Err(out_of_range("after", "latest"));
    }

    let use_ict = match (
        ict_versions.first(),
        ict.and_then(|s| s.enablement_timestamp),
    ) {
        (None, _) => false,
        (Some(_), _) if file_times.is_empty() => true,
        (Some(_), Some(enabled_at)) => ts_ms >= enabled_at,
        (Some(v), None) => ts_ms >= read_ict(storage, listing, *v).await?,
    };
    if use_ict {
        // binary search: largest index with ict <= ts (ict[0] <= ts holds here or
        // the answer is the last file-time version)
        let (mut lo, mut hi) = (0usize, ict_versions.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if read_ict(storage, listing, ict_versions[mid]).await? <= ts_ms {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo > 0 {
            return Ok(ict_versions[lo - 1]);
        }
        return match file_time_versions.last() {
            Some(v) => Ok(*v),
            None => Err(out_of_range("before", "earliest available")),
        };
    }
    let i = file_times.partition_point(|t| *t <= ts_ms);
    match i.checked_sub(1) {
        Some(i) => Ok(file_time_versions[i]),
        None => Err(out_of_range("before", "earliest available")),
    }
}

impl Table {
    /// The version that `TIMESTAMP AS OF ts_ms` reads.
    pub async fn version_at_timestamp(&self, ts_ms: i64) -> Result<u64> {
        let listing = self.full_listing().await?;
        self.version_at(&listing, ts_ms).await
    }

    /// The first version committed at or after `ts_ms` (where a `table_changes` range that
    /// starts at a timestamp begins).
    pub async fn first_version_at_or_after(&self, ts_ms: i64) -> Result<u64> {
        let listing = self.full_listing().await?;
        match self.version_at(&listing, ts_ms).await {
            Ok(v) => {
                let committed_at_ts = match self.version_at(&listing, ts_ms - 1).await {
                    Ok(before) => before != v,
                    Err(Error::TimestampOutOfRange { .. }) => true,
                    Err(e) => return Err(e),
                };
                if committed_at_ts {
                    return Ok(v);
                }
                let latest = listing.segment(None, self.location())?.version;
                if v + 1 > latest {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "no commit at or after {}: the latest is version {latest}",
                            format_timestamp(ts_ms)
                        ),
                    });
                }
                Ok(v + 1)
            }
            Err(Error::TimestampOutOfRange {
                relation: "before",
                earliest_version,
                ..
            }) => Ok(earliest_version),
            Err(e) => Err(e),
        }
    }

    pub(crate) async fn version_at(&self, listing: &LogListing, ts_ms: i64) -> Result<u64> {
        let storage = self.storage().as_ref();
        let latest = listing.segment(None, self.location())?;
        let (protocol, metadata) = load_protocol_and_metadata(storage, &latest).await?;
        version_at_timestamp(storage, listing, ict_settings(&protocol, &metadata), ts_ms).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn parses_timestamps_and_dates() {
        let t = |s| parse_timestamp(s).unwrap();
        assert_eq!(t("1970-01-01T00:00:01Z"), 1000);
        assert_eq!(t("1970-01-01T00:00:01.5Z"), 1500);
        assert_eq!(t("1970-01-01T02:00:01+02:00"), 1000);
        assert_eq!(t("1970-01-01 00:00:01"), 1000);
        assert_eq!(t("1970-01-01T00:00:01"), 1000);
        assert_eq!(t("1970-01-01T00:01"), 60_000);
        assert_eq!(t("1970-01-02"), 86_400_000);
        assert_eq!(t("2023-09-10"), 1_694_304_000_000);
        assert_eq!(t("2023-09-10 00:00:00 UTC"), 1_694_304_000_000);
        for bad in ["", "yesterday", "2023-13-01", "2023-09-10T25:00:00"] {
            assert!(
                matches!(parse_timestamp(bad), Err(Error::InvalidTimestamp { .. })),
                "{bad}"
            );
        }
        assert_eq!(format_timestamp(1500), "1970-01-01T00:00:01.500Z");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn monotonizes_like_spark() {
        let mut t = vec![10, 5, 5, 20, 19];
        monotonize(&mut t);
        assert_eq!(t, [10, 11, 12, 20, 21]);
    }
}

#[cfg(test)]
mod resolution_tests {
    use std::sync::Arc;

    use deltalens_storage::MemoryStorage;
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    use super::*;
    use crate::log::commit_path;
    use crate::table::{Table, VersionSpec};

    const P_AND_M: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}}
{"metaData":{"id":"t","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}
"#;

    fn add(i: u64) -> String {
        format!(
            r#"{{"add":{{"path":"f{i}.parquet","size":1,"partitionValues":{{}},"modificationTime":0,"dataChange":true}}}}"#
        )
    }

    fn table(mem: MemoryStorage) -> Table {
        Table::new(Arc::new(mem), "mem")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn file_times_are_monotonized_and_bounded() {
        let mem = MemoryStorage::new();
        for (v, mtime) in [(0u64, 1000i64), (1, 900), (2, 3000), (3, 3000)] {
            let body = if v == 0 {
                format!("{P_AND_M}{}\n", add(v))
            } else {
                format!("{}\n", add(v))
            };
            mem.put(&commit_path(v), body, mtime);
        }
        let t = table(mem);
        let at = |ts| block_on(t.version_at_timestamp(ts));
        assert_eq!(at(1000).unwrap(), 0);
        assert_eq!(at(1001).unwrap(), 1);
        assert_eq!(at(2999).unwrap(), 1);
        assert_eq!(at(3000).unwrap(), 2);
        assert_eq!(at(3001).unwrap(), 3);
        let before = at(999).unwrap_err();
        assert!(matches!(
            before,
            Error::TimestampOutOfRange {
                relation: "before",
                ..
            }
        ));
        assert!(
            before
                .to_string()
                .contains("1970-01-01T00:00:01.000Z (version 0)"),
            "{before}"
        );
        let after = at(3002).unwrap_err();
        assert!(
            matches!(
                after,
                Error::TimestampOutOfRange {
                    relation: "after",
                    ..
                }
            ),
            "{after}"
        );
        assert!(after.to_string().contains("(version 3)"), "{after}");
        let s = block_on(t.snapshot(VersionSpec::Timestamp(2000))).unwrap();
        assert_eq!((s.version, s.num_files()), (1, 2));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn in_commit_timestamps_after_enablement_version() {
        let mem = MemoryStorage::new();
        mem.put(&commit_path(0), format!("{P_AND_M}{}\n", add(0)), 100);
        mem.put(&commit_path(1), format!("{}\n", add(1)), 200);
        // v2 enables ICT: its commitInfo carries the timestamp, file times are ignored
        let enable = P_AND_M.lines().nth(1).unwrap().replace(
            r#""configuration":{}"#,
            r#""configuration":{"delta.enableInCommitTimestamps":"true","delta.inCommitTimestampEnablementVersion":"2","delta.inCommitTimestampEnablementTimestamp":"5000"}"#,
        );
        mem.put(
            &commit_path(2),
            format!(
                "{{\"commitInfo\":{{\"inCommitTimestamp\":5000,\"timestamp\":1}}}}\n{enable}\n{}\n",
                add(2)
            ),
            9_999_999,
        );
        mem.put(
            &commit_path(3),
            format!(
                "{{\"commitInfo\":{{\"inCommitTimestamp\":6000,\"timestamp\":1}}}}\n{}\n",
                add(3)
            ),
            1,
        );
        let t = table(mem);
        let at = |ts| block_on(t.version_at_timestamp(ts));
        assert_eq!(at(100).unwrap(), 0);
        assert_eq!(at(150).unwrap(), 0);
        assert_eq!(at(4999).unwrap(), 1);
        assert_eq!(at(5000).unwrap(), 2);
        assert_eq!(at(5999).unwrap(), 2);
        assert_eq!(at(6000).unwrap(), 3);
        assert!(matches!(
            at(6001),
            Err(Error::TimestampOutOfRange {
                relation: "after",
                ..
            })
        ));
        assert!(matches!(
            at(99),
            Err(Error::TimestampOutOfRange {
                relation: "before",
                ..
            })
        ));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn missing_in_commit_timestamp_is_an_error() {
        let mem = MemoryStorage::new();
        let md = P_AND_M.replace(
            r#""configuration":{}"#,
            r#""configuration":{"delta.enableInCommitTimestamps":"true"}"#,
        );
        mem.put(&commit_path(0), format!("{md}{}\n", add(0)), 100);
        let e = block_on(table(mem).version_at_timestamp(100)).unwrap_err();
        assert!(
            e.to_string().contains("no commitInfo.inCommitTimestamp"),
            "{e}"
        );
    }
}

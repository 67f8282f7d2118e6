//! What a listing of `_delta_log/` found: commits and complete checkpoints by version,
//! and the choice of the files that reconstruct one version (the newest checkpoint at or
//! before it, then every commit after it, consecutive).

use std::collections::BTreeMap;
use std::sync::Arc;

use deltalens_storage::{ObjectMeta, Storage};

use super::path::{CheckpointKind, LOG_DIR, LogFile, LogFileKind};
use super::prefetch::Prefetched;
use super::segment::{Checkpoint, LogSegment};
use crate::error::{Error, Result};

/// What a listing of `_delta_log/` found.
#[derive(Debug, Clone, Default)]
pub struct LogListing {
    /// Commit files by version.
    pub commits: BTreeMap<u64, LogFile>,
    /// The preferred complete checkpoint at each version that has one.
    pub checkpoints: BTreeMap<u64, Checkpoint>,
    /// True when the listing started at a checkpoint (from `_last_checkpoint`)
    /// rather than at the beginning of the log.
    pub partial: bool,
    /// Bytes of log files read while finding them (checkpoint tails, commit bodies).
    pub prefetched: Arc<Prefetched>,
}

fn rank(kind: &CheckpointKind) -> u8 {
    match kind {
        CheckpointKind::V2 { .. } => 0,
        CheckpointKind::Classic => 1,
        CheckpointKind::MultiPart { .. } => 2,
    }
}

impl LogListing {
    /// Build from listed objects (any order; stray files are ignored).
    pub fn from_objects(objects: Vec<ObjectMeta>, partial: bool) -> LogListing {
        let mut commits = BTreeMap::new();
        // version -> candidate checkpoints; multi-part grouped by part count
        let mut singles: BTreeMap<u64, Vec<Checkpoint>> = BTreeMap::new();
        let mut multi: BTreeMap<(u64, u32), BTreeMap<u32, ObjectMeta>> = BTreeMap::new();
        for f in objects.into_iter().filter_map(LogFile::parse) {
            match &f.kind {
                LogFileKind::Commit => {
                    commits.insert(f.version, f);
                }
                LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts }) => {
                    multi
                        .entry((f.version, *parts))
                        .or_default()
                        .insert(*part, f.meta);
                }
                LogFileKind::Checkpoint(kind) => {
                    singles.entry(f.version).or_default().push(Checkpoint {
                        version: f.version,
                        kind: kind.clone(),
                        parts: vec![f.meta],
                    });
                }
                LogFileKind::Compaction { .. } | LogFileKind::Checksum => {}
            }
        }
        for ((version, parts), found) in multi {
            // Readers must ignore multi-part checkpoints with missing parts.
            if found.len() as u32 == parts && (1..=parts).all(|p| found.contains_key(&p)) {
                singles.entry(version).or_default().push(Checkpoint {
                    version,
                    kind: CheckpointKind::MultiPart { part: 1, parts },
                    parts: found.into_values().collect(),
                });
            }
        }
        let checkpoints = singles
            .into_iter()
            .filter_map(|(v, mut c)| {
                c.sort_by_key(|c| rank(&c.kind));
                c.into_iter().next().map(|c| (v, c))
            })
            .collect();
        LogListing {
            commits,
            checkpoints,
            partial,
            prefetched: Arc::default(),
        }
    }

    /// The newest version the log has.
    pub fn latest_version(&self) -> Option<u64> {
        let c = self.commits.keys().next_back().copied();
        let k = self.checkpoints.keys().next_back().copied();
        c.max(k)
    }

    /// The oldest version that can be reconstructed: version 0 when its commit exists,
    /// else the oldest checkpoint.
    pub fn earliest_version(&self) -> Option<u64> {
        if self.commits.contains_key(&0) {
            return Some(0);
        }
        let first_cp = self.checkpoints.keys().next().copied();
        first_cp.or_else(|| self.commits.keys().next().copied())
    }

    /// The files reconstructing `version` (latest when `None`).
    pub fn segment(&self, version: Option<u64>, location: &str) -> Result<LogSegment> {
        let latest = self.latest_version().ok_or_else(|| Error::NotATable {
            location: location.to_string(),
        })?;
        let earliest = self.earliest_version().unwrap_or(latest);
        let target = version.unwrap_or(latest);
        if target > latest || target < earliest {
            return Err(Error::VersionOutOfRange {
                requested: target,
                earliest,
                latest,
            });
        }
        let checkpoint = self
            .checkpoints
            .range(..=target)
            .next_back()
            .map(|(_, c)| c.clone());
        let start = checkpoint.as_ref().map_or(0, |c| c.version + 1);
        // sized by what was found, never by the version numbers (a crafted name such as
        // 09999999999999999999.json must not size an allocation)
        let found = if start <= target {
            self.commits.range(start..=target).count()
        } else {
            0
        };
        let mut commits = Vec::with_capacity(found);
        for v in start..=target {
            match self.commits.get(&v) {
                Some(f) => commits.push(f.clone()),
                None => {
                    return Err(Error::MissingVersion { version: v, target });
                }
            }
        }
        Ok(LogSegment {
            version: target,
            checkpoint,
            commits,
            prefetched: Arc::clone(&self.prefetched),
        })
    }
}

/// List the whole log.
pub async fn list_log<S: Storage + ?Sized>(storage: &S) -> Result<LogListing> {
    let objects = storage.list(LOG_DIR, None).await?;
    Ok(LogListing::from_objects(objects, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn listing(names: &[&str]) -> LogListing {
        LogListing::from_objects(
            names
                .iter()
                .map(|n| ObjectMeta {
                    path: format!("{LOG_DIR}{n}"),
                    size: 10,
                    last_modified_ms: Some(0),
                })
                .collect(),
            false,
        )
    }

    fn c(v: u64) -> String {
        format!("{v:020}.json")
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn latest_segment_uses_newest_checkpoint() {
        let names: Vec<String> = (0..=12)
            .map(c)
            .chain(["00000000000000000010.checkpoint.parquet".to_string()])
            .chain(["00000000000000000005.checkpoint.parquet".to_string()])
            .collect();
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let l = listing(&refs);
        let s = l.segment(None, "t").unwrap();
        assert_eq!(s.version, 12);
        assert_eq!(s.checkpoint.as_ref().unwrap().version, 10);
        assert_eq!(
            s.commits.iter().map(|c| c.version).collect::<Vec<_>>(),
            [11, 12]
        );
        // time travel never uses a newer checkpoint
        let s = l.segment(Some(7), "t").unwrap();
        assert_eq!(s.checkpoint.as_ref().unwrap().version, 5);
        assert_eq!(s.commits.len(), 2);
        let s = l.segment(Some(3), "t").unwrap();
        assert!(s.checkpoint.is_none());
        assert_eq!(s.commits.len(), 4);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn incomplete_multi_part_checkpoint_is_ignored() {
        let l = listing(&[
            &c(0),
            &c(1),
            &c(2),
            "00000000000000000001.checkpoint.0000000001.0000000002.parquet",
            "00000000000000000001.checkpoint.0000000002.0000000002.parquet",
            "00000000000000000002.checkpoint.0000000001.0000000003.parquet",
            "00000000000000000002.checkpoint.0000000003.0000000003.parquet",
        ]);
        let s = l.segment(None, "t").unwrap();
        let cp = s.checkpoint.unwrap();
        assert_eq!(cp.version, 1);
        assert_eq!(cp.parts.len(), 2);
        assert_eq!(s.commits.len(), 1);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn huge_commit_names_size_nothing() {
        // an (empty) commit named 09999999999999999999.json made segment() abort with a
        // capacity overflow
        let l = listing(&[&c(0), "09000000000000000000.json"]);
        let e = l.segment(None, "t").unwrap_err();
        assert!(matches!(e, Error::MissingVersion { version: 1, .. }), "{e}");
        // past i64::MAX: not a Delta version, ignored
        let l = listing(&[&c(0), "09999999999999999999.json"]);
        assert_eq!(l.segment(None, "t").unwrap().version, 0);
        // names past i64::MAX are not Delta versions at all
        let l = listing(&[&c(0), "18446744073709551615.json"]);
        assert_eq!(l.latest_version(), Some(0));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn missing_commit_is_named() {
        let l = listing(&[&c(0), &c(1), &c(3)]);
        let e = l.segment(None, "t").unwrap_err();
        assert!(
            matches!(
                e,
                Error::MissingVersion {
                    version: 2,
                    target: 3
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("commit 2 is missing"));
        l.segment(Some(1), "t").unwrap();
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn out_of_range_and_empty() {
        let l = listing(&[&c(5), &c(6), "00000000000000000005.checkpoint.parquet"]);
        assert_eq!(l.earliest_version(), Some(5));
        let e = l.segment(Some(2), "t").unwrap_err();
        assert!(matches!(
            e,
            Error::VersionOutOfRange {
                requested: 2,
                earliest: 5,
                latest: 6
            }
        ));
        assert!(matches!(
            l.segment(Some(9), "t"),
            Err(Error::VersionOutOfRange { .. })
        ));
        assert!(matches!(
            listing(&["_last_checkpoint", "x.tmp"]).segment(None, "t"),
            Err(Error::NotATable { .. })
        ));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn v2_checkpoint_preferred_and_stray_files_ignored() {
        let l = listing(&[
            &c(0),
            &c(1),
            &c(2),
            "00000000000000000002.checkpoint.parquet",
            "00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.json",
            "00000000000000000000.crc",
            "00000000000000000000.00000000000000000001.compacted.json",
            ".tmp",
        ]);
        let s = l.segment(None, "t").unwrap();
        assert!(matches!(
            s.checkpoint.unwrap().kind,
            CheckpointKind::V2 { json: true, .. }
        ));
        assert!(s.commits.is_empty());
    }
}

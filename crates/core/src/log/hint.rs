//! The `_last_checkpoint` hint: which checkpoint to start from without listing the log.
//! Reading the hinted checkpoint's tail (one ranged request per part, which also yields
//! its size) confirms the hint and holds the Parquet footer for replay.

use bytes::Bytes;
use deltalens_storage::{ByteRange, ObjectMeta, Storage};
use futures::StreamExt;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::limits;
use crate::limits::FETCH_CONCURRENCY;

use super::path::{CheckpointKind, LAST_CHECKPOINT, LOG_DIR, LogFile, LogFileKind};
use super::prefetch::Prefetched;
use super::segment::Checkpoint;

/// Bytes read from the end of each checkpoint file: the Parquet footer, and the whole
/// file when it is small (the same threshold the checkpoint reader fetches whole).
pub const CHECKPOINT_TAIL: u64 = 256 * 1024;

/// Bytes read from the end of a checkpoint the hint says is large (over 1 MiB): its
/// footer only — the rest is read by column and by window, and a question that needs no
/// file (the schema, the properties) should not pay for 256 KiB of add statistics.
pub const LARGE_CHECKPOINT_TAIL: u64 = 64 * 1024;

/// The tail to prefetch of a checkpoint file of `size` bytes.
fn tail_len(size: u64) -> u64 {
    if size > 1024 * 1024 {
        LARGE_CHECKPOINT_TAIL
    } else {
        CHECKPOINT_TAIL
    }
}

/// The `v2Checkpoint` field of `_last_checkpoint`: the v2 checkpoint's file.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct V2Hint {
    /// Path or name of the v2 checkpoint file (`n.checkpoint.<uuid>.json|parquet`).
    pub path: String,
}

/// The fields of `_last_checkpoint` a reader needs.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// The version of the table when the checkpoint was made.
    pub version: u64,
    /// Number of parts of a multi-part checkpoint; `None` for a single file.
    pub parts: Option<u32>,
    /// The v2 checkpoint's file; `None` for a classic or multi-part checkpoint.
    pub v2_checkpoint: Option<V2Hint>,
    /// Size of the checkpoint in bytes (written by Spark and delta-rs).
    pub size_in_bytes: Option<u64>,
}

impl Hint {
    /// Parse `_last_checkpoint`; `None` when it is not usable (corrupt input is not an
    /// error: the reader falls back to listing or probing the log).
    pub fn parse(data: &[u8]) -> Option<Hint> {
        deltalens_json::from_slice(data).ok()
    }

    /// Paths of the files of the hinted checkpoint, in part order. A version or part
    /// count over [`crate::limits`] is an error naming `_last_checkpoint`, checked before
    /// any path is made; so is a v2 checkpoint name that is not a plain file name.
    pub fn part_paths(&self) -> Result<Vec<String>> {
        let v = self.version;
        limits::check(
            "MAX_VERSION",
            "the version",
            v,
            limits::MAX_VERSION,
            LAST_CHECKPOINT,
        )?;
        match (&self.v2_checkpoint, self.parts) {
            (Some(v2), _) => {
                let name = v2.path.rsplit('/').next().unwrap_or(&v2.path);
                let plain = crate::table_path::check(name).is_ok()
                    && name.starts_with(&format!("{v:020}.checkpoint."))
                    && (name.ends_with(".json") || name.ends_with(".parquet"));
                match plain {
                    true => Ok(vec![format!("{LOG_DIR}{name}")]),
                    false => Err(Error::InvalidLog {
                        path: LAST_CHECKPOINT.to_string(),
                        message: format!(
                            "v2Checkpoint.path {:?} is not a checkpoint of version {v}",
                            v2.path
                        ),
                    }),
                }
            }
            (None, Some(p)) if p > 1 => {
                limits::check(
                    "MAX_CHECKPOINT_PARTS",
                    "the number of checkpoint parts",
                    u64::from(p),
                    limits::MAX_CHECKPOINT_PARTS,
                    LAST_CHECKPOINT,
                )?;
                Ok((1..=p)
                    .map(|i| format!("{LOG_DIR}{v:020}.checkpoint.{i:010}.{p:010}.parquet"))
                    .collect())
            }
            _ => Ok(vec![format!("{LOG_DIR}{v:020}.checkpoint.parquet")]),
        }
    }
}

/// Read `_last_checkpoint` (missing or corrupt: `None`).
pub async fn read_hint<S: Storage + ?Sized>(storage: &S) -> Result<Option<Hint>> {
    match storage.get(LAST_CHECKPOINT).await {
        Ok(data) => Ok(Hint::parse(&data)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Fetch the tail of every file of the hinted checkpoint, [`FETCH_CONCURRENCY`] at a
/// time. `None` when a file is missing (a stale or partial hint, which is not usable):
/// the parts after it are not asked for, so a hint claiming parts that do not exist
/// costs a few requests, not one per part.
pub async fn fetch_hinted<S: Storage + ?Sized>(
    storage: &S,
    hint: &Hint,
) -> Result<Option<(Checkpoint, Prefetched)>> {
    let paths = hint.part_paths()?;
    // one file of known size: a bounded range, which every store serves (Azure has no
    // suffix ranges); checked by the Parquet magic at its end
    // (classic checkpoints only: for v2 the size counts the sidecars too)
    let known_size = match (paths.as_slice(), hint.size_in_bytes, &hint.v2_checkpoint) {
        ([p], Some(s), None) if s > 8 && p.ends_with(".parquet") => Some(s),
        _ => None,
    };
    let mut tails = futures::stream::iter(paths.iter().map(|p| async move {
        if let Some(size) = known_size {
            let start = size.saturating_sub(tail_len(size));
            match storage.get_range(p, ByteRange::Bounded(start..size)).await {
                Ok(d) if d.len() as u64 == size - start && d.ends_with(b"PAR1") => {
                    return Ok(Some((d, size)));
                }
                Err(e) if e.is_not_found() => return Ok(None),
                _ => {} // a hint that does not match the file: ask the store
            }
        }
        match storage.get_tail(p, CHECKPOINT_TAIL).await {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }))
    .buffered(FETCH_CONCURRENCY);
    let mut pre = Prefetched::default();
    let mut parts = Vec::with_capacity(paths.len());
    for path in &paths {
        // the stream yields one tail per path, in order
        let Some((data, size)) = tails.next().await.transpose()?.flatten() else {
            return Ok(None); // a part is missing: the requests not yet made never are
        };
        pre.insert_tail(path, size, Bytes::clone(&data));
        parts.push(ObjectMeta {
            path: path.clone(),
            size,
            last_modified_ms: None,
        });
    }
    let kind = match parts
        .first()
        .cloned()
        .and_then(LogFile::parse)
        .map(|f| f.kind)
    {
        Some(LogFileKind::Checkpoint(CheckpointKind::MultiPart { parts: p, .. })) => {
            CheckpointKind::MultiPart { part: 1, parts: p }
        }
        Some(LogFileKind::Checkpoint(k)) => k,
        _ => return Ok(None),
    };
    let checkpoint = Checkpoint {
        version: hint.version,
        kind,
        parts,
    };
    Ok(Some((checkpoint, pre)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn hints_name_their_files() {
        let h = Hint::parse(br#"{"version":10,"size":3}"#).unwrap();
        assert_eq!(
            h.part_paths().unwrap(),
            ["_delta_log/00000000000000000010.checkpoint.parquet"]
        );
        let h = Hint::parse(br#"{"version":2,"parts":2,"size":3}"#).unwrap();
        assert_eq!(h.part_paths().unwrap().len(), 2);
        assert!(h.part_paths().unwrap()[1].ends_with(".checkpoint.0000000002.0000000002.parquet"));
        let h = Hint::parse(
            br#"{"version":5,"v2Checkpoint":{"path":"00000000000000000005.checkpoint.abc.json"}}"#,
        )
        .unwrap();
        assert_eq!(
            h.part_paths().unwrap(),
            ["_delta_log/00000000000000000005.checkpoint.abc.json"]
        );
        assert_eq!(Hint::parse(b"{\"version\":"), None);
        // a v2 hint names a checkpoint of its own version, nothing else
        for bad in [
            "../../x.json",
            "00000000000000000004.checkpoint.abc.json",
            "..",
            "x",
        ] {
            let h = Hint::parse(
                format!(r#"{{"version":5,"v2Checkpoint":{{"path":"{bad}"}}}}"#).as_bytes(),
            )
            .unwrap();
            assert!(h.part_paths().is_err(), "{bad}");
        }
        assert_eq!(Hint::parse(b""), None);
        assert_eq!(Hint::parse(br#"{"version":-1}"#), None);
    }

    /// `_last_checkpoint` as an array of its fields in order is not a hint (serde's derive
    /// would read it as one), nor is a `v2Checkpoint` given as an array.
    #[wasm_bindgen_test(unsupported = test)]
    fn an_array_is_never_a_hint() {
        assert_eq!(Hint::parse(b"[3,null,null,1000]"), None);
        assert_eq!(
            Hint::parse(br#"{"version":3,"v2Checkpoint":["x.json"]}"#),
            None
        );
        assert!(Hint::parse(br#"{"version":3,"v2Checkpoint":{"path":"x.json"}}"#).is_some());
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn hostile_hints_are_refused_before_any_work() {
        // 4294967295 parts aborted the process allocating their names; 100000 parts cost
        // 100,004 requests, 10000 parts 10,033
        for parts in [u32::MAX, 100_000, 10_000, 1_001] {
            let h = Hint::parse(format!(r#"{{"version":1,"parts":{parts}}}"#).as_bytes()).unwrap();
            let e = h.part_paths().unwrap_err();
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
            assert!(e.to_string().contains("_last_checkpoint"), "{e}");
        }
        let h = Hint::parse(br#"{"version":18446744073709551615}"#).unwrap();
        assert!(matches!(
            h.part_paths(),
            Err(Error::LimitExceeded {
                limit: "MAX_VERSION",
                ..
            })
        ));
        let h = Hint::parse(br#"{"version":1,"parts":1000}"#).unwrap();
        assert_eq!(h.part_paths().unwrap().len(), 1_000);
    }
}

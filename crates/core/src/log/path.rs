//! Names of the files in `_delta_log/` and what they mean.

use deltalens_storage::ObjectMeta;

/// The directory holding the transaction log, relative to the table root.
pub const LOG_DIR: &str = "_delta_log/";
/// The directory of v2 checkpoint sidecars.
pub const SIDECAR_DIR: &str = "_delta_log/_sidecars/";
/// The `_last_checkpoint` hint.
pub const LAST_CHECKPOINT: &str = "_delta_log/_last_checkpoint";

/// How a checkpoint file is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointKind {
    /// `n.checkpoint.parquet`
    Classic,
    /// `n.checkpoint.o.p.parquet`
    MultiPart {
        /// `o`: this file's part number, from 1.
        part: u32,
        /// `p`: the number of parts.
        parts: u32,
    },
    /// `n.checkpoint.<uuid>.json|parquet`
    V2 {
        /// The UUID in the name.
        uuid: String,
        /// Whether the file is JSON (else Parquet).
        json: bool,
    },
}

/// What a file in `_delta_log/` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFileKind {
    /// `n.json`: the commit of version n.
    Commit,
    /// A checkpoint of version n, named as the kind says.
    Checkpoint(CheckpointKind),
    /// `x.y.compacted.json`: the aggregated actions of commits x..=y.
    Compaction {
        /// `y`: the last commit it aggregates.
        end: u64,
    },
    /// `n.crc`
    Checksum,
}

/// A recognised file of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFile {
    /// The version in the file name (`x`, the first, for a compaction).
    pub version: u64,
    /// What the file is.
    pub kind: LogFileKind,
    /// The listed object: path from the table root, size and modification time.
    pub meta: ObjectMeta,
}

impl LogFile {
    /// Recognise a listed object; `None` for anything that is not a log file
    /// (`_last_checkpoint`, sidecars, temp files, `.crc` of other tools...).
    pub fn parse(meta: ObjectMeta) -> Option<LogFile> {
        let name = meta.path.strip_prefix(LOG_DIR)?;
        let (version, kind) = parse_name(name)?;
        Some(LogFile {
            version,
            kind,
            meta,
        })
    }

    /// Whether the file is a commit (`n.json`).
    pub fn is_commit(&self) -> bool {
        self.kind == LogFileKind::Commit
    }

    /// The file's path from the table root.
    pub fn path(&self) -> &str {
        &self.meta.path
    }
}

/// A 20-digit version no greater than [`crate::limits::MAX_VERSION`] (Delta versions
/// are signed 64-bit: larger names are not log files).
fn parse_version(s: &str) -> Option<u64> {
    if s.len() == 20 && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok().filter(|v| *v <= crate::limits::MAX_VERSION)
    } else {
        None
    }
}

fn parse_name(name: &str) -> Option<(u64, LogFileKind)> {
    let (head, rest) = name.split_once('.')?;
    let version = parse_version(head)?;
    let kind = match rest {
        "json" => LogFileKind::Commit,
        "crc" => LogFileKind::Checksum,
        "checkpoint.parquet" => LogFileKind::Checkpoint(CheckpointKind::Classic),
        _ => {
            let parts: Vec<&str> = rest.split('.').collect();
            match parts.as_slice() {
                ["checkpoint", o, p, "parquet"]
                    if o.len() == 10
                        && p.len() == 10
                        && o.bytes().all(|b| b.is_ascii_digit())
                        && p.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    let part: u32 = o.parse().ok()?;
                    let parts: u32 = p.parse().ok()?;
                    if part == 0 || part > parts {
                        return None;
                    }
                    LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts })
                }
                ["checkpoint", uuid, ext @ ("json" | "parquet")] if is_uuid(uuid) => {
                    LogFileKind::Checkpoint(CheckpointKind::V2 {
                        uuid: (*uuid).to_string(),
                        json: *ext == "json",
                    })
                }
                [end, "compacted", "json"] => {
                    let end = parse_version(end)?;
                    if end <= version {
                        return None;
                    }
                    LogFileKind::Compaction { end }
                }
                _ => return None,
            }
        }
    };
    Some((version, kind))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Path of the commit file of `version`.
pub fn commit_path(version: u64) -> String {
    format!("{LOG_DIR}{version:020}.json")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn kind(name: &str) -> Option<(u64, LogFileKind)> {
        LogFile::parse(ObjectMeta {
            path: format!("{LOG_DIR}{name}"),
            size: 1,
            last_modified_ms: None,
        })
        .map(|f| (f.version, f.kind))
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn recognises_log_file_names() {
        assert_eq!(
            kind("00000000000000000007.json"),
            Some((7, LogFileKind::Commit))
        );
        assert_eq!(
            kind("00000000000000000007.crc"),
            Some((7, LogFileKind::Checksum))
        );
        assert_eq!(
            kind("00000000000000000010.checkpoint.parquet"),
            Some((10, LogFileKind::Checkpoint(CheckpointKind::Classic)))
        );
        assert_eq!(
            kind("00000000000000000010.checkpoint.0000000002.0000000003.parquet"),
            Some((
                10,
                LogFileKind::Checkpoint(CheckpointKind::MultiPart { part: 2, parts: 3 })
            ))
        );
        assert_eq!(
            kind("00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.json"),
            Some((
                2,
                LogFileKind::Checkpoint(CheckpointKind::V2 {
                    uuid: "e8fa2696-9728-4e9c-b285-634743fdd4fb".into(),
                    json: true
                })
            ))
        );
        assert_eq!(
            kind("00000000000000000006.00000000000000000010.compacted.json"),
            Some((6, LogFileKind::Compaction { end: 10 }))
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn ignores_stray_files() {
        for name in [
            "_last_checkpoint",
            ".00000000000000000000.json.crc",
            "0000000000000000000.json",
            "00000000000000000000.json.tmp",
            "00000000000000000001.checkpoint.0000000000.0000000002.parquet",
            "00000000000000000001.checkpoint.0000000003.0000000002.parquet",
            "00000000000000000001.checkpoint.not-a-uuid.json",
            "00000000000000000006.00000000000000000006.compacted.json",
            "_sidecars/abc.parquet",
            ".s3-optimization-0",
        ] {
            assert_eq!(kind(name), None, "{name}");
        }
        assert!(
            LogFile::parse(ObjectMeta {
                path: "data/00000000000000000000.json".into(),
                size: 1,
                last_modified_ms: None
            })
            .is_none()
        );
    }
}

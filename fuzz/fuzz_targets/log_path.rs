//! Names of listed `_delta_log/` files: `log::path::LogFile::parse` on any name (listings
//! come from the store). A recognised commit or checkpoint name is the one its version
//! formats to.
#![no_main]

use deltalens_core::log::{CheckpointKind, LOG_DIR, LogFile, LogFileKind, commit_path};
use deltalens_storage::ObjectMeta;

deltalens_fuzz::target!(|data| {
    let Some(name) = deltalens_fuzz::text(data) else {
        return;
    };
    let path = format!("{LOG_DIR}{name}");
    let Some(f) = LogFile::parse(ObjectMeta {
        path: path.clone(),
        size: 0,
        last_modified_ms: None,
    }) else {
        return;
    };
    assert_eq!(f.path(), path);
    let v = f.version;
    let expected = match &f.kind {
        LogFileKind::Commit => Some(commit_path(v)),
        LogFileKind::Checksum => Some(format!("{LOG_DIR}{v:020}.crc")),
        LogFileKind::Checkpoint(CheckpointKind::Classic) => {
            Some(format!("{LOG_DIR}{v:020}.checkpoint.parquet"))
        }
        LogFileKind::Checkpoint(CheckpointKind::MultiPart { part, parts }) => {
            assert!(*part >= 1 && part <= parts, "part {part} of {parts}");
            Some(format!(
                "{LOG_DIR}{v:020}.checkpoint.{part:010}.{parts:010}.parquet"
            ))
        }
        LogFileKind::Checkpoint(CheckpointKind::V2 { uuid, json }) => Some(format!(
            "{LOG_DIR}{v:020}.checkpoint.{uuid}.{}",
            if *json { "json" } else { "parquet" }
        )),
        LogFileKind::Compaction { end } => {
            assert!(*end > v, "compaction {v}..{end}");
            Some(format!("{LOG_DIR}{v:020}.{end:020}.compacted.json"))
        }
    };
    if let Some(e) = expected {
        assert_eq!(e, path, "the name of version {v} is not the name listed");
    }
});

//! The protocol and metadata of a version, read without its files: commits newest first
//! until both are found, then only the `protocol` and `metaData` columns of the checkpoint
//! (time travel by timestamp and change feeds need no more).

use deltalens_storage::Storage;

use crate::actions::{Metadata, Protocol, parse_head_actions};
use crate::checkpoint::{CheckpointRead, read_checkpoint};
use crate::error::{Error, Result};
use crate::limits::FETCH_CONCURRENCY;
use crate::log::prefetch::{Prefetched, WithPrefetched};
use crate::log::{LogSegment, read_files};
use crate::protocol::check_readable;
use crate::replay::Replay;

/// `v`, or an error naming the version whose log lacks `what`.
pub(crate) fn require<T>(v: Option<T>, segment: &LogSegment, what: &str) -> Result<T> {
    v.ok_or_else(|| Error::InvalidLog {
        path: format!("_delta_log (version {})", segment.version),
        message: format!("no {what} action found in the log; the table is corrupt or incomplete"),
    })
}

/// Protocol and metadata of `segment` without reconciling files: commits are read
/// newest first until both are found, then (if needed) only the protocol and metaData
/// columns of the checkpoint.
pub async fn load_protocol_and_metadata<S: Storage + ?Sized>(
    storage: &S,
    segment: &LogSegment,
) -> Result<(Protocol, Metadata)> {
    let head = load_head(storage, segment).await?;
    Ok((head.protocol, head.metadata))
}

/// What a version is without its files: protocol, metadata and the version's own
/// `commitInfo`.
#[derive(Debug, Clone)]
pub struct VersionHead {
    /// The protocol in force (checked readable).
    pub protocol: Protocol,
    /// The table metadata in force.
    pub metadata: Metadata,
    /// The `commitInfo` of the version's commit, when its commit file is in the segment.
    pub commit_info: Option<serde_json::Map<String, serde_json::Value>>,
    /// The commits (and a JSON checkpoint) read, kept up to [`KEPT_COMMIT_BYTES`] so
    /// that streaming the version's files does not fetch them again.
    pub commits_read: Prefetched,
}

/// The most bytes of commits [`VersionHead::commits_read`] keeps.
pub const KEPT_COMMIT_BYTES: usize = 8 << 20;

/// [`VersionHead`] of `segment`: its commits newest first until protocol and metadata are
/// found, then (if needed) only the `protocol` and `metaData` columns of the checkpoint —
/// never its files' columns.
pub async fn load_head<S: Storage + ?Sized>(
    storage: &S,
    segment: &LogSegment,
) -> Result<VersionHead> {
    let storage = &WithPrefetched {
        inner: storage,
        pre: &segment.prefetched,
    };
    let mut replay = Replay::new();
    let mut commit_info = None;
    let (mut commits_read, mut kept) = (Prefetched::default(), 0usize);
    for chunk in segment.commits.rchunks(FETCH_CONCURRENCY) {
        let data = read_files(storage, chunk.iter().map(|f| f.path())).await?;
        for (f, d) in chunk.iter().zip(data).rev() {
            kept = kept.saturating_add(d.len());
            if kept <= KEPT_COMMIT_BYTES {
                commits_read.insert_whole(f.path(), d.clone());
            }
            let head = parse_head_actions(f.path(), &d)?;
            if f.version == segment.version && commit_info.is_none() {
                commit_info = head.commit_info;
            }
            replay.commit(head.actions);
        }
        if replay.has_protocol_and_metadata() {
            break;
        }
    }
    if !replay.has_protocol_and_metadata()
        && let Some(cp) = &segment.checkpoint
    {
        // a JSON (v2) checkpoint is read whole anyway: kept for the files' stream too
        for part in cp.parts.iter().filter(|p| p.path.ends_with(".json")) {
            if usize::try_from(part.size).is_ok_and(|n| kept.saturating_add(n) <= KEPT_COMMIT_BYTES)
            {
                let data = storage.get(&part.path).await?;
                kept = kept.saturating_add(data.len());
                commits_read.insert_whole(&part.path, data);
            }
        }
        let storage = &WithPrefetched {
            inner: storage,
            pre: &commits_read,
        };
        replay.checkpoint(
            read_checkpoint(storage, &cp.parts, CheckpointRead::ProtocolAndMetadata).await?,
        );
    }
    let r = replay.finish();
    let protocol = require(r.protocol, segment, "protocol")?;
    check_readable(&protocol)?;
    Ok(VersionHead {
        protocol,
        metadata: require(r.metadata, segment, "metaData")?,
        commit_info,
        commits_read,
    })
}

//! The files that reconstruct one version: a checkpoint (all its parts) and the commits
//! after it.

use std::sync::Arc;

use deltalens_storage::ObjectMeta;

use super::path::{CheckpointKind, LogFile};
use super::prefetch::Prefetched;

/// A complete checkpoint: every file it consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The table version the checkpoint holds.
    pub version: u64,
    /// How the checkpoint's files are named.
    pub kind: CheckpointKind,
    /// One file, or every part of a multi-part checkpoint in part order.
    pub parts: Vec<ObjectMeta>,
}

/// The files that reconstruct one version.
#[derive(Debug, Clone)]
pub struct LogSegment {
    /// The version the segment reconstructs.
    pub version: u64,
    /// The checkpoint to start from; `None` when replay starts at commit 0.
    pub checkpoint: Option<Checkpoint>,
    /// Commit files after the checkpoint up to `version`, ascending.
    pub commits: Vec<LogFile>,
    /// Bytes of these files already fetched.
    pub prefetched: Arc<Prefetched>,
}

//! The files that reconstruct one version: a checkpoint (all its parts) and the commits
//! after it.

use std::sync::Arc;

use deltalens_storage::ObjectMeta;

use super::path::{CheckpointKind, LogFile};
use super::prefetch::Prefetched;

/// A complete checkpoint: every file it consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub version: u64,
    pub kind: CheckpointKind,
    /// One file, or every part of a multi-part checkpoint in part order.
    pub parts: Vec<ObjectMeta>,
}

/// The files that reconstruct one version.
#[derive(Debug, Clone)]
pub struct LogSegment {
    pub version: u64,
    pub checkpoint: Option<Checkpoint>,
    /// Commit files after the checkpoint up to `version`, ascending.
    pub commits: Vec<LogFile>,
    /// Bytes of these files already fetched.
    pub prefetched: Arc<Prefetched>,
}

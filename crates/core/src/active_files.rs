//! The active files of a version as a stream (PROTOCOL.md "Action Reconciliation" without
//! holding the file list): the commits after the checkpoint — few and small — are
//! replayed in memory; then the checkpoint's adds stream through a batch at a time, each
//! kept unless a newer commit names the same logical file; then the commits' own active
//! adds. Memory follows a batch and the tail, not the number of files, so totals over a
//! million files and a first page of them cost megabytes.

use deltalens_storage::Storage;

use crate::actions::{Add, StringMap, parse_actions};
use crate::checkpoint::stream_checkpoint_adds;
use crate::error::Result;
use crate::log::prefetch::WithPrefetched;
use crate::log::{LogSegment, read_files};
use crate::replay::Replay;

/// Hand every active file of `segment` to `on_file` (checkpoint files first, in checkpoint
/// order, then the newer commits' files), until it returns false.
///
/// With `keep_partition`, checkpoint adds whose partition values it refuses may be left
/// out unread (see [`stream_checkpoint_adds`]); `on_file` must still check the rest.
pub async fn for_each_active_file<S: Storage + ?Sized>(
    storage: &S,
    segment: &LogSegment,
    keep_partition: Option<&dyn Fn(&StringMap) -> bool>,
    on_file: &mut dyn FnMut(Add) -> Result<bool>,
) -> Result<()> {
    let storage = &WithPrefetched {
        inner: storage,
        pre: &segment.prefetched,
    };
    let mut tail = Replay::new();
    let data = read_files(storage, segment.commits.iter().map(|f| f.path())).await?;
    for (f, d) in segment.commits.iter().zip(data).rev() {
        tail.commit(parse_actions(f.path(), &d)?);
    }
    if let Some(cp) = &segment.checkpoint {
        let mut go_on = true;
        stream_checkpoint_adds(storage, &cp.parts, keep_partition, &mut |adds| {
            for add in adds {
                if !tail.supersedes(&add) && !on_file(add)? {
                    go_on = false;
                    return Ok(false);
                }
            }
            Ok(true)
        })
        .await?;
        if !go_on {
            return Ok(());
        }
    }
    for add in tail.take_files() {
        if !on_file(add)? {
            return Ok(());
        }
    }
    Ok(())
}

//! Finding the log: which files of `_delta_log/` reconstruct a version, and how they are
//! found — by listing, or by name where a store cannot list (plain HTTPS hosting, keys
//! without LIST). One place decides which ([`find_log`]).
//!
//! - [`path`]: log file names (commits, checkpoints of each kind, `_last_checkpoint`);
//! - [`hint`]: the `_last_checkpoint` hint and the hinted checkpoint's tail;
//! - [`listing`]: what a listing found, and the files of one version;
//! - [`probe`]: finding the log by name without listing;
//! - [`segment`]: the files that reconstruct one version;
//! - [`prefetch`]: bytes read while finding the log, kept for the replay.

pub mod hint;
pub mod listing;
pub mod path;
pub mod prefetch;
pub mod probe;
pub mod segment;

use std::sync::Arc;

use deltalens_storage::Storage;

use crate::error::{Error, Result};
use crate::limits::FETCH_CONCURRENCY;

pub use hint::{CHECKPOINT_TAIL, Hint, V2Hint, fetch_hinted, read_hint};
pub use listing::LogListing;
pub use path::{
    CheckpointKind, LAST_CHECKPOINT, LOG_DIR, LogFile, LogFileKind, SIDECAR_DIR, commit_path,
};
pub use prefetch::Prefetched;
pub use probe::Discover;
pub use segment::{Checkpoint, LogSegment};

/// The log of the table in `storage`: for [`Discover::Latest`] as few round trips as
/// possible (`_last_checkpoint` first, then at once a listing from the hinted checkpoint
/// and the checkpoint's tail), for [`Discover::All`] the whole log. A store that cannot
/// list, or refuses to, is probed by name ([`probe::discover_log`]); an empty listing is
/// checked by one GET ([`probe::unless_empty`]). A missing, corrupt or stale hint falls
/// back to listing the whole log.
pub async fn find_log<S: Storage + ?Sized>(
    storage: &S,
    location: &str,
    what: Discover,
) -> Result<LogListing> {
    if !storage.can_list() {
        return probe::discover_log(storage, location, what).await;
    }
    if what == Discover::Latest
        && let Some(listing) = from_hint(storage, location).await?
    {
        return Ok(listing);
    }
    match listing::list_log(storage).await {
        Err(Error::Storage(e)) if e.is_listing_refused() => {
            probe::discover_log(storage, location, what).await
        }
        Ok(listing) => probe::unless_empty(storage, listing, location, what).await,
        Err(e) => Err(e),
    }
}

/// The listing from the hinted checkpoint on, with the checkpoint's tail prefetched;
/// `None` without a hint or when the listing does not show the hinted checkpoint.
async fn from_hint<S: Storage + ?Sized>(storage: &S, location: &str) -> Result<Option<LogListing>> {
    let Some(hint) = read_hint(storage).await? else {
        return Ok(None);
    };
    let start_after = format!("{LOG_DIR}{:020}", hint.version);
    let (objects, hinted) = futures::join!(
        storage.list(LOG_DIR, Some(&start_after)),
        fetch_hinted(storage, &hint)
    );
    let objects = match objects {
        Err(e) if e.is_listing_refused() => {
            return probe::discover_log(storage, location, Discover::Latest)
                .await
                .map(Some);
        }
        other => other?,
    };
    let mut listing = LogListing::from_objects(objects, true);
    let Some(cp) = listing.checkpoints.get(&hint.version) else {
        return Ok(None);
    };
    // the tails only help when they are of the checkpoint the listing chose
    if let Ok(Some((hinted, pre))) = hinted
        && hinted
            .parts
            .iter()
            .map(|p| &p.path)
            .eq(cp.parts.iter().map(|p| &p.path))
    {
        listing.prefetched = Arc::new(pre);
    }
    Ok(Some(listing))
}

/// Fetch whole files concurrently (at most [`FETCH_CONCURRENCY`] at a time), in order.
pub async fn read_files<S: Storage + ?Sized>(
    storage: &S,
    paths: impl IntoIterator<Item = &str>,
) -> Result<Vec<bytes::Bytes>> {
    use futures::{StreamExt, TryStreamExt};
    futures::stream::iter(paths)
        .map(|p| storage.get(p))
        .buffered(FETCH_CONCURRENCY)
        .map_err(Error::from)
        .try_collect()
        .await
}

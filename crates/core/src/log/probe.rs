//! Finding a table's versions without listing (plain HTTPS hosting, buckets that refuse
//! LIST): `_last_checkpoint` names the checkpoint, then commit files after it are fetched
//! by name in growing batches until one is missing.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use deltalens_storage::{ObjectMeta, Storage};
use futures::{StreamExt, TryStreamExt};

use crate::checkpoint_columns::HEAD;
use crate::error::{Error, Result};
use crate::limits::{self, FETCH_CONCURRENCY};
use crate::parquet_read::prefetch_columns;

use super::hint::{CHECKPOINT_TAIL, fetch_hinted, read_hint};
use super::listing::LogListing;
use super::path::{CheckpointKind, LAST_CHECKPOINT, LOG_DIR, LogFile, commit_path};
use super::prefetch::{Prefetched, WithPrefetched};
use super::segment::Checkpoint;

async fn head<S: Storage + ?Sized>(storage: &S, path: &str) -> Result<Option<ObjectMeta>> {
    match storage.head(path).await {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn get<S: Storage + ?Sized>(storage: &S, path: &str) -> Result<Option<Bytes>> {
    match storage.get(path).await {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// What a discovery must find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discover {
    /// Only what reconstructs the latest version.
    Latest,
    /// Every version still reconstructible (for time travel and history).
    All,
}

/// The first probe batch: Spark checkpoints every 10 commits, so one batch usually
/// finds every commit after `_last_checkpoint` in a single round trip.
const FIRST_BATCH: u64 = 16;
/// The first batch where requests are budgeted ([`Storage::requests_are_budgeted`]): batches of 2,
/// 2, 4, 4, 8, 8, … cost at most the commits found plus a few, in a few more round trips.
const FIRST_BATCH_FEW_REQUESTS: u64 = 2;
const MAX_BATCH: u64 = 1024;

/// Action names a commit line may start with.
const ACTIONS: &[&str] = &[
    "add",
    "remove",
    "metaData",
    "protocol",
    "commitInfo",
    "txn",
    "cdc",
    "domainMetadata",
    "checkpointMetadata",
    "sidecar",
];

/// Whether `data` reads as a Delta commit: its first non-blank line is a JSON object whose
/// first key is an action. A host that answers every path (an HTML error page with 200, a
/// catch-all route) fails this at once instead of being probed forever.
fn is_commit(data: &[u8]) -> bool {
    let Some(line) = data
        .split(|b| *b == b'\n')
        .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
    else {
        return false;
    };
    deltalens_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
        .ok()
        .and_then(|m| m.keys().next().map(|k| ACTIONS.contains(&k.as_str())))
        .unwrap_or(false)
}

/// The error of a commit name answered with something else.
fn not_a_commit(version: u64) -> Error {
    Error::InvalidLog {
        path: commit_path(version),
        message: "the server answered with something that is not a Delta commit (its first line is not a JSON action); it may answer every path: check the table URL".into(),
    }
}

/// `listing` when it found a commit or a checkpoint. When it found nothing, one GET of
/// the first commit tells an empty location (the empty listing: no table) from a server
/// whose listing does not work: one that answers every path with the same page (an
/// S3-style listing of that page reads as empty) is named as such, and a first commit
/// that is there after all has the log found by name.
pub async fn unless_empty<S: Storage + ?Sized>(
    storage: &S,
    listing: LogListing,
    location: &str,
    what: Discover,
) -> Result<LogListing> {
    if listing.latest_version().is_some() {
        return Ok(listing);
    }
    match storage.get(&commit_path(0)).await {
        Ok(d) if is_commit(&d) => discover_log(storage, location, what).await,
        Ok(_) => Err(not_a_commit(0)),
        // absent (or unreadable): the listing's answer stands
        Err(_) => Ok(listing),
    }
}

/// The consecutive commits from `from` on, fetched whole: batches of 16, 32, 64, ...
/// (2, 2, 4, 4, ... where requests are budgeted) requested at once, until a commit is
/// missing. Each body must read as a commit, and at most
/// [`limits::MAX_UNLISTED_VERSIONS`] are probed.
async fn probe_commits<S: Storage + ?Sized>(
    storage: &S,
    from: u64,
) -> Result<BTreeMap<u64, Bytes>> {
    let mut found = BTreeMap::new();
    let few = storage.requests_are_budgeted();
    let first = if few {
        FIRST_BATCH_FEW_REQUESTS
    } else {
        FIRST_BATCH
    };
    let (mut next, mut batch, mut rounds) = (from, first, 0u32);
    loop {
        limits::check(
            "MAX_UNLISTED_VERSIONS",
            "the number of commits found by name",
            found.len() as u64 + batch,
            limits::MAX_UNLISTED_VERSIONS,
            &commit_path(next),
        )?;
        let got: Vec<Option<Bytes>> = futures::stream::iter(next..next + batch)
            .map(|v| async move { get(storage, &commit_path(v)).await })
            .buffered(FETCH_CONCURRENCY)
            .try_collect()
            .await?;
        for (v, data) in (next..).zip(got) {
            match data {
                Some(d) if is_commit(&d) => {
                    found.insert(v, d);
                }
                Some(_) => return Err(not_a_commit(v)),
                None => return Ok(found),
            }
        }
        next += batch;
        rounds += 1;
        if !(few && rounds % 2 == 1) {
            batch = (batch * 2).min(MAX_BATCH);
        }
    }
}

fn unknown(path: String) -> ObjectMeta {
    ObjectMeta {
        path,
        size: 0,
        last_modified_ms: None,
    }
}

async fn commit_exists<S: Storage + ?Sized>(storage: &S, v: u64) -> Result<bool> {
    Ok(head(storage, &commit_path(v)).await?.is_some())
}

/// The earliest commit of the run that ends at `existing`, when commit `missing` (below
/// it) does not exist: a binary search by HEAD, `log2(existing - missing)` requests. A
/// log is cleaned up from its oldest commit on, so the commits left are consecutive.
async fn earliest_commit<S: Storage + ?Sized>(
    storage: &S,
    missing: u64,
    existing: u64,
) -> Result<u64> {
    let (mut lo, mut hi) = (missing, existing);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if commit_exists(storage, mid).await? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// Without a `_last_checkpoint` and a first commit: probe 1, 2, 4, ... for any commit,
/// binary-search down to the earliest one, and take the classic checkpoint there.
async fn earliest_checkpoint<S: Storage + ?Sized>(storage: &S) -> Result<Option<Checkpoint>> {
    let (mut missing, mut probe) = (0u64, 1u64);
    let found = loop {
        if commit_exists(storage, probe).await? {
            break probe;
        }
        missing = probe;
        if probe >= 1 << 40 {
            return Ok(None);
        }
        probe *= 2;
    };
    let hi = earliest_commit(storage, missing, found).await?;
    let path = format!("{LOG_DIR}{hi:020}.checkpoint.parquet");
    Ok(head(storage, &path).await?.map(|m| Checkpoint {
        version: hi,
        kind: CheckpointKind::Classic,
        parts: vec![m],
    }))
}

/// The most bytes of a checkpoint's `protocol` and `metaData` columns read ahead.
const MAX_HEAD_PREFETCH: u64 = 1 << 20;

/// Read the `protocol` and `metaData` column chunks of a large Parquet checkpoint (whose
/// footer `tails` holds) into `tails` while the commits after it are probed: the
/// version's head then needs no request after the probing ends — one round trip fewer
/// before a schema shows.
async fn prefetch_head<S: Storage + ?Sized>(
    storage: &S,
    cp: &Checkpoint,
    tails: &mut Prefetched,
) -> Result<()> {
    for part in cp.parts.iter().filter(|p| p.path.ends_with(".parquet")) {
        if part.size <= CHECKPOINT_TAIL {
            continue; // the tail is the whole file
        }
        let with_tail = WithPrefetched {
            inner: storage,
            pre: &*tails,
        };
        let chunks =
            prefetch_columns(&with_tail, &part.path, part.size, HEAD, MAX_HEAD_PREFETCH).await?;
        for (start, data) in chunks {
            tails.insert_range(&part.path, start, data);
        }
    }
    Ok(())
}

/// A [`LogListing`] built without listing: `_last_checkpoint`, then at once the hinted
/// checkpoint's tail and a batch of the commits after it — two round trips for a
/// checkpointed table with few commits since its checkpoint. Commits found this way carry
/// no modification time (history uses `commitInfo.timestamp`); their bodies are kept for
/// replay.
pub async fn discover_log<S: Storage + ?Sized>(
    storage: &S,
    location: &str,
    what: Discover,
) -> Result<LogListing> {
    let first = async {
        match what {
            Discover::All => head(storage, &commit_path(0)).await,
            Discover::Latest => Ok(None),
        }
    };
    let (hint, first_commit) = futures::join!(read_hint(storage), first);
    let (hint, first_commit) = (hint?, first_commit?);
    let mut pre = Prefetched::default();
    let mut checkpoint = None;
    let mut found = BTreeMap::new();
    // the earliest commit, when the search for a checkpoint found it
    let mut earliest = None;
    if let Some(h) = &hint {
        h.part_paths()?; // the hint's version and parts are within limits
        let hinted = async {
            let mut hinted = fetch_hinted(storage, h).await?;
            if let Some((cp, tails)) = &mut hinted {
                prefetch_head(storage, cp, tails).await?;
            }
            Ok::<_, Error>(hinted)
        };
        let (hinted, probed) = futures::join!(hinted, probe_commits(storage, h.version + 1));
        if let Some((cp, tails)) = hinted? {
            checkpoint = Some(cp);
            pre = tails;
            found = probed?;
        }
    }
    if checkpoint.is_none() {
        // no usable hint: the log starts at commit 0, or (cleaned up) at the checkpoint
        // covering the earliest commit left
        found = probe_commits(storage, 0).await?;
        if found.is_empty() {
            checkpoint = earliest_checkpoint(storage).await?;
            match &checkpoint {
                Some(c) => {
                    earliest = Some(c.version);
                    found = probe_commits(storage, c.version + 1).await?;
                }
                None => {
                    return Err(Error::NotATable {
                        location: format!(
                            "{location} (it cannot be listed, and neither _delta_log/_last_checkpoint nor the first commit was found)"
                        ),
                    });
                }
            }
        }
    }
    let cp_version = checkpoint.as_ref().map(|c| c.version);
    let latest = found
        .keys()
        .next_back()
        .copied()
        .max(cp_version)
        .unwrap_or(0);
    // commits before the checkpoint are assumed present from the earliest one on (a
    // missing one fails when read): commit 0 when it exists; when it is gone (cleaned up),
    // for history and time travel the earliest left, found by a binary search from the
    // checkpoint's own commit down
    let from = match (cp_version, &first_commit, what) {
        (_, Some(_), _) | (None, _, _) => 0,
        (Some(c), None, Discover::Latest) => c + 1,
        (Some(c), None, Discover::All) => match earliest {
            Some(e) => e,
            None if c > 0 && commit_exists(storage, c).await? => {
                earliest_commit(storage, 0, c).await?
            }
            None => c + 1,
        },
    };
    limits::check(
        "MAX_UNLISTED_VERSIONS",
        "the number of versions to reconstruct without listing",
        (latest + 1).saturating_sub(from),
        limits::MAX_UNLISTED_VERSIONS,
        LAST_CHECKPOINT,
    )?;
    let mut commits = BTreeMap::new();
    for v in from..=latest {
        let path = commit_path(v);
        let meta = match (found.get(&v), &first_commit, v) {
            (_, Some(m), 0) => m.clone(),
            (Some(d), _, _) => ObjectMeta {
                path: path.clone(),
                size: d.len() as u64,
                last_modified_ms: None,
            },
            _ => unknown(path.clone()),
        };
        if let Some(d) = found.remove(&v) {
            pre.insert_whole(&path, d);
        }
        if let Some(f) = LogFile::parse(meta) {
            commits.insert(v, f);
        }
    }
    let checkpoints = checkpoint.into_iter().map(|c| (c.version, c)).collect();
    Ok(LogListing {
        commits,
        checkpoints,
        partial: true,
        prefetched: Arc::new(pre),
    })
}

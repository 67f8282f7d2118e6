//! Finding a table's versions without listing (plain HTTPS hosting, buckets that refuse
//! LIST): `_last_checkpoint` names the checkpoint, then commit files are probed by name —
//! exponentially, then by binary search — for the latest version.

use deltalens_storage::{ObjectMeta, Storage};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::log_path::{
    CheckpointKind, LAST_CHECKPOINT, LOG_DIR, LogFile, LogFileKind, commit_path,
};
use crate::log_segment::{Checkpoint, LogListing};

#[derive(Deserialize)]
struct V2Hint {
    path: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Hint {
    version: u64,
    parts: Option<u32>,
    v2_checkpoint: Option<V2Hint>,
}

async fn head<S: Storage + ?Sized>(storage: &S, path: &str) -> Result<Option<ObjectMeta>> {
    match storage.head(path).await {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn hinted_checkpoint<S: Storage + ?Sized>(storage: &S) -> Result<Option<Checkpoint>> {
    let data = match storage.get(LAST_CHECKPOINT).await {
        Ok(d) => d,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let Ok(hint) = serde_json::from_slice::<Hint>(&data) else {
        return Ok(None);
    };
    let v = hint.version;
    let names: Vec<String> = match (&hint.v2_checkpoint, hint.parts) {
        (Some(v2), _) => vec![v2.path.rsplit('/').next().unwrap_or(&v2.path).to_string()],
        (None, Some(p)) if p > 1 => (1..=p)
            .map(|i| format!("{v:020}.checkpoint.{i:010}.{p:010}.parquet"))
            .collect(),
        _ => vec![format!("{v:020}.checkpoint.parquet")],
    };
    let mut parts = Vec::with_capacity(names.len());
    for n in &names {
        match head(storage, &format!("{LOG_DIR}{n}")).await? {
            Some(m) => parts.push(m),
            None => return Ok(None), // a stale or partial hint: not usable
        }
    }
    let kind = match LogFile::parse(parts[0].clone()).map(|f| f.kind) {
        Some(LogFileKind::Checkpoint(CheckpointKind::MultiPart { parts: p, .. })) => {
            CheckpointKind::MultiPart { part: 1, parts: p }
        }
        Some(LogFileKind::Checkpoint(k)) => k,
        _ => return Ok(None),
    };
    Ok(Some(Checkpoint {
        version: v,
        kind,
        parts,
    }))
}

fn unknown(path: String) -> ObjectMeta {
    ObjectMeta {
        path,
        size: 0,
        last_modified_ms: None,
    }
}

/// The latest version `>= known` whose commit exists, given that `known`'s does (or is
/// covered by a checkpoint): probe known+1, +2, +4, ... then binary-search the gap.
async fn latest_commit<S: Storage + ?Sized>(storage: &S, known: u64) -> Result<u64> {
    let exists = |v: u64| async move { head(storage, &commit_path(v)).await.map(|m| m.is_some()) };
    let (mut lo, mut step) = (known, 1u64);
    let hi = loop {
        let probe = lo + step;
        if exists(probe).await? {
            lo = probe;
            step = step.saturating_mul(2);
        } else {
            break probe;
        }
    };
    // lo exists (or is the checkpoint), hi does not
    let (mut lo, mut hi) = (lo, hi);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if exists(mid).await? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// Without a `_last_checkpoint` and a first commit: probe 1, 2, 4, ... for any commit,
/// binary-search down to the earliest one, and take the classic checkpoint there.
async fn earliest_checkpoint<S: Storage + ?Sized>(storage: &S) -> Result<Option<Checkpoint>> {
    let exists = |v: u64| async move { head(storage, &commit_path(v)).await.map(|m| m.is_some()) };
    let (mut missing, mut probe) = (0u64, 1u64);
    let found = loop {
        if exists(probe).await? {
            break probe;
        }
        missing = probe;
        if probe >= 1 << 40 {
            return Ok(None);
        }
        probe *= 2;
    };
    let (mut lo, mut hi) = (missing, found);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if exists(mid).await? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let path = format!("{LOG_DIR}{hi:020}.checkpoint.parquet");
    Ok(head(storage, &path).await?.map(|m| Checkpoint {
        version: hi,
        kind: CheckpointKind::Classic,
        parts: vec![m],
    }))
}

/// A [`LogListing`] built without listing. Commits found this way carry no size or
/// modification time (they are read whole; history uses `commitInfo.timestamp`).
pub async fn discover_log<S: Storage + ?Sized>(storage: &S, location: &str) -> Result<LogListing> {
    let mut checkpoint = hinted_checkpoint(storage).await?;
    let first_commit = head(storage, &commit_path(0)).await?;
    if checkpoint.is_none() && first_commit.is_none() {
        // cleaned-up log without a hint: find the earliest commit left, then the
        // checkpoint that must cover it
        checkpoint = earliest_checkpoint(storage).await?;
    }
    let start = match (&checkpoint, &first_commit) {
        (Some(c), _) => c.version,
        (None, Some(_)) => 0,
        (None, None) => {
            return Err(Error::NotATable {
                location: format!(
                    "{location} (it cannot be listed, and neither _delta_log/_last_checkpoint nor the first commit was found)"
                ),
            });
        }
    };
    let latest = latest_commit(storage, start).await?;
    let mut commits = std::collections::BTreeMap::new();
    // commits from 0 are assumed present when the first one is (a missing one fails when read)
    let from = if first_commit.is_some() { 0 } else { start + 1 };
    for v in from..=latest {
        let meta = match (&first_commit, v) {
            (Some(m), 0) => m.clone(),
            _ => unknown(commit_path(v)),
        };
        if let Some(f) = LogFile::parse(meta) {
            commits.insert(v, f);
        }
    }
    if checkpoint.as_ref().is_some_and(|c| c.version == latest) {
        // the checkpoint's own commit may be gone; nothing newer exists
        commits.retain(|v, _| *v <= latest);
    }
    let checkpoints = checkpoint.into_iter().map(|c| (c.version, c)).collect();
    Ok(LogListing {
        commits,
        checkpoints,
        partial: true,
    })
}

//! A Delta table at a location: the entry point of the core.

use deltalens_storage::DynStorage;

use crate::error::Result;
use crate::history::{HistoryEntry, read_history};
use crate::log_segment::{LogListing, list_log, list_log_from_hint};
use crate::snapshot::{Snapshot, load_protocol_and_metadata};
use crate::time_travel::{ict_settings, version_at_timestamp};

/// Which version of a table to read (Spark's `VERSION AS OF` / `TIMESTAMP AS OF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionSpec {
    #[default]
    Latest,
    Version(u64),
    /// Milliseconds since the epoch, UTC.
    Timestamp(i64),
}

/// A Delta table reached through a [`deltalens_storage::Storage`].
#[derive(Debug, Clone)]
pub struct Table {
    storage: DynStorage,
    location: String,
}

impl Table {
    /// `location` is only used in messages.
    pub fn new(storage: DynStorage, location: impl Into<String>) -> Self {
        Table {
            storage,
            location: location.into(),
        }
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    pub fn storage(&self) -> &DynStorage {
        &self.storage
    }

    /// List the whole `_delta_log`.
    pub async fn listing(&self) -> Result<LogListing> {
        list_log(self.storage.as_ref()).await
    }

    /// The snapshot at `spec`.
    pub async fn snapshot(&self, spec: VersionSpec) -> Result<Snapshot> {
        let storage = self.storage.as_ref();
        let (listing, version) = match spec {
            VersionSpec::Latest => (list_log_from_hint(storage).await?, None),
            VersionSpec::Version(v) => (list_log(storage).await?, Some(v)),
            VersionSpec::Timestamp(ts) => {
                let listing = list_log(storage).await?;
                let v = self.version_at(&listing, ts).await?;
                (listing, Some(v))
            }
        };
        let segment = listing.segment(version, &self.location)?;
        Snapshot::load(storage, &segment).await
    }

    /// The version that `TIMESTAMP AS OF ts_ms` reads.
    pub async fn version_at_timestamp(&self, ts_ms: i64) -> Result<u64> {
        let listing = list_log(self.storage.as_ref()).await?;
        self.version_at(&listing, ts_ms).await
    }

    async fn version_at(&self, listing: &LogListing, ts_ms: i64) -> Result<u64> {
        let storage = self.storage.as_ref();
        let latest = listing.segment(None, &self.location)?;
        let (protocol, metadata) = load_protocol_and_metadata(storage, &latest).await?;
        version_at_timestamp(storage, listing, ict_settings(&protocol, &metadata), ts_ms).await
    }

    /// Commit history, newest first.
    pub async fn history(&self, limit: Option<usize>) -> Result<Vec<HistoryEntry>> {
        let storage = self.storage.as_ref();
        let listing = list_log(storage).await?;
        if listing.latest_version().is_none() {
            listing.segment(None, &self.location)?;
        }
        read_history(storage, &listing, limit).await
    }
}

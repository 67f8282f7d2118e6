//! What the page and the query module's Web Worker say to each other, as JSON: a
//! [`Request`] in, an [`Answer`] out. One file, compiled into both (the page includes it
//! with `#[path]`: the page must not link the query module's crates).

use deltalens_fetch_storage::BrowserOptions;
use serde::{Deserialize, Serialize};

/// Rows of a result the page shows (and charts); the whole result is downloadable.
pub const SHOWN_ROWS: usize = 1_000;

/// The budgets of one query in the tab: each stops the query with an error that names it.
/// They are the edge worker's kinds of budget (`DELTALENS_MAX_*`), sized for a tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budgets {
    /// Rows the result may hold.
    pub max_rows: u64,
    /// Rows held at once to group, aggregate or sort.
    pub max_rows_buffered: u64,
    /// Bytes of column data decoded.
    pub max_decoded_bytes: u64,
    /// Bytes read from storage.
    pub max_bytes: u64,
    /// Storage requests.
    pub max_requests: u64,
    /// Wall time, in milliseconds.
    pub max_millis: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_rows: 100_000,
            max_rows_buffered: 1_000_000,
            max_decoded_bytes: 4 << 30,
            max_bytes: 4 << 30,
            max_requests: 100_000,
            max_millis: 300_000,
        }
    }
}

/// Where the table is and how to reach it: [`BrowserOptions`] as data (its secrets go to
/// the worker the page started from its own origin, and from there only where
/// `deltalens-fetch-storage` binds them, as in the page).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageOptions {
    pub s3_endpoint: Option<String>,
    pub s3_region: Option<String>,
    pub s3_access_key_id: Option<String>,
    pub s3_secret_access_key: Option<String>,
    pub s3_session_token: Option<String>,
    pub s3_virtual_hosted: bool,
    pub azure_sas: Option<String>,
    pub azure_endpoint: Option<String>,
    pub azure_account: Option<String>,
    pub relay: Option<String>,
    pub relay_token: Option<String>,
}

impl std::fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the secrets never in a message or a log
        std::fmt::Debug::fmt(&BrowserOptions::from(self.clone()), f)
    }
}

impl From<&BrowserOptions> for StorageOptions {
    fn from(o: &BrowserOptions) -> Self {
        StorageOptions {
            s3_endpoint: o.s3_endpoint.clone(),
            s3_region: o.s3_region.clone(),
            s3_access_key_id: o.s3_access_key_id.clone(),
            s3_secret_access_key: o.s3_secret_access_key.clone(),
            s3_session_token: o.s3_session_token.clone(),
            s3_virtual_hosted: o.s3_virtual_hosted,
            azure_sas: o.azure_sas.clone(),
            azure_endpoint: o.azure_endpoint.clone(),
            azure_account: o.azure_account.clone(),
            relay: o.relay.clone(),
            relay_token: o.relay_token.clone(),
        }
    }
}

impl From<StorageOptions> for BrowserOptions {
    fn from(o: StorageOptions) -> Self {
        BrowserOptions {
            s3_endpoint: o.s3_endpoint,
            s3_region: o.s3_region,
            s3_access_key_id: o.s3_access_key_id,
            s3_secret_access_key: o.s3_secret_access_key,
            s3_session_token: o.s3_session_token,
            s3_virtual_hosted: o.s3_virtual_hosted,
            azure_sas: o.azure_sas,
            azure_endpoint: o.azure_endpoint,
            azure_account: o.azure_account,
            relay: o.relay,
            relay_token: o.relay_token,
        }
    }
}

/// One query on the open table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The open table's URL: the SQL must name it.
    pub url: String,
    /// How the page reaches it.
    pub storage: StorageOptions,
    /// The query, in the SQL subset of `deltalens query`.
    pub sql: String,
    /// The version on screen: read unless the SQL says `VERSION AS OF` or
    /// `TIMESTAMP AS OF`; `None` for the latest.
    pub version: Option<u64>,
    pub budgets: Budgets,
    /// Workers that may read it in splits (the page's `navigator.hardwareConcurrency`,
    /// capped at [`MAX_WORKERS`]); 1 reads it in the query worker alone.
    pub workers: u32,
}

/// The most workers one query is read by.
pub const MAX_WORKERS: u32 = 8;

/// A column of the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    /// Its Arrow type, as text.
    pub data_type: String,
    /// Its values as numbers (of the rows shown) when it is numeric: what a chart draws.
    pub numbers: Option<Vec<Option<f64>>>,
}

/// A query's result as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub columns: Vec<Column>,
    /// The first [`SHOWN_ROWS`] rows as text cells, formatted as every front end formats
    /// them (`deltalens_present::cell`); nulls are `∅`.
    pub rows: Vec<Vec<String>>,
    /// The rows of the whole result.
    pub total_rows: u64,
    /// The version read (the end of the range for `table_changes`).
    pub version: u64,
    /// Whether the query groups (`GROUP BY`): the page offers a chart of it.
    pub grouped: bool,
    /// Storage requests and bytes the query made (the query worker's: the plan, or the
    /// whole read when it read alone).
    pub requests: u64,
    pub bytes: u64,
    /// The splits it was read in (1: by the query worker alone).
    pub splits: u32,
    /// How long each worker of the pool was busy with its splits, in milliseconds (empty
    /// when read alone).
    pub busy_ms: Vec<u64>,
}

/// What a running query has read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub requests: u64,
    pub bytes: u64,
}

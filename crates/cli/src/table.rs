//! Opening a table: the one way every subcommand reads one, and the one place the
//! `--io-log` and `--io-stats` report on its requests is printed.

use std::sync::Arc;

use deltalens_core::Table;
use deltalens_core::VersionSpec;
use deltalens_object_store::{ObjectStoreStorage, SharedTable, open_shared};
use deltalens_storage::{CountingStorage, DynStorage};

use crate::error::CliError;

/// What to print to stderr about the requests a command made.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoReport {
    /// One line: requests by kind and bytes read (`--io-stats`).
    pub stats: bool,
    /// One line per request (`--io-log`).
    pub log: bool,
    /// Show the requests and bytes read while the command runs (off with `--quiet`, and
    /// for commands that draw a progress line of their own).
    pub watch: bool,
}

/// A table and the counter of its requests (for the report, progress and `bench`).
pub struct Opened {
    pub table: Table,
    pub counter: Arc<CountingStorage<DynStorage>>,
    /// The shared table, when the location is one: its server says which version a
    /// timestamp reads (its log, with the commit times, is not shared).
    pub shared: Option<Arc<SharedTable>>,
}

impl Opened {
    /// The version `spec` names (`--version`, `--timestamp`, or the latest), a shared
    /// table's timestamp turned into a version by its server.
    pub async fn at(&self, spec: VersionSpec) -> Result<VersionSpec, CliError> {
        match (spec, &self.shared) {
            (VersionSpec::Timestamp(ts), Some(s)) => {
                Ok(VersionSpec::Version(s.version_at_timestamp(ts).await?))
            }
            (spec, _) => Ok(spec),
        }
    }

    /// The version `TIMESTAMP AS OF ts_ms` reads.
    pub async fn version_at_timestamp(&self, ts_ms: i64) -> Result<u64, CliError> {
        Ok(match &self.shared {
            Some(s) => s.version_at_timestamp(ts_ms).await?,
            None => self.table.version_at_timestamp(ts_ms).await?,
        })
    }

    /// The first version committed at or after `ts_ms`.
    pub async fn first_version_at_or_after(&self, ts_ms: i64) -> Result<u64, CliError> {
        Ok(match &self.shared {
            Some(s) => s.first_version_at_or_after(ts_ms).await?,
            None => self.table.first_version_at_or_after(ts_ms).await?,
        })
    }
}

/// Opens the table at `location`, runs `work` on it, then prints the report asked for —
/// whether `work` succeeded or not (nothing is printed when the table cannot be opened).
pub async fn with_table<T>(
    location: &str,
    options: &[(String, String)],
    io: IoReport,
    work: impl AsyncFnOnce(&Opened) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let (store, shared) = open_storage(location, options).await?;
    let counter = CountingStorage::with_clock(store, clock_ms);
    // a record per request only for -vv: a scan of a million files makes two million
    let counter = Arc::new(if io.log {
        counter
    } else {
        counter.without_records()
    });
    let opened = Opened {
        table: Table::new(counter.clone(), location),
        counter,
        shared,
    };
    let watch = crate::progress::Watch::start(opened.counter.clone(), !io.watch);
    let result = work(&opened).await;
    drop(watch);
    io.print(&opened.counter);
    result
}

/// The storage of `location`: a store URL or local path, a `uc://` name (resolved by the
/// catalog, with vended credentials), or a shared table, `<profile file>#share.schema.table`
/// (as the sharing server answers it: `deltalens_object_store::open_shared`).
async fn open_storage(
    location: &str,
    options: &[(String, String)],
) -> Result<(DynStorage, Option<Arc<SharedTable>>), CliError> {
    if let Some(shared) = open_shared(location).await {
        let shared = Arc::new(shared?);
        return Ok((shared.clone(), Some(shared)));
    }
    let (store, _vending) = ObjectStoreStorage::open_resolved(location, options).await?;
    Ok((Arc::new(store), None))
}

/// Milliseconds since the process first asked (the request log's times).
fn clock_ms() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1000.0
}

impl IoReport {
    fn print(self, counter: &CountingStorage<DynStorage>) {
        if self.log {
            for r in counter.records() {
                let range = r.range.map(|r| r.to_string()).unwrap_or_default();
                let path = deltalens_present::text::terminal_safe(&r.path, false);
                let ms = r.end_us.saturating_sub(r.start_us) as f64 / 1000.0;
                let ok = if r.ok { "ok" } else { "failed" };
                eprintln!(
                    "io: {:?} {path} {range} -> {ok}, {} bytes, {ms:.1} ms",
                    r.kind, r.bytes
                );
            }
        }
        if self.stats {
            let s = counter.stats();
            eprintln!(
                "io: {} requests ({} list, {} get, {} head), {} bytes read",
                s.requests, s.lists, s.gets, s.heads, s.bytes
            );
        }
    }
}

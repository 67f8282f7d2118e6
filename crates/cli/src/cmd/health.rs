//! `deltalens health`: is this table in good shape? Small files, partition skew, deletion
//! vectors, statistics, checkpoints, maintenance and tombstones, each with its figures,
//! what it means and the usual remedy (`deltalens_present::health`, the same report as
//! `GET /v1/health` and the explorer's).

use deltalens_present::health::HISTORY_COMMITS;
use deltalens_present::{Health, HealthSeries};

use super::to_json;
use crate::error::CliError;
use crate::output::Doc;
use crate::table::with_table;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub snapshot: crate::args::SnapshotArgs,
    /// Measure ages and the tombstone retention window from this time instead of the
    /// clock (ISO-8601, no zone = UTC, or a date): a report that does not change.
    #[arg(long, value_name = "T")]
    pub now: Option<String>,
    /// Instead of one version, the health at N versions spread over the newest
    /// commits of history (up to the version asked for): files, size, the shares of small
    /// files, deleted rows and files without statistics, skew, log tail and tombstones
    /// per version. Each point reads its version in full; at most 32.
    #[arg(long, value_name = "N")]
    pub series: Option<usize>,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.snapshot.table;
    let now_ms = match &args.now {
        Some(n) => deltalens_core::time_travel::parse_timestamp(n)?,
        None => clock_ms(),
    };
    let at = args.snapshot.at.spec()?;
    with_table(&t.location, &t.options, t.io(), async |o| {
        let at = o.at(at).await?;
        if let Some(points) = args.series {
            let newest = o.table.version_info(at).await?.version;
            let history = o.table.history(Some(HISTORY_COMMITS)).await?;
            let s = HealthSeries::read(&o.table, &history, Some(newest), points, now_ms).await?;
            return if t.json {
                to_json(&s)
            } else {
                Ok(Doc::Text(s.text()))
            };
        }
        let h = Health::of_table(&o.table, at, now_ms).await?;
        if t.json {
            to_json(&h)
        } else {
            Ok(Doc::Text(h.text()))
        }
    })
    .await
}

/// Milliseconds since the epoch by the system clock (0 before 1970).
fn clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

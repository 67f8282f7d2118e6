//! `deltalens plan`: a scan cut into splits for many workers — the files the filter can
//! match, grouped by bytes, each split executable on its own (`deltalens scan T --split
//! FILE` reads one without the log).

use deltalens_core::split::{DEFAULT_MAX_SPLITS, DEFAULT_TARGET_BYTES};
use deltalens_core::{PlanOptions, ScanPlan};
use deltalens_present::text;

use super::to_json;
use crate::args::{AtArgs, TableArgs, positive};
use crate::error::CliError;
use crate::output::Doc;
use crate::table::with_table;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    #[command(flatten)]
    pub at: AtArgs,
    /// Only files that can hold rows matching this filter (partition values and file
    /// statistics), e.g. "event_date = '2024-05-01' AND price > 10".
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Columns the splits will read (checked against the schema now).
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
    /// Bytes of data files per split (Spark's maxPartitionBytes).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_TARGET_BYTES, value_parser = positive_u64)]
    pub target_bytes: u64,
    /// The most splits; a larger table gets larger splits.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SPLITS, value_parser = positive)]
    pub max_splits: usize,
    /// Also write the plan to FILE as an Arrow IPC stream: a row per file with its split,
    /// path, size, partition values, statistics and add action (pyarrow, DuckDB and
    /// Polars read it as a table of scan tasks).
    #[arg(long, value_name = "FILE")]
    pub ipc: Option<std::path::PathBuf>,
}

fn positive_u64(s: &str) -> Result<u64, CliError> {
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(CliError::Argument {
            expected: "a positive number of bytes",
            given: s.to_string(),
        }),
    }
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.table;
    let filter = match &args.filter {
        Some(f) => Some(deltalens_core::predicate::Predicate::parse(f)?),
        None => None,
    };
    let scan = deltalens_core::scan::ScanOptions {
        columns: args.columns.clone(),
        filter,
        ..Default::default()
    };
    let options = PlanOptions {
        target_bytes: args.target_bytes,
        max_splits: args.max_splits,
        splits: None,
    };
    with_table(&t.location, &t.options, t.io(), async |o| {
        let v = o.table.version_info(o.at(args.at.spec()?).await?).await?;
        let plan = v.plan(&scan, &options).await?;
        if let Some(path) = &args.ipc {
            let bytes = deltalens_api::plan_ipc::plan_to_ipc(&plan)?;
            std::fs::write(path, bytes).map_err(|source| CliError::CreateOutput {
                path: path.clone(),
                source,
            })?;
        }
        if t.json {
            to_json(&plan)
        } else {
            Ok(Doc::Text(summary(&plan)))
        }
    })
    .await
}

/// The plan as an aligned table, a split a line, and its totals.
fn summary(plan: &ScanPlan) -> String {
    let rows: Vec<Vec<String>> = plan
        .splits
        .iter()
        .map(|s| {
            vec![
                s.id.to_string(),
                s.files.len().to_string(),
                s.bytes.to_string(),
                s.estimated_rows.map_or("?".into(), |r| r.to_string()),
            ]
        })
        .collect();
    let mut out = text::table(&["split", "files", "bytes", "estimated rows"], &rows);
    out.push_str(&format!(
        "{} splits of {} files, {} bytes, at version {} (target {} bytes a split); --json prints each split whole, for `deltalens scan --split FILE`\n",
        plan.splits.len(),
        plan.files,
        plan.bytes,
        plan.version,
        plan.target_bytes
    ));
    out
}

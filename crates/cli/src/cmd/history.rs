//! `deltalens history`: commit history, newest first (Trino's `$history`).

use deltalens_core::Table;

use super::to_json;
use crate::args::TableArgs;
use crate::error::CliError;
use crate::output::Doc;
use crate::table::with_table;
use deltalens_present::{text, value};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    /// Show only the newest N commits.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        history(&o.table, args.limit, t.json).await
    })
    .await
}

async fn history(table: &Table, limit: Option<usize>, json: bool) -> Result<Doc, CliError> {
    let h = table.history(limit).await?;
    if json {
        return to_json(&h);
    }
    let rows: Vec<Vec<String>> = h
        .iter()
        .map(|e| {
            vec![
                e.version.to_string(),
                value::timestamp(e.in_commit_timestamp.or(e.timestamp)),
                e.operation.clone().unwrap_or_default(),
                e.user_name.clone().unwrap_or_default(),
                e.read_version.map(|v| v.to_string()).unwrap_or_default(),
                e.is_blind_append.map(|v| v.to_string()).unwrap_or_default(),
                e.operation_parameters
                    .as_ref()
                    .map(value::cell)
                    .unwrap_or_default(),
            ]
        })
        .collect();
    Ok(Doc::Text(text::table(
        &[
            "version",
            "timestamp",
            "operation",
            "user",
            "read_version",
            "blind_append",
            "parameters",
        ],
        &rows,
    )))
}

//! `deltalens history`: commit history, newest first (Trino's `$history`); with
//! `--follow`, oldest first and on as new commits land (`crate::follow`).

use deltalens_core::history::read_history;
use deltalens_core::{HistoryEntry, Table};

use super::to_json;
use crate::args::TableArgs;
use crate::error::CliError;
use crate::follow::{FollowArgs, Polled, Stop, Tail, io_report, newest_commit, poll_until_stopped};
use crate::output::{Doc, Kind, Output, Stream};
use crate::table::with_table;
use deltalens_present::text::TableStream;
use deltalens_present::{text, value};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    /// Show only the newest N commits (with --follow: before the new ones; default 10).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[command(flatten)]
    pub follow: FollowArgs,
}

/// Commits with --follow shows before the new ones, unless --limit says.
const FOLLOW_LIMIT: usize = 10;

const HEADERS: [&str; 7] = [
    "version",
    "timestamp",
    "operation",
    "user",
    "read_version",
    "blind_append",
    "parameters",
];

pub async fn run(args: Args, out: &Output) -> Result<Option<Doc>, CliError> {
    let t = &args.table;
    let io = io_report(&args.follow, t)?;
    with_table(&t.location, &t.options, io, async |o| {
        if args.follow.follow {
            let limit = args.limit.unwrap_or(FOLLOW_LIMIT);
            return follow(&o.table, limit, &args, out).await.map(|()| None);
        }
        history(&o.table, args.limit, t.json).await.map(Some)
    })
    .await
}

async fn history(table: &Table, limit: Option<usize>, json: bool) -> Result<Doc, CliError> {
    let h = table.history(limit).await?;
    if json {
        return to_json(&h);
    }
    let rows: Vec<Vec<String>> = h.iter().map(text_row).collect();
    Ok(Doc::Text(text::table(&HEADERS, &rows)))
}

fn text_row(e: &HistoryEntry) -> Vec<String> {
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
}

/// The newest `limit` commits oldest first, then each new one as it lands: rows of one
/// aligned table (its columns sized by the first commits), or with `--json` one JSON
/// object per line.
async fn follow(table: &Table, limit: usize, args: &Args, out: &Output) -> Result<(), CliError> {
    let stop = Stop::on_signals(Some(*out));
    let json = args.table.json;
    let mut first = table.history(Some(limit)).await?;
    first.reverse();
    let last = match first.last() {
        Some(e) => e.version,
        None => newest_commit(table).await?,
    };
    let mut tail = Tail::from(last.saturating_add(1)).patient();
    let mut printer = Printer {
        stream: out.stream(if json { Kind::Json } else { Kind::Text }),
        table: TableStream::new(&HEADERS).with_block(first.len().max(1)),
        json,
    };
    printer.print(&first)?;
    poll_until_stopped(&stop, args.follow.interval, async || {
        let run = tail.poll(table).await?;
        let Some(&newest) = run.commits.keys().next_back() else {
            return Ok(Polled::More);
        };
        let mut new = read_history(table.storage().as_ref(), &run, None)
            .await
            .map_err(CliError::from)?;
        new.reverse();
        printer.print(&new)?;
        tail.handed_on(newest);
        Ok(Polled::More)
    })
    .await?;
    if !json {
        printer.stream.write(&printer.table.finish())?;
    }
    printer.stream.finish()
}

/// Commits written as they come: table rows or JSON lines.
struct Printer {
    stream: Stream,
    table: TableStream,
    json: bool,
}

impl Printer {
    fn print(&mut self, entries: &[HistoryEntry]) -> Result<(), CliError> {
        for e in entries {
            let text = if self.json {
                let mut line = serde_json::to_string(e)?;
                line.push('\n');
                line
            } else {
                self.table.push(text_row(e))
            };
            self.stream.write(&text)?;
        }
        self.stream.flush()
    }
}

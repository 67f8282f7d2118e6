//! `deltalens query SQL`: the same parser and executor as the worker's `POST /v1/query`;
//! the table is the one the SQL names.

use crate::args::parse_kv;
use crate::error::CliError;
use crate::output::Output;
use crate::table::{IoReport, Opened, with_table};
use deltalens_api::sql::{Bound, Query, Source};
use deltalens_core::VersionSpec;
use deltalens_present::Format;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The query.
    #[arg(value_name = "SQL")]
    pub sql: String,
    /// Storage option KEY=VALUE (as for the other commands).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub options: Vec<(String, String)>,
    /// Output format. Through a pipe or to --output every format is the exact data; on a
    /// terminal, characters a terminal would act on or that draw nothing (controls, ESC,
    /// bidi and zero-width characters) are escaped: as \uXXXX in JSON (the same values),
    /// visibly as \x1b or \u{202e} in CSV and TSV (a view, not the bytes: pipe for those).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print requests and bytes read to stderr.
    #[arg(long)]
    pub io_stats: bool,
}

pub async fn run(args: Args, out: &Output) -> Result<(), CliError> {
    // checked before the table is opened
    out.check_rows(args.format, None)?;
    let q = deltalens_api::parse_sql(&args.sql)?;
    let io = IoReport {
        stats: args.io_stats,
        log: false,
        // the requests and bytes read while the query runs
        watch: true,
    };
    with_table(q.source.url(), &args.options, io, async |o| {
        let q = shared_versions(q.clone(), o).await?;
        let answer = deltalens_api::execute(&q, &o.table, None).await?;
        let mut w = out.rows(args.format, None, &answer.schema)?;
        for b in &answer.batches {
            w.write(b)?;
        }
        w.finish()
    })
    .await
}

/// `q` with the timestamps of a shared table's query turned into versions by its server
/// (`TIMESTAMP AS OF`, `table_changes` bounds): its log, with the commit times, is not
/// shared. Other tables' queries are unchanged (the core reads their commit times).
async fn shared_versions(mut q: Query, o: &Opened) -> Result<Query, CliError> {
    if o.shared.is_none() {
        return Ok(q);
    }
    match &mut q.source {
        Source::Table { at, .. } => {
            if let VersionSpec::Timestamp(ts) = *at {
                *at = VersionSpec::Version(o.version_at_timestamp(ts).await?);
            }
        }
        Source::Changes { from, to, .. } => {
            if let Bound::Timestamp(ts) = *from {
                *from = Bound::Version(o.first_version_at_or_after(ts).await?);
            }
            if let Some(Bound::Timestamp(ts)) = *to {
                *to = Some(Bound::Version(o.version_at_timestamp(ts).await?));
            }
        }
    }
    Ok(q)
}

//! `deltalens query SQL`: the same parser and executor as the worker's `POST /v1/query`;
//! the table is the one the SQL names.

use crate::args::parse_kv;
use crate::error::CliError;
use crate::table::{IoReport, with_table};
use deltalens_present::{Format, RowWriter};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The query.
    #[arg(value_name = "SQL")]
    pub sql: String,
    /// Storage option KEY=VALUE (as for the other commands).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub options: Vec<(String, String)>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Print requests and bytes read to stderr.
    #[arg(long)]
    pub io_stats: bool,
}

pub async fn run(args: Args) -> Result<String, CliError> {
    let q = deltalens_api::parse_sql(&args.sql)?;
    let io = IoReport {
        stats: args.io_stats,
        log: false,
        // the requests and bytes read while the query runs
        watch: true,
    };
    with_table(q.source.url(), &args.options, io, async |o| {
        let out = deltalens_api::execute(&q, &o.table, None).await?;
        let stdout = std::io::BufWriter::new(std::io::stdout());
        let mut w = RowWriter::new(args.format, stdout, &out.schema)?;
        for b in &out.batches {
            w.write(b)?;
        }
        w.finish()?;
        Ok(String::new())
    })
    .await
}

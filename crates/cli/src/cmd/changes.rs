//! `deltalens changes`: the change data feed between two versions, inclusive
//! (`table_changes`), streamed like `scan`.

use deltalens_core::changes::Changes;
use deltalens_core::time_travel::parse_timestamp;

use crate::args::{RowArgs, TableArgs};
use crate::error::CliError;
use crate::output::Output;
use crate::table::{Opened, with_table};
use deltalens_present::Format;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    /// First version of the range (inclusive).
    #[arg(
        long,
        value_name = "V",
        required_unless_present = "from_timestamp",
        conflicts_with = "from_timestamp"
    )]
    pub from: Option<u64>,
    /// Last version of the range (inclusive; default: latest).
    #[arg(long, value_name = "V", conflicts_with = "to_timestamp")]
    pub to: Option<u64>,
    /// Start at the first commit at or after this time.
    #[arg(long, value_name = "T")]
    pub from_timestamp: Option<String>,
    /// End at the last commit at or before this time.
    #[arg(long, value_name = "T")]
    pub to_timestamp: Option<String>,
    #[command(flatten)]
    pub rows: RowArgs,
}

pub async fn run(args: Args, out: &Output) -> Result<(), CliError> {
    let t = &args.table;
    // checked before the table is opened
    let format = args.rows.format(t.json, out)?;
    with_table(&t.location, &t.options, t.io(), async |o| {
        let (from, to) = range(o, &args).await?;
        changes(o, from, to, &args.rows, format, out).await
    })
    .await
}

/// The versions `--from`/`--to` or `--from-timestamp`/`--to-timestamp` name.
async fn range(t: &Opened, args: &Args) -> Result<(u64, Option<u64>), CliError> {
    let from = match (args.from, &args.from_timestamp) {
        (Some(v), _) => v,
        (None, Some(ts)) => t.first_version_at_or_after(parse_timestamp(ts)?).await?,
        (None, None) => 0,
    };
    let to = match (args.to, &args.to_timestamp) {
        (Some(v), _) => Some(v),
        (None, Some(ts)) => Some(t.version_at_timestamp(parse_timestamp(ts)?).await?),
        (None, None) => None,
    };
    Ok((from, to))
}

async fn changes(
    t: &Opened,
    from: u64,
    to: Option<u64>,
    rows: &RowArgs,
    format: Format,
    out: &Output,
) -> Result<(), CliError> {
    let c = Changes::new(&t.table, from, to, rows.scan_options()?).await?;
    let schema = c.schema()?;
    let mut writer = out.rows(format, rows.output.as_deref(), &schema)?;
    let mut write_err = None;
    c.execute(&mut |b| {
        if let Err(e) = writer.write(&b) {
            write_err = Some(e);
            return Ok(false);
        }
        Ok(true)
    })
    .await?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    writer.finish()?;
    Ok(())
}

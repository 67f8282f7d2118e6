//! `deltalens changes`: the change data feed between two versions, inclusive
//! (`table_changes`), streamed like `scan`; with `--follow`, on as new commits land
//! (`crate::follow`).

use deltalens_core::changes::Changes;
use deltalens_core::time_travel::parse_timestamp;

use crate::args::{RowArgs, TableArgs};
use crate::error::CliError;
use crate::follow::{
    Failed, FollowArgs, Polled, Stop, Tail, io_report, newest_commit, poll_until_stopped,
};
use crate::output::{Output, Rows};
use crate::table::{Opened, with_table};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltalens_core::history::read_history;
use deltalens_core::log::LogListing;
use deltalens_present::{Format, PresentError};

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
    #[arg(long, value_name = "V", conflicts_with_all = ["to_timestamp", "follow"])]
    pub to: Option<u64>,
    /// Start at the first commit at or after this time.
    #[arg(long, value_name = "T")]
    pub from_timestamp: Option<String>,
    /// End at the last commit at or before this time.
    #[arg(long, value_name = "T", conflicts_with = "follow")]
    pub to_timestamp: Option<String>,
    #[command(flatten)]
    pub rows: RowArgs,
    #[command(flatten)]
    pub follow: FollowArgs,
}

pub async fn run(args: Args, out: &Output) -> Result<(), CliError> {
    let t = &args.table;
    // checked before the table is opened
    let format = args.rows.format(t.json, out)?;
    let io = io_report(&args.follow, t)?;
    if args.follow.follow && format == Format::Table && args.rows.output.is_some() {
        return Err(CliError::Argument {
            expected: "--follow with the aligned table on a terminal or a pipe, or another --format with --output",
            given: "--follow --format table --output".into(),
        });
    }
    with_table(&t.location, &t.options, io, async |o| {
        if args.follow.follow {
            return follow(o, &args, format, out).await;
        }
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

/// The change rows from `--from` (or `--from-timestamp`: a time after the newest commit
/// is waited for) to the newest commit, then those of each new commit as it lands, into
/// one document (the aligned table: one per poll, each with its header), until stopped
/// or `--limit` rows are written. A new commit that changes the columns ends following
/// with an error naming it, after the document of the rows before it is ended.
async fn follow(t: &Opened, args: &Args, format: Format, out: &Output) -> Result<(), CliError> {
    let stop = Stop::on_signals(args.rows.output.is_none().then_some(*out));
    let (from, not_before) = start(t, args).await?;
    let mut feed = Feed {
        t,
        rows: &args.rows,
        format,
        out,
        stop: stop.clone(),
        writer: None,
        written: 0,
        tail: Tail::from(from),
        not_before,
    };
    let result = match feed.catch_up().await {
        Ok(Polled::More) => {
            poll_until_stopped(&stop, args.follow.interval, async || feed.catch_up().await).await
        }
        Ok(Polled::Done) => Ok(()),
        Err(f) => Err(f.error),
    };
    let finished = feed.finish().await;
    result.and(finished)
}

/// Where following starts: `--from`, or the first commit at or after `--from-timestamp`
/// — when there is none yet, the next commit, with the time it must reach.
async fn start(t: &Opened, args: &Args) -> Result<(u64, Option<i64>), CliError> {
    let Some(ts) = &args.from_timestamp else {
        return Ok((args.from.unwrap_or(0), None));
    };
    let ts = parse_timestamp(ts)?;
    match t.first_version_at_or_after(ts).await {
        Ok(v) => Ok((v, None)),
        // no commit at or after it yet
        Err(CliError::Core(
            deltalens_core::Error::InvalidArgument { .. }
            | deltalens_core::Error::TimestampOutOfRange {
                relation: "after", ..
            },
        )) => Ok((newest_commit(&t.table).await?.saturating_add(1), Some(ts))),
        Err(e) => Err(e),
    }
}

/// The change feed being followed: what is written, and from which version on.
struct Feed<'a> {
    t: &'a Opened,
    rows: &'a RowArgs,
    format: Format,
    out: &'a Output,
    stop: Stop,
    /// The document and its columns (made with the first rows' range).
    writer: Option<(Rows, SchemaRef)>,
    /// Rows written so far (the aligned table's earlier documents too).
    written: usize,
    /// The first version not written yet, and the log after it.
    tail: Tail,
    /// `--from-timestamp` after the newest commit when following began: commits before
    /// this time are passed over.
    not_before: Option<i64>,
}

impl Feed<'_> {
    /// Write the rows of the commits the log holds from `tail.next` on: all at once while
    /// the columns stay those written so far, else one version at a time, up to the one
    /// that changes them.
    async fn catch_up(&mut self) -> Result<Polled, Failed> {
        let run = self.tail.poll(&self.t.table).await?;
        let Some(&latest) = run.commits.keys().next_back() else {
            return Ok(Polled::More);
        };
        if !self.pass_early_commits(&run).await? {
            return Ok(Polled::More);
        }
        let c = self.plan(self.tail.next, latest).await?;
        if self.fits(&c)? {
            return self.write(&c).await;
        }
        for v in self.tail.next..=latest {
            let c = self.plan(v, v).await?;
            if !self.fits(&c)? {
                return Err(Failed {
                    error: CliError::ColumnsChanged { version: v },
                    may_retry: false,
                });
            }
            if self.write(&c).await? == Polled::Done {
                return Ok(Polled::Done);
            }
        }
        Ok(Polled::More)
    }

    /// With a `--from-timestamp` still to come, pass over the commits of `run` made
    /// before it; whether any commit is left to write.
    async fn pass_early_commits(&mut self, run: &LogListing) -> Result<bool, CliError> {
        let Some(ts) = self.not_before else {
            return Ok(true);
        };
        let storage = self.t.table.storage().as_ref();
        let mut entries = read_history(storage, run, None).await?;
        entries.reverse();
        for e in &entries {
            // the commit's time as time travel takes it: in-commit, else the file's
            let file_ms = run
                .commits
                .get(&e.version)
                .and_then(|f| f.meta.last_modified_ms);
            if e.in_commit_timestamp
                .or(file_ms)
                .or(e.timestamp)
                .is_some_and(|t| t >= ts)
            {
                self.not_before = None;
                return Ok(true);
            }
            self.tail.handed_on(e.version);
        }
        Ok(false)
    }

    async fn plan(&self, from: u64, to: u64) -> Result<Changes, CliError> {
        let mut options = self.rows.scan_options()?;
        options.limit = self.rows.limit.map(|l| l.saturating_sub(self.written));
        Ok(Changes::new(&self.t.table, from, Some(to), options).await?)
    }

    /// Whether `c`'s rows can be written under the columns written so far (or nothing is
    /// written yet): the same names and types, and nulls only where nulls were allowed
    /// (a column's comment or id may change).
    fn fits(&self, c: &Changes) -> Result<bool, CliError> {
        let schema = c.schema()?;
        let Some((_, written)) = &self.writer else {
            return Ok(true);
        };
        let same = |a: &arrow_schema::Field, b: &arrow_schema::Field| {
            a.name() == b.name()
                && a.data_type() == b.data_type()
                && (a.is_nullable() || !b.is_nullable())
        };
        Ok(written.fields().len() == schema.fields().len()
            && written
                .fields()
                .iter()
                .zip(schema.fields())
                .all(|(a, b)| same(a, b)))
    }

    /// Write `c`'s rows; a failure after some of them were written ends following (the
    /// range cannot be written again without repeating them).
    async fn write(&mut self, c: &Changes) -> Result<Polled, Failed> {
        let schema = c.schema().map_err(CliError::from)?;
        if self.writer.is_none() {
            let rows = self
                .out
                .rows(self.format, self.rows.output.as_deref(), &schema)?;
            self.writer = Some((rows, schema));
        }
        let Some((writer, columns)) = self.writer.as_mut() else {
            return Ok(Polled::More);
        };
        let before = writer.rows();
        let stop = &self.stop;
        let format = self.format;
        let mut write_err = None;
        let result = c
            .execute(&mut |b| {
                // under the columns written so far (`fits`: only their metadata differ)
                let b = match relabel(b, columns) {
                    Ok(b) => b,
                    Err(source) => {
                        write_err = Some(CliError::Present(PresentError::Encode {
                            format: format.name(),
                            source,
                        }));
                        return Ok(false);
                    }
                };
                if let Err(e) = writer.write(&b) {
                    write_err = Some(e.into());
                    return Ok(false);
                }
                Ok(!stop.requested())
            })
            .await;
        let wrote = writer.rows() - before;
        self.written += wrote;
        let failed = match (result, write_err) {
            (_, Some(e)) => Some(e),
            (Err(e), None) => Some(CliError::from(e)),
            (Ok(_), None) => None,
        };
        if let Some(error) = failed {
            return Err(Failed {
                may_retry: wrote == 0 && crate::follow::is_transient(&error),
                error,
            });
        }
        writer.flush()?;
        self.tail.handed_on(c.to);
        if self.format == Format::Table {
            // the aligned table holds rows back to size its columns: end this one
            if let Some((w, _)) = self.writer.take() {
                w.finish()?;
            }
        }
        let limit_reached = self.rows.limit.is_some_and(|l| self.written >= l);
        Ok(if limit_reached || self.stop.requested() {
            Polled::Done
        } else {
            Polled::More
        })
    }

    /// End the document. Stopped before any row, it is still one: an empty JSON array,
    /// a CSV header, a Parquet file with no rows (under the newest commit's columns, when
    /// its change feed can be read).
    async fn finish(self) -> Result<(), CliError> {
        if let Some((w, _)) = self.writer {
            return w.finish();
        }
        if self.format == Format::Table || self.written > 0 {
            return Ok(());
        }
        let Ok(latest) = newest_commit(&self.t.table).await else {
            return Ok(());
        };
        let Ok(schema) = self
            .plan(latest, latest)
            .await
            .and_then(|c| Ok(c.schema()?))
        else {
            return Ok(());
        };
        self.out
            .rows(self.format, self.rows.output.as_deref(), &schema)?
            .finish()
    }
}

/// `b` under `columns` (the same names and types: only field metadata or nullability
/// differ), untouched when its schema is `columns` already.
fn relabel(b: RecordBatch, columns: &SchemaRef) -> Result<RecordBatch, arrow_schema::ArrowError> {
    if b.schema_ref() == columns {
        return Ok(b);
    }
    RecordBatch::try_new(columns.clone(), b.columns().to_vec())
}

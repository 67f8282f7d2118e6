//! `deltalens scan`: read rows (a time-travel preview with `--version` / `--timestamp`),
//! streamed to stdout or `--output` in the chosen format.

use deltalens_core::{Split, VersionSpec};

use super::exit_without_freeing;
use crate::args::{AtArgs, RowArgs, TableArgs};
use crate::error::CliError;
use crate::output::Output;
use crate::progress::Progress;
use crate::table::{IoReport, Opened, with_table};
use deltalens_present::Format;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    #[command(flatten)]
    pub at: AtArgs,
    #[command(flatten)]
    pub rows: RowArgs,
    /// Read one split of a plan (`deltalens plan T --json`, one element of `splits`),
    /// from the table at the same location: its files only, without reading the log.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["version", "timestamp"])]
    pub split: Option<std::path::PathBuf>,
}

/// The largest split file read (a plan of a million files with their statistics is about
/// this size; a split is a part of one).
pub const MAX_SPLIT_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// The split in `path`, read whole after its size is checked against
/// [`MAX_SPLIT_FILE_BYTES`].
fn read_split(path: &std::path::Path) -> Result<Split, CliError> {
    use std::io::Read;
    let failed = |message: String| CliError::SplitFile {
        path: path.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| failed(e.to_string()))?;
    let mut text = Vec::new();
    file.take(MAX_SPLIT_FILE_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| failed(e.to_string()))?;
    if text.len() as u64 > MAX_SPLIT_FILE_BYTES {
        return Err(failed(format!(
            "larger than the limit of {MAX_SPLIT_FILE_BYTES} bytes (plan with a smaller --target-bytes)"
        )));
    }
    deltalens_json::from_slice(&text).map_err(|e| {
        failed(format!(
            "not a split ({e}); a split is one element of `splits` in `deltalens plan --json`"
        ))
    })
}

pub async fn run(args: Args, out: &Output) -> Result<(), CliError> {
    let t = &args.table;
    // checked before the table is opened
    let format = args.rows.format(t.json, out)?;
    // the scan draws its own progress (bytes of the files, rate, ETA)
    let io = IoReport {
        watch: false,
        ..t.io()
    };
    let split = args.split.as_deref().map(read_split).transpose()?;
    with_table(&t.location, &t.options, io, async |o| {
        scan(
            o,
            o.at(args.at.spec()?).await?,
            split.as_ref(),
            &args.rows,
            format,
            t.quiet,
            out,
        )
        .await
    })
    .await
}

async fn scan(
    t: &Opened,
    at: VersionSpec,
    split: Option<&Split>,
    rows: &RowArgs,
    format: Format,
    quiet: bool,
    out: &Output,
) -> Result<(), CliError> {
    // the files chosen while they stream: a preview or a partition filter keeps a few
    // of a million, never the whole list
    let options = rows.scan_options()?;
    let s = match split {
        // a split names its files: nothing is read from the log
        Some(split) => split.snapshot(t.table.clone())?,
        None => {
            t.table
                .version_info(at)
                .await?
                .snapshot_for_scan(&options)
                .await?
        }
    };
    let scan = s.scan(options)?;
    let schema = scan.schema();
    let mut writer = out.rows(format, rows.output.as_deref(), &schema)?;
    let progress = Progress::bytes(
        u64::try_from(s.size_bytes().unwrap_or(0)).unwrap_or(0),
        quiet,
    );
    let files = s.num_files();
    let mut write_err = None;
    let mut n = 0usize;
    let counter = t.counter.clone();
    let threads = rows
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(s.num_files().max(1));
    if rows.limit.is_none() && threads > 1 {
        // decode files on `threads` threads; their reads run on the process' runtime
        // (its handle), whose workers keep serving the connections the storage pools
        // while this thread blocks below. Batches come back through a small channel, so
        // memory stays bounded.
        let handle = tokio::runtime::Handle::current();
        let (btx, brx) = std::sync::mpsc::sync_channel(threads * 2);
        let result: Result<(), CliError> = std::thread::scope(|scope| {
            let mut workers = Vec::new();
            for part in 0..threads {
                let (btx, scan, handle) = (btx.clone(), &scan, handle.clone());
                workers.push(scope.spawn(move || -> Result<(), CliError> {
                    handle.block_on(
                        scan.execute_partition(part, threads, &mut |b| Ok(btx.send(b).is_ok())),
                    )?;
                    Ok(())
                }));
            }
            drop(btx);
            for b in brx {
                n += b.num_rows();
                progress.suspend(|| writer.write(&b))?;
                progress.set(counter.stats().bytes);
                progress.message(format!("{files} files, {n} rows"));
            }
            for w in workers {
                w.join().map_err(|_| CliError::ScanThread)??;
            }
            Ok(())
        });
        progress.clear();
        result?;
        writer.finish()?;
        exit_without_freeing(s);
        return Ok(());
    }
    scan.execute(&mut |b| {
        n += b.num_rows();
        if let Err(e) = progress.suspend(|| writer.write(&b)) {
            write_err = Some(e);
            return Ok(false);
        }
        progress.set(counter.stats().bytes);
        progress.message(format!("{files} files, {n} rows"));
        Ok(true)
    })
    .await?;
    progress.clear();
    if let Some(e) = write_err {
        return Err(e.into());
    }
    writer.finish()?;
    exit_without_freeing(s);
    Ok(())
}

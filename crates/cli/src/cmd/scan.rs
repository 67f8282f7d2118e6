//! `deltalens scan`: read rows (a time-travel preview with `--version` / `--timestamp`),
//! streamed to stdout or `--output` in the chosen format.

use deltalens_core::VersionSpec;

use super::exit_without_freeing;
use crate::args::{AtArgs, RowArgs, TableArgs};
use crate::error::CliError;
use crate::output;
use crate::progress::Progress;
use crate::table::{IoReport, Opened, with_table};
use deltalens_present::{Format, RowWriter};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    #[command(flatten)]
    pub at: AtArgs,
    #[command(flatten)]
    pub rows: RowArgs,
}

pub async fn run(args: Args) -> Result<String, CliError> {
    let t = &args.table;
    // checked before the table is opened
    let format = args.rows.format(t.json)?;
    // the scan draws its own progress (bytes of the files, rate, ETA)
    let io = IoReport {
        watch: false,
        ..t.io()
    };
    with_table(&t.location, &t.options, io, async |o| {
        scan(o, args.at.spec()?, &args.rows, format, t.quiet).await
    })
    .await
}

async fn scan(
    t: &Opened,
    at: VersionSpec,
    rows: &RowArgs,
    format: Format,
    quiet: bool,
) -> Result<String, CliError> {
    // the files chosen while they stream: a preview or a partition filter keeps a few
    // of a million, never the whole list
    let options = rows.scan_options()?;
    let s = t
        .table
        .version_info(at)
        .await?
        .snapshot_for_scan(&options)
        .await?;
    let scan = s.scan(options)?;
    let schema = scan.schema();
    let out = output::destination(rows.output.as_deref())?;
    let mut writer = RowWriter::new(format, out, &schema)?;
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
        return Ok(String::new());
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
    Ok(String::new())
}

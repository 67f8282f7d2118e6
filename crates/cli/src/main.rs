//! `deltalens`: look inside a Delta Lake table from a terminal.
//!
//! This file parses the command line and dispatches: each subcommand is a module of
//! [`cmd`] with its arguments and its `run`; every one that reads a table opens it with
//! [`table::with_table`]; every failure is a [`error::CliError`], printed here once.

mod allocator;
mod args;
mod browser;
mod cmd;
mod error;
mod output;
mod source;
mod table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;

/// Look inside a Delta Lake table: schema, properties, history, files.
#[derive(Parser, Debug)]
#[command(name = "deltalens", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Version, files, size, rows, protocol, properties and partitioning.
    Info(cmd::info::Args),
    /// Is this table in good shape? Small files, partition skew, deletion vectors, files
    /// without statistics, checkpoint, OPTIMIZE/VACUUM in the history and tombstones, each
    /// with its figures, what it means and the usual remedy.
    Health(cmd::health::Args),
    /// The Delta schema (logical names).
    Schema(cmd::schema::Args),
    /// Commit history, newest first (Trino's $history).
    History(cmd::history::Args),
    /// The active data files with partition values, statistics and deletion vectors.
    Files(cmd::files::Args),
    /// Answer a SQL query (the subset the worker's POST /v1/query takes): SELECT cols | * |
    /// COUNT(*) | SUM/MIN/MAX/AVG(col) FROM '<table>' [VERSION AS OF n | TIMESTAMP AS OF
    /// '<ts>'] [WHERE …] [GROUP BY …] [ORDER BY …] [LIMIT n], or FROM
    /// table_changes('<table>', from[, to]).
    Query(cmd::query::Args),
    /// Read rows (a time-travel preview with --version / --timestamp).
    Scan(cmd::scan::Args),
    /// What changed between two versions: files, schema, protocol, properties and rows.
    Diff(cmd::diff::Args),
    /// Benchmark: open the latest version and scan every row, N times, single-threaded
    /// (the same work the browser benchmark does); prints each run and the median.
    Bench(cmd::bench::Args),
    /// Serve the explorer and tables: local directories under /tables/<dir name>/ (with
    /// Range), and table URLs (s3://, abfss://, az://, gs://, https://) relayed with your
    /// own credentials, so the tab needs no CORS rule and no secret; with no TABLE, the
    /// bundled demo table. Read-only; answers only requests addressed to this server
    /// (Host), and other sites only with --cors-origin.
    Serve(cmd::serve::Args),
    /// Change data feed between two versions, inclusive (table_changes).
    Changes(cmd::changes::Args),
    /// What a Unity Catalog holds: catalogs, a catalog's schemas, a schema's tables.
    Catalog(cmd::catalog::Args),
    /// `serve` the tables, then open the explorer on them in the system browser (or
    /// print the link when there is none): e.g. `deltalens open s3://bucket/table`.
    Open(cmd::serve::Args),
}

/// Runs the subcommand: what to print on stdout, or why it failed.
async fn dispatch(command: Command) -> Result<String, CliError> {
    match command {
        Command::Info(a) => cmd::info::run(a).await,
        Command::Health(a) => cmd::health::run(a).await,
        Command::Schema(a) => cmd::schema::run(a).await,
        Command::History(a) => cmd::history::run(a).await,
        Command::Files(a) => cmd::files::run(a).await,
        Command::Query(a) => cmd::query::run(a).await,
        Command::Scan(a) => cmd::scan::run(a).await,
        Command::Diff(a) => cmd::diff::run(a).await,
        Command::Bench(a) => cmd::bench::run(a).await,
        Command::Serve(a) => cmd::serve::run(a).await,
        Command::Changes(a) => cmd::changes::run(a).await,
        Command::Catalog(a) => cmd::catalog::run(a).await,
        Command::Open(a) => cmd::serve::run_open(a).await,
    }
}

/// Prints the error as `error: …` on stderr; its exit code (1, or 2 for usage).
fn fail(e: &CliError) -> ExitCode {
    eprintln!(
        "error: {}",
        deltalens_present::text::terminal_safe(&e.to_string(), true)
    );
    ExitCode::from(e.exit_code())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // One multi-thread runtime owns every connection: scan threads decode on their own
    // OS threads but drive their reads through this runtime's handle, so pooled HTTP
    // connections (which belong to the runtime that opened them) keep being served while
    // the main thread waits for the scan threads. A current-thread runtime blocked by
    // those waits hung remote scans forever.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .max_blocking_threads(4)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&CliError::Runtime(e)),
    };
    // every document and message is text from a table or a server: shown, never obeyed
    // by the terminal (JSON already escapes controls; rows stream through output.rs)
    match rt.block_on(dispatch(cli.command)) {
        Ok(out) => {
            print!("{}", deltalens_present::text::terminal_safe(&out, true));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

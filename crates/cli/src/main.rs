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
mod follow;
mod output;
mod progress;
mod source;
mod table;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::CliError;
use crate::output::{Doc, Output};

/// `--version`: the crate version and the commit built.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("DELTALENS_COMMIT"),
    ")"
);

/// Look inside a Delta Lake table: schema, properties, history, files.
#[derive(Parser, Debug)]
#[command(name = "deltalens", version = VERSION, about,
    after_help = "Examples:\n  deltalens info s3://bucket/sales --json\n  deltalens scan ./events --filter 'price > 10' --limit 20\n  deltalens serve ./events")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Version, files, size, rows, protocol, properties and partitioning.
    #[command(
        after_help = "Examples:\n  deltalens info s3://bucket/sales\n  deltalens info ./events --version 12 --json\n  deltalens info ./events --timestamp 2024-05-01"
    )]
    Info(cmd::info::Args),
    /// Is this table in good shape? Small files, partition skew, deletion vectors, files
    /// without statistics, checkpoint, OPTIMIZE/VACUUM in the history and tombstones, each
    /// with its figures, what it means and the usual remedy.
    #[command(
        after_help = "Examples:\n  deltalens health s3://bucket/sales\n  deltalens health ./events --json\n  deltalens health ./events --series 8"
    )]
    Health(cmd::health::Args),
    /// The Delta schema (logical names).
    #[command(
        after_help = "Examples:\n  deltalens schema ./events\n  deltalens schema s3://bucket/sales --version 3 --json"
    )]
    Schema(cmd::schema::Args),
    /// Commit history, newest first (Trino's $history); with --follow, oldest first and
    /// on as new commits land.
    #[command(
        after_help = "Examples:\n  deltalens history ./events --limit 20\n  deltalens history s3://bucket/sales --json\n  deltalens history s3://bucket/sales --follow --interval 30s"
    )]
    History(cmd::history::Args),
    /// The active data files with partition values, statistics and deletion vectors.
    #[command(
        after_help = "Examples:\n  deltalens files ./events --limit 100\n  deltalens files s3://bucket/sales --json | jq '.[0]'"
    )]
    Files(cmd::files::Args),
    /// Answer a SQL query (the subset the worker's POST /v1/query takes): SELECT cols | * |
    /// COUNT(*) | SUM/MIN/MAX/AVG(col) FROM '<table>' [VERSION AS OF n | TIMESTAMP AS OF
    /// '<ts>'] [WHERE …] [GROUP BY …] [ORDER BY …] [LIMIT n], or FROM
    /// table_changes('<table>', from[, to]).
    #[command(
        after_help = "Examples:\n  deltalens query \"SELECT brand, COUNT(*) FROM './events' GROUP BY brand\"\n  deltalens query \"SELECT * FROM table_changes('./events', 3, 5)\" --format csv"
    )]
    Query(cmd::query::Args),
    /// Full SQL through DataFusion (joins, window functions, CTEs; statements separated by
    /// `;`) over Delta tables: FROM '<table>' or '<table>@v<version>', CREATE EXTERNAL
    /// TABLE t STORED AS DELTA LOCATION '<table>' [OPTIONS ('version' 'n' | 'timestamp'
    /// '<ts>')], table_changes('<table>', from[, to]). Scans plan splits, one per
    /// partition, and push projections, filters and limits down.
    #[cfg(feature = "sql")]
    #[command(
        after_help = "Examples:\n  deltalens sql \"SELECT a.brand, COUNT(*) FROM './events' a JOIN './brands' b ON a.brand = b.name GROUP BY 1\"\n  deltalens sql \"SELECT id, RANK() OVER (PARTITION BY day ORDER BY price DESC) FROM 's3://bucket/sales@v12'\" --format csv\n  deltalens sql \"CREATE EXTERNAL TABLE s STORED AS DELTA LOCATION './sales' OPTIONS ('version' '3'); SELECT COUNT(*) FROM s\""
    )]
    Sql(cmd::sql::Args),
    /// Read rows (a time-travel preview with --version / --timestamp).
    #[command(
        after_help = "Examples:\n  deltalens scan ./events --limit 20\n  deltalens scan s3://bucket/sales --columns id,price --filter 'price > 10' --json\n  deltalens scan ./events --version 3 --format parquet --output v3.parquet"
    )]
    Scan(cmd::scan::Args),
    /// Cut a scan into splits for many workers: the files the filter can match, grouped by
    /// bytes; each split (--json) is read on its own by `scan --split`, without the log.
    #[command(
        after_help = "Examples:\n  deltalens plan s3://bucket/sales --target-bytes 268435456\n  deltalens plan ./events --filter \"event_date = '2024-05-01'\" --json | jq '.splits[0]' > split0.json\n  deltalens scan ./events --split split0.json --format csv"
    )]
    Plan(cmd::plan::Args),
    /// What changed between two versions: files, schema, protocol, properties and rows.
    #[command(
        after_help = "Examples:\n  deltalens diff ./events 3 5\n  deltalens diff s3://bucket/sales 10 12 --json"
    )]
    Diff(cmd::diff::Args),
    /// Benchmark: open the latest version and scan every row, N times, single-threaded
    /// (the same work the browser benchmark does); prints each run and the median.
    #[command(after_help = "Examples:\n  deltalens bench ./events --runs 5")]
    Bench(cmd::bench::Args),
    /// Serve the explorer and tables: local directories under /tables/<dir name>/ (with
    /// Range), and table URLs (s3://, abfss://, az://, gs://, https://) relayed with your
    /// own credentials, so the tab needs no CORS rule and no secret; with no TABLE, the
    /// bundled demo table. Read-only; answers only requests addressed to this server
    /// (Host), and other sites only with --cors-origin. Bound to a non-loopback --host,
    /// the tables need a token (generated and printed, or --token).
    #[command(
        after_help = "Examples:\n  deltalens serve\n  deltalens serve ./events ./orders --port 8080\n  deltalens serve s3://bucket/sales"
    )]
    Serve(cmd::serve::Args),
    /// Change data feed between two versions, inclusive (table_changes); with --follow,
    /// on as new commits land.
    #[command(
        after_help = "Examples:\n  deltalens changes ./events --from 3 --to 5\n  deltalens changes s3://bucket/sales --from-timestamp 2024-05-01 --json\n  deltalens changes s3://bucket/sales --from 120 --follow --json"
    )]
    Changes(cmd::changes::Args),
    /// What a Unity Catalog holds: catalogs, a catalog's schemas, a schema's tables.
    #[command(
        after_help = "Examples:\n  deltalens catalog uc://main\n  deltalens catalog uc://main.sales --json"
    )]
    Catalog(cmd::catalog::Args),
    /// What a Delta Sharing profile gives access to: shares, a share's schemas, a schema's
    /// tables (and how each may be read), a table's version.
    #[command(
        after_help = "Examples:\n  deltalens share config.share\n  deltalens share config.share#sales.retail --json\n  deltalens share config.share#sales.retail.orders"
    )]
    Share(cmd::share::Args),
    /// `serve` the tables, then open the explorer on them in the system browser (or
    /// print the link when there is none): e.g. `deltalens open s3://bucket/table`.
    #[command(
        after_help = "Examples:\n  deltalens open s3://bucket/sales\n  deltalens open ./events"
    )]
    Open(cmd::serve::Args),
    /// Shell completions on stdout (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Examples:\n  deltalens completions bash > ~/.local/share/bash-completion/completions/deltalens\n  deltalens completions zsh > ~/.zfunc/_deltalens\n  deltalens completions fish > ~/.config/fish/completions/deltalens.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The manual page (roff) on stdout.
    #[command(after_help = "Examples:\n  deltalens man > deltalens.1 && man ./deltalens.1")]
    Man,
}

/// Runs the subcommand: what to print on stdout (rows and long listings it streamed
/// through `out` already), or why it failed.
async fn dispatch(command: Command, out: &Output) -> Result<Option<Doc>, CliError> {
    let doc = match command {
        Command::Info(a) => cmd::info::run(a).await?,
        Command::Health(a) => cmd::health::run(a).await?,
        Command::Schema(a) => cmd::schema::run(a).await?,
        Command::History(a) => return cmd::history::run(a, out).await,
        Command::Files(a) => return cmd::files::run(a, out).await,
        Command::Query(a) => return cmd::query::run(a, out).await.map(|()| None),
        #[cfg(feature = "sql")]
        Command::Sql(a) => return cmd::sql::run(a, out).await.map(|()| None),
        Command::Scan(a) => return cmd::scan::run(a, out).await.map(|()| None),
        Command::Diff(a) => cmd::diff::run(a).await?,
        Command::Plan(a) => cmd::plan::run(a).await?,
        Command::Bench(a) => cmd::bench::run(a).await?,
        Command::Serve(a) => Doc::Text(cmd::serve::run(a).await?),
        Command::Changes(a) => return cmd::changes::run(a, out).await.map(|()| None),
        Command::Catalog(a) => cmd::catalog::run(a).await?,
        Command::Share(a) => cmd::share::run(a).await?,
        Command::Open(a) => Doc::Text(cmd::serve::run_open(a).await?),
        Command::Completions { shell } => {
            let mut text = Vec::new();
            let mut cli = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cli, "deltalens", &mut text);
            Doc::Text(String::from_utf8_lossy(&text).into_owned())
        }
        Command::Man => {
            let mut text = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command())
                .render(&mut text)
                .map_err(|e| CliError::Present(deltalens_present::PresentError::Io(e)))?;
            Doc::Text(String::from_utf8_lossy(&text).into_owned())
        }
    };
    Ok(Some(doc))
}

/// Prints the error on stderr — `error: …`, or with `--json` one JSON object
/// `{"error": {"code", "message"}}` (the worker's shape), as [`Output::error_text`]
/// escapes them — and returns its exit status by class (`error::exit_code_of`). A closed
/// output pipe (`deltalens files T | head`) ends quietly, as `ls | head` does. A closed
/// stderr is not a second error.
fn fail(e: &CliError, json: bool, out: &Output) -> ExitCode {
    use std::io::Write as _;
    if e.is_broken_pipe() {
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(std::io::stderr(), "{}", out.error_text(e, json));
    ExitCode::from(e.exit_code())
}

/// Writes a command's document to stdout; a closed pipe ends quietly.
fn print(doc: &Doc, out: &Output) -> ExitCode {
    match out.print(doc) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(
            &CliError::Present(deltalens_present::PresentError::Io(e)),
            false,
            out,
        ),
    }
}

/// Set to `1`, stdout and stderr are treated as terminals whatever they are: how the
/// tests see what a terminal would be shown. Read here only.
const ASSUME_TTY: &str = "DELTALENS_ASSUME_TTY";

fn main() -> ExitCode {
    let cli = Cli::parse();
    // the one output layer: what reaches stdout and stderr, escaped as each one needs
    let out = Output::of_process(std::env::var_os(ASSUME_TTY).is_some_and(|v| v == "1"));
    // clap has accepted the arguments: `--json` here is the flag, never a value
    let json = std::env::args_os().any(|a| a == "--json");
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
        Err(e) => return fail(&CliError::Runtime(e), json, &out),
    };
    // every document and message is text from a table or a server: shown, never obeyed
    // by the terminal (output.rs decides how, per stream)
    match rt.block_on(dispatch(cli.command, &out)) {
        Ok(Some(doc)) => print(&doc, &out),
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => fail(&e, json, &out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Words of an example line as a shell splits them (quotes; up to a pipe or redirect).
    fn words(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quote = None;
        for c in line.chars() {
            match (quote, c) {
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, ' ') => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                (None, '|' | '>' | '&') => break,
                _ => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// Every example in every `--help` parses as the command line it shows.
    #[test]
    fn help_examples_parse() {
        let cli = Cli::command();
        let mut checked = 0;
        let helps = std::iter::once(&cli)
            .chain(cli.get_subcommands())
            .filter_map(|c| {
                c.get_after_help()
                    .map(|h| (c.get_name().to_string(), h.to_string()))
            });
        for (name, help) in helps {
            assert!(help.starts_with("Examples:"), "{name}");
            for line in help.lines().skip(1) {
                let args = words(line.trim());
                let parsed = Cli::try_parse_from(&args);
                assert!(parsed.is_ok(), "{name}: {line}: {:?}", parsed.err());
                checked += 1;
            }
        }
        let commands = cli.get_subcommands().count();
        assert!(
            checked >= 2 * commands,
            "{checked} examples for {commands} commands"
        );
    }

    #[test]
    fn version_names_the_commit() {
        let v = Cli::command().render_version();
        assert!(v.contains("(commit "), "{v}");
    }
}

//! `deltalens`: look inside a Delta Lake table from a terminal.

mod commands;
mod output;
mod render;
mod serve;

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use deltalens_core::{Table, VersionSpec};
use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{CountingStorage, Storage};

// Log replay allocates many small strings; mimalloc is markedly faster than glibc's here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    Info {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        at: AtArgs,
    },
    /// The Delta schema (logical names).
    Schema {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        at: AtArgs,
    },
    /// Commit history, newest first (Trino's $history).
    History {
        #[command(flatten)]
        table: TableArgs,
        /// Show only the newest N commits.
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
    },
    /// The active data files with partition values, statistics and deletion vectors.
    Files {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        at: AtArgs,
    },
    /// Answer a SQL query (the subset the worker's POST /v1/query takes): SELECT cols | * |
    /// COUNT(*) | SUM/MIN/MAX/AVG(col) FROM '<table>' [VERSION AS OF n | TIMESTAMP AS OF
    /// '<ts>'] [WHERE …] [GROUP BY …] [ORDER BY …] [LIMIT n], or FROM
    /// table_changes('<table>', from[, to]).
    Query {
        /// The query.
        #[arg(value_name = "SQL")]
        sql: String,
        /// Storage option KEY=VALUE (as for the other commands).
        #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = parse_kv)]
        options: Vec<(String, String)>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = output::Format::Table)]
        format: output::Format,
        /// Print requests and bytes read to stderr.
        #[arg(long)]
        io_stats: bool,
    },
    /// Read rows (a time-travel preview with --version / --timestamp).
    Scan {
        #[command(flatten)]
        table: TableArgs,
        #[command(flatten)]
        at: AtArgs,
        #[command(flatten)]
        rows: RowArgs,
    },
    /// What changed between two versions: files, schema, protocol, properties and rows.
    Diff {
        #[command(flatten)]
        table: TableArgs,
        /// The older version.
        #[arg(value_name = "V1")]
        v1: u64,
        /// The newer version.
        #[arg(value_name = "V2")]
        v2: u64,
        /// Show at most N inserted/deleted rows (default: 20 in text, all with --json).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Only the rows' columns, comma-separated.
        #[arg(long, value_name = "a,b", value_delimiter = ',')]
        columns: Option<Vec<String>>,
    },
    /// Benchmark: open the latest version and scan every row, N times, single-threaded
    /// (the same work the browser benchmark does); prints each run and the median.
    Bench {
        #[command(flatten)]
        table: TableArgs,
        /// How many runs.
        #[arg(long, value_name = "N", default_value_t = 5, value_parser = positive)]
        runs: usize,
    },
    /// Serve the explorer and local tables (under /tables/<dir name>/, with Range); with
    /// no TABLE_DIR, the bundled demo table. Read-only; answers only requests addressed to
    /// this server (Host), and other sites only with --cors-origin.
    Serve {
        /// Table directories to serve.
        #[arg(value_name = "TABLE_DIR")]
        tables: Vec<std::path::PathBuf>,
        /// Address to bind.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// Port (0 picks a free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Serve the explorer from this directory (trunk's dist/) instead of the copy
        /// embedded in the binary.
        #[arg(long, value_name = "DIR")]
        app_dir: Option<std::path::PathBuf>,
        /// Let pages from this origin (e.g. https://explorer.example) read the tables
        /// with CORS; repeatable. Without it only the explorer served here can.
        #[arg(long = "cors-origin", value_name = "ORIGIN", value_parser = serve::parse_origin)]
        cors_origins: Vec<String>,
        /// Most connections open at once; more wait until one closes.
        #[arg(long, value_name = "N", default_value_t = 256, value_parser = positive)]
        max_connections: usize,
        /// Stop after this many seconds (for tests).
        #[arg(long, hide = true, value_name = "SECS")]
        stop_after: Option<u64>,
    },
    /// Change data feed between two versions, inclusive (table_changes).
    Changes {
        #[command(flatten)]
        table: TableArgs,
        /// First version of the range (inclusive).
        #[arg(
            long,
            value_name = "V",
            required_unless_present = "from_timestamp",
            conflicts_with = "from_timestamp"
        )]
        from: Option<u64>,
        /// Last version of the range (inclusive; default: latest).
        #[arg(long, value_name = "V", conflicts_with = "to_timestamp")]
        to: Option<u64>,
        /// Start at the first commit at or after this time.
        #[arg(long, value_name = "T")]
        from_timestamp: Option<String>,
        /// End at the last commit at or before this time.
        #[arg(long, value_name = "T")]
        to_timestamp: Option<String>,
        #[command(flatten)]
        rows: RowArgs,
    },
}

/// What rows to return and how to write them.
#[derive(Args, Debug)]
pub struct RowArgs {
    /// Columns to return, comma-separated (Flink's columnNames).
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
    /// Only rows matching this SQL condition, e.g. "price > 10 AND brand = 'nars' OR
    /// event_date IS NULL" (IN, BETWEEN, LIKE, NOT too).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Read every file and row group even where statistics show no row can match.
    #[arg(long, hide = true)]
    pub no_pruning: bool,
    /// Return at most N rows; reading stops as soon as they are found.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Rows per batch (Flink's parquetBatchSize).
    #[arg(long, value_name = "N", default_value_t = deltalens_core::scan::DEFAULT_BATCH_SIZE,
          value_parser = positive)]
    pub batch_size: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = output::Format::Table)]
    pub format: output::Format,
    /// Files decoded in parallel by a scan without --limit (default: the number of cores;
    /// with more than one, rows come in file-completion order).
    #[arg(long, value_name = "N", value_parser = positive)]
    pub threads: Option<usize>,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
struct TableArgs {
    /// Table location: a local path or a URL (s3://, az://, abfss://, gs://, https://).
    #[arg(value_name = "TABLE")]
    location: String,
    /// Print exactly one JSON document to stdout.
    #[arg(long)]
    json: bool,
    /// Store option KEY=VALUE (e.g. aws_endpoint=http://127.0.0.1:9000, azure_storage_sas_key=...).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = parse_kv)]
    options: Vec<(String, String)>,
    /// Print the requests and bytes read from storage to stderr.
    #[arg(long)]
    io_stats: bool,
    /// Print every storage request to stderr.
    #[arg(long, hide = true)]
    io_log: bool,
}

#[derive(Args, Debug)]
struct AtArgs {
    /// Read the table as of this version (VERSION AS OF).
    #[arg(long, value_name = "N", conflicts_with = "timestamp")]
    version: Option<u64>,
    /// Read the table as of this time (TIMESTAMP AS OF): ISO-8601, no zone = UTC, or a date.
    #[arg(long, value_name = "T")]
    timestamp: Option<String>,
}

impl AtArgs {
    fn spec(&self) -> Result<VersionSpec, deltalens_core::Error> {
        Ok(match (&self.version, &self.timestamp) {
            (Some(v), _) => VersionSpec::Version(*v),
            (None, Some(t)) => {
                VersionSpec::Timestamp(deltalens_core::time_travel::parse_timestamp(t)?)
            }
            (None, None) => VersionSpec::Latest,
        })
    }
}

fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive number, got {s:?}")),
    }
}

fn parse_kv(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))
}

/// The table and the counter of its requests (for --io-stats and progress).
pub struct Opened {
    pub table: Table,
    pub counter: Arc<CountingStorage<ObjectStoreStorage>>,
    io_stats: bool,
    io_log: bool,
}

fn open(args: &TableArgs) -> Result<Opened, deltalens_core::Error> {
    let store = ObjectStoreStorage::open(&args.location, &args.options)?;
    let counter = Arc::new(CountingStorage::new(store));
    let storage: Arc<dyn Storage> = counter.clone();
    Ok(Opened {
        table: Table::new(storage, &args.location),
        counter,
        io_stats: args.io_stats,
        io_log: args.io_log,
    })
}

async fn run(cli: Cli) -> Result<String, String> {
    let err = |e: deltalens_core::Error| e.to_string();
    if let Command::Serve {
        tables,
        host,
        port,
        app_dir,
        cors_origins,
        max_connections,
        stop_after,
    } = cli.command
    {
        return serve::serve(serve::ServeArgs {
            tables,
            host,
            port,
            app_dir,
            stop_after,
            cors_origins,
            max_connections,
        })
        .await;
    }
    if let Command::Query {
        sql,
        options,
        format,
        io_stats,
    } = &cli.command
    {
        return commands::query(sql, options, *format, *io_stats).await;
    }
    let (args, result) = match &cli.command {
        Command::Info { table, at } => {
            let t = open(table).map_err(err)?;
            let r = commands::info(&t.table, at.spec().map_err(err)?, table.json)
                .await
                .map_err(err);
            (t, r)
        }
        Command::Schema { table, at } => {
            let t = open(table).map_err(err)?;
            let r = commands::schema(&t.table, at.spec().map_err(err)?, table.json)
                .await
                .map_err(err);
            (t, r)
        }
        Command::History { table, limit } => {
            let t = open(table).map_err(err)?;
            let r = commands::history(&t.table, *limit, table.json)
                .await
                .map_err(err);
            (t, r)
        }
        Command::Files { table, at } => {
            let t = open(table).map_err(err)?;
            let r = commands::files(&t.table, at.spec().map_err(err)?, table.json)
                .await
                .map_err(err);
            (t, r)
        }
        Command::Scan { table, at, rows } => {
            let t = open(table).map_err(err)?;
            let r = commands::scan(&t, at.spec().map_err(err)?, rows).await;
            (t, r)
        }
        Command::Bench { table, runs } => {
            let t = open(table).map_err(err)?;
            let r = commands::bench(&t, *runs, table.json).await;
            (t, r)
        }
        Command::Serve { .. } | Command::Query { .. } => {
            return Err("handled above".into());
        }
        Command::Diff {
            table,
            v1,
            v2,
            limit,
            columns,
        } => {
            let t = open(table).map_err(err)?;
            let r = commands::diff(&t, *v1, *v2, *limit, columns.clone(), table.json).await;
            (t, r)
        }
        Command::Changes {
            table,
            from,
            to,
            from_timestamp,
            to_timestamp,
            rows,
        } => {
            let t = open(table).map_err(err)?;
            let parse = deltalens_core::time_travel::parse_timestamp;
            let from = match (from, from_timestamp) {
                (Some(v), _) => *v,
                (None, Some(ts)) => t
                    .table
                    .first_version_at_or_after(parse(ts).map_err(err)?)
                    .await
                    .map_err(err)?,
                (None, None) => 0,
            };
            let to = match (to, to_timestamp) {
                (Some(v), _) => Some(*v),
                (None, Some(ts)) => Some(
                    t.table
                        .version_at_timestamp(parse(ts).map_err(err)?)
                        .await
                        .map_err(err)?,
                ),
                (None, None) => None,
            };
            let r = commands::changes(&t, from, to, rows).await;
            (t, r)
        }
    };
    if args.io_log {
        for r in args.counter.records() {
            let range = r.range.map(|r| r.to_string()).unwrap_or_default();
            let path = render::terminal_safe(&r.path, false);
            eprintln!("io: {:?} {path} {range} -> {} bytes", r.kind, r.bytes);
        }
    }
    if args.io_stats {
        let s = args.counter.stats();
        eprintln!(
            "io: {} requests ({} list, {} get, {} head), {} bytes read",
            s.requests, s.lists, s.gets, s.heads, s.bytes
        );
    }
    result
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
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    // every document and message is text from a table or a server: shown, never obeyed
    // by the terminal (JSON already escapes controls; rows stream through output.rs)
    match rt.block_on(run(cli)) {
        Ok(out) => {
            print!("{}", render::terminal_safe(&out, true));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", render::terminal_safe(&e, true));
            ExitCode::from(1)
        }
    }
}

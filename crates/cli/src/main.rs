//! `deltalens`: look inside a Delta Lake table from a terminal.

mod commands;
mod render;

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

fn parse_kv(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))
}

/// The table and, when asked for, the counter of its requests.
pub struct Opened {
    pub table: Table,
    counter: Option<Arc<CountingStorage<ObjectStoreStorage>>>,
}

fn open(args: &TableArgs) -> Result<Opened, deltalens_core::Error> {
    let store = ObjectStoreStorage::open(&args.location, &args.options)?;
    if args.io_stats {
        let counter = Arc::new(CountingStorage::new(store));
        let storage: Arc<dyn Storage> = counter.clone();
        Ok(Opened {
            table: Table::new(storage, &args.location),
            counter: Some(counter),
        })
    } else {
        Ok(Opened {
            table: Table::new(Arc::new(store), &args.location),
            counter: None,
        })
    }
}

async fn run(cli: Cli) -> Result<String, deltalens_core::Error> {
    let (args, result) = match &cli.command {
        Command::Info { table, at } => {
            let t = open(table)?;
            let r = commands::info(&t.table, at.spec()?, table.json).await;
            (t, r)
        }
        Command::Schema { table, at } => {
            let t = open(table)?;
            let r = commands::schema(&t.table, at.spec()?, table.json).await;
            (t, r)
        }
        Command::History { table, limit } => {
            let t = open(table)?;
            let r = commands::history(&t.table, *limit, table.json).await;
            (t, r)
        }
        Command::Files { table, at } => {
            let t = open(table)?;
            let r = commands::files(&t.table, at.spec()?, table.json).await;
            (t, r)
        }
    };
    if let Some(c) = &args.counter {
        let s = c.stats();
        eprintln!(
            "io: {} requests ({} list, {} get, {} head), {} bytes read",
            s.requests, s.lists, s.gets, s.heads, s.bytes
        );
    }
    result
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match rt.block_on(run(cli)) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

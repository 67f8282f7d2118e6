//! Argument groups several subcommands share: the table and how to reach it, the version
//! to read, the rows to return; and the value parsers.

use clap::Args;
use deltalens_core::VersionSpec;
use deltalens_core::scan::ScanOptions;

use crate::error::CliError;
use crate::output::Output;
use crate::table::IoReport;
use deltalens_present::Format;

#[derive(Args, Debug)]
pub struct TableArgs {
    /// Table location: a local path, a URL (s3://, az://, abfss://, gs://, https://) or a
    /// Unity Catalog name (uc://catalog.schema.table; UC_ENDPOINT/UC_TOKEN or
    /// DATABRICKS_HOST/DATABRICKS_TOKEN).
    #[arg(value_name = "TABLE")]
    pub location: String,
    /// Print JSON to stdout: one document (rows of `scan` and `changes`, and what
    /// `--follow` prints, one JSON object per line).
    #[arg(long)]
    pub json: bool,
    /// Store option KEY=VALUE (e.g. aws_endpoint=http://127.0.0.1:9000, azure_storage_sas_key=...).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub options: Vec<(String, String)>,
    /// Print the requests and bytes read from storage to stderr.
    #[arg(long)]
    pub io_stats: bool,
    /// Print every storage request to stderr.
    #[arg(long, hide = true)]
    pub io_log: bool,
    /// -v: the requests and bytes read (as --io-stats); -vv: also one line per request
    /// (operation, object path — never a credential —, range, bytes, milliseconds), on
    /// stderr.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// No progress line on stderr.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

impl TableArgs {
    /// What to report about the requests made.
    pub fn io(&self) -> IoReport {
        IoReport {
            stats: self.io_stats || self.verbose >= 1,
            log: self.io_log || self.verbose >= 2,
            watch: !self.quiet,
        }
    }
}

#[derive(Args, Debug)]
pub struct AtArgs {
    /// Read the table as of this version (VERSION AS OF).
    #[arg(long, value_name = "N", conflicts_with = "timestamp")]
    pub version: Option<u64>,
    /// Read the table as of this time (TIMESTAMP AS OF): ISO-8601, no zone = UTC, or a date.
    #[arg(long, value_name = "T")]
    pub timestamp: Option<String>,
}

impl AtArgs {
    pub fn spec(&self) -> Result<VersionSpec, CliError> {
        Ok(match (&self.version, &self.timestamp) {
            (Some(v), _) => VersionSpec::Version(*v),
            (None, Some(t)) => {
                VersionSpec::Timestamp(deltalens_core::time_travel::parse_timestamp(t)?)
            }
            (None, None) => VersionSpec::Latest,
        })
    }
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
    /// Output format. Through a pipe or to --output every format is the exact data; on a
    /// terminal, characters a terminal would act on or that draw nothing (controls, ESC,
    /// bidi and zero-width characters) are escaped: as \uXXXX in JSON (the same values),
    /// visibly as \x1b or \u{202e} in CSV and TSV (a view, not the bytes: pipe for those).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Files decoded in parallel by a scan without --limit (default: the number of cores;
    /// with more than one, rows come in file-completion order).
    #[arg(long, value_name = "N", value_parser = positive)]
    pub threads: Option<usize>,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

impl RowArgs {
    /// The format rows are written in: `--json` means JSON lines (one object per row);
    /// with another `--format` it is refused. Parquet and Arrow (binary) are refused for
    /// a terminal (as `out` sees stdout): give `--output FILE` or redirect.
    pub fn format(&self, json: bool, out: &Output) -> Result<Format, CliError> {
        let format = match (json, self.format) {
            (false, f) => f,
            (true, Format::Table | Format::Jsonl) => Format::Jsonl,
            (true, Format::Json) => Format::Json,
            (true, _) => {
                return Err(CliError::Argument {
                    expected: "--json (JSON lines) without another --format",
                    given: format!("--json --format {}", self.format.name()),
                });
            }
        };
        out.check_rows(format, self.output.as_deref())?;
        Ok(format)
    }

    /// The scan these arguments ask for (the filter parsed).
    pub fn scan_options(&self) -> Result<ScanOptions, CliError> {
        let filter = match &self.filter {
            Some(f) => Some(deltalens_core::predicate::Predicate::parse(f)?),
            None => None,
        };
        Ok(ScanOptions {
            columns: self.columns.clone(),
            limit: self.limit,
            batch_size: self.batch_size,
            filter,
            prune: !self.no_pruning,
            max_decoded_bytes: None,
        })
    }
}

pub fn positive(s: &str) -> Result<usize, CliError> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(CliError::Argument {
            expected: "a positive number",
            given: s.to_string(),
        }),
    }
}

pub fn parse_kv(s: &str) -> Result<(String, String), CliError> {
    s.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .ok_or_else(|| CliError::Argument {
            expected: "KEY=VALUE",
            given: s.to_string(),
        })
}

/// A table and the version of it to read (`info`, `schema`, `files`).
#[derive(clap::Args, Debug)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub table: TableArgs,
    #[command(flatten)]
    pub at: AtArgs,
}

//! The CLI's one error type. Every subcommand ends with a [`CliError`] or its output;
//! `main` prints the error once, as `error: <message>` on stderr (escaped for the
//! terminal), and exits with [`CliError::exit_code`].
//!
//! The messages carry their causes' text (`cannot create out.csv: Permission denied`),
//! as the CLI has always printed them, and each variant also keeps its cause as its
//! [`std::error::Error::source`].

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Reading the table failed: its log, a snapshot, a scan, a timestamp, a filter.
    #[error(transparent)]
    Core(#[from] deltalens_core::Error),

    /// The table's storage could not be opened (the location or an option is wrong).
    #[error(transparent)]
    Storage(#[from] deltalens_storage::StorageError),

    /// `query`: the SQL does not parse or is outside the subset, or answering it failed.
    #[error(transparent)]
    Query(#[from] deltalens_api::ApiError),

    #[error(transparent)]
    Sharing(#[from] deltalens_sharing::SharingError),

    /// A command-line value that does not parse (refused by clap, with exit code 2).
    #[error("expected {expected}, got {given:?}")]
    Argument {
        expected: &'static str,
        given: String,
    },

    /// `scan --split FILE`: the split cannot be read (missing, too large, not a split).
    #[error("cannot read the split {}: {message}", path.display())]
    SplitFile { path: PathBuf, message: String },

    /// `--output FILE` could not be created.
    #[error("cannot create {}: {source}", path.display())]
    CreateOutput { path: PathBuf, source: io::Error },

    /// Writing rows or a document in the chosen format failed.
    #[error(transparent)]
    Present(#[from] deltalens_present::PresentError),

    /// `diff --json`: the encoded rows could not be read back as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),

    /// A thread decoding a share of a parallel scan panicked.
    #[error("a scan thread failed")]
    ScanThread,

    /// `serve`: a table directory cannot be resolved.
    #[error("cannot serve {}: {source}", path.display())]
    ServeTable { path: PathBuf, source: io::Error },

    /// `serve`: a directory given as a table has no `_delta_log/`.
    #[error("{} is not a Delta table (no _delta_log/ in it)", path.display())]
    NotATable { path: PathBuf },

    /// `serve --app-dir`: the directory cannot be resolved.
    #[error("cannot serve the explorer from {}: {source}", path.display())]
    ServeApp { path: PathBuf, source: io::Error },

    /// `serve`: the address cannot be bound.
    #[error("cannot listen on {host}:{port}: {source}")]
    Listen {
        host: String,
        port: u16,
        source: io::Error,
    },

    /// `serve`: the bound address cannot be read back.
    #[error("{0}")]
    LocalAddr(#[source] io::Error),

    /// `serve` on a non-loopback address: no token could be generated.
    #[error(
        "cannot generate the token a server reachable from the network needs (the system's random source failed: {0}); give one with --token, or bind 127.0.0.1"
    )]
    Token(String),

    /// `sql`: DataFusion could not parse, plan or run the statements.
    #[cfg(feature = "sql")]
    #[error("{0}")]
    Sql(#[source] Box<deltalens_datafusion::datafusion::error::DataFusionError>),

    /// `changes --follow`: a new commit changes the table's columns, which the rows
    /// written so far cannot take.
    #[error(
        "version {version} changes the table's columns: following stops before it (the rows of the versions before it are written); run `deltalens changes --from {version}` to read on with the new columns"
    )]
    ColumnsChanged { version: u64 },

    /// The async runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),
}

impl CliError {
    /// The process exit code: 2 for a usage error, 1 for any other failure.
    pub fn exit_code(&self) -> u8 {
        exit_code_of(&self.code())
    }

    /// A stable code naming what went wrong (the worker's `error.code` for the same
    /// failure): `not_found`, `unsupported_table_feature`, `storage_failed`, …
    pub fn code(&self) -> String {
        use deltalens_present::PresentError as P;
        match self {
            CliError::Core(c) | CliError::Present(P::Core(c)) => deltalens_api::core_code(c).into(),
            CliError::Storage(s) => deltalens_api::storage_code(s).into(),
            CliError::Query(q) => q.code(),
            CliError::Argument { .. } | CliError::SplitFile { .. } => "invalid_argument".into(),
            CliError::NotATable { .. } => "not_a_table".into(),
            CliError::ColumnsChanged { .. } => "columns_changed".into(),
            CliError::Sharing(e) => e.code().into(),
            CliError::Present(P::Io(_)) | CliError::CreateOutput { .. } => "output_failed".into(),
            #[cfg(feature = "sql")]
            CliError::Sql(e) => sql_code(e),
            _ => "failed".into(),
        }
    }

    /// Whether the output was a closed pipe (`deltalens files T | head`): not an error
    /// to report, as for `ls | head`.
    pub fn is_broken_pipe(&self) -> bool {
        use arrow_schema::ArrowError as A;
        use deltalens_present::PresentError as P;
        match self {
            CliError::Present(P::Io(e)) => e.kind() == io::ErrorKind::BrokenPipe,
            CliError::Present(P::Encode { source, .. }) => match source {
                A::IoError(_, e) => e.kind() == io::ErrorKind::BrokenPipe,
                // the CSV writer keeps only the I/O error's text
                A::CsvError(_) | A::ExternalError(_) => source.to_string().contains("Broken pipe"),
                _ => false,
            },
            _ => false,
        }
    }
}

/// The stable code of a DataFusion error: deltalens' own codes for a failed table read,
/// else by DataFusion's kind.
#[cfg(feature = "sql")]
fn sql_code(e: &deltalens_datafusion::datafusion::error::DataFusionError) -> String {
    use deltalens_datafusion::Error as E;
    use deltalens_datafusion::datafusion::error::DataFusionError;
    match e.find_root() {
        DataFusionError::External(x) => match x.downcast_ref::<E>() {
            Some(E::Delta(c)) => deltalens_api::core_code(c).into(),
            Some(E::Storage { source, .. }) => deltalens_api::storage_code(source).into(),
            Some(E::InvalidArgument(_)) => "invalid_argument".into(),
            Some(E::Sharing(s)) => s.code().into(),
            _ => "compute_failed".into(),
        },
        DataFusionError::SQL(..) => "syntax_error".into(),
        DataFusionError::Plan(_) | DataFusionError::SchemaError(..) => "invalid_argument".into(),
        DataFusionError::ResourcesExhausted(_) => "memory_limit_exceeded".into(),
        DataFusionError::NotImplemented(_) => "unsupported".into(),
        _ => "compute_failed".into(),
    }
}

/// Exit statuses by class of error, stable for scripts: 2 usage (bad arguments), 3 not
/// found (table, version), 4 unsupported (a table feature, a codec), 5 storage (access,
/// network), 6 the table's data or log is unreadable, 7 a limit or budget was reached,
/// 1 anything else.
pub fn exit_code_of(code: &str) -> u8 {
    match code {
        "invalid_argument" | "invalid_table_url" | "syntax_error" | "invalid_parameter"
        | "invalid_column" | "unsupported" => 2,
        "not_found" | "not_a_table" | "version_not_found" => 3,
        "unsupported_table_feature" | "codec_not_built" | "change_data_feed_not_enabled" => 4,
        "storage_failed"
        | "storage_permission_denied"
        | "storage_timed_out"
        | "listing_unsupported" => 5,
        "table_unreadable" | "compute_failed" => 6,
        c if c.ends_with("_budget_exceeded") || c.ends_with("_limit_exceeded") => 7,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_storage_failure_of_the_status_table_exits_5() {
        // the status table (deltalens_api::status) names storage failures by more codes
        // than "storage_failed": each keeps the storage class
        use deltalens_storage::StorageError;
        let failures = [
            StorageError::PermissionDenied {
                path: "p".into(),
                operation: "get",
                message: "m".into(),
            },
            StorageError::TimedOut {
                path: "p".into(),
                operation: "get",
                message: "m".into(),
            },
            StorageError::ListingUnsupported {
                path: "p".into(),
                message: "m".into(),
            },
            StorageError::Unreachable {
                path: "p".into(),
                operation: "get",
                message: "m".into(),
            },
        ];
        for e in failures {
            let code = deltalens_api::storage_code(&e);
            assert_eq!(exit_code_of(code), 5, "{code}");
        }
    }

    #[test]
    fn messages_keep_their_text_and_sources() {
        let e = CliError::CreateOutput {
            path: PathBuf::from("/x/out.csv"),
            source: io::Error::new(io::ErrorKind::PermissionDenied, "Permission denied"),
        };
        assert_eq!(e.to_string(), "cannot create /x/out.csv: Permission denied");
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(e.exit_code(), 1);
        let e = CliError::Argument {
            expected: "a positive number",
            given: "0".into(),
        };
        assert_eq!(e.to_string(), "expected a positive number, got \"0\"");
        assert_eq!(e.exit_code(), 2);
    }
}

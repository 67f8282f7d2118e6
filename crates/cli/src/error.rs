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

    /// A command-line value that does not parse (refused by clap, with exit code 2).
    #[error("expected {expected}, got {given:?}")]
    Argument {
        expected: &'static str,
        given: String,
    },

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

    /// The async runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),
}

impl CliError {
    /// The process exit code: 2 for a usage error, 1 for any other failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Argument { .. } => 2,
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

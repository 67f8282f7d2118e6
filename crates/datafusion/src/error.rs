//! The crate's one error type, and its conversion to DataFusion's.

use datafusion::error::DataFusionError;

/// What went wrong between deltalens and DataFusion. Each message says what happened,
/// where, and what to try.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the table failed (its log, its data, or a limit).
    #[error(transparent)]
    Delta(#[from] deltalens_core::Error),
    /// The table's storage could not be opened.
    #[error("cannot open the table at {location}: {source}")]
    Storage {
        /// The location as given.
        location: String,
        /// Why.
        #[source]
        source: deltalens_storage::StorageError,
    },
    /// A shared table (Delta Sharing) could not be opened.
    #[error(transparent)]
    Sharing(#[from] deltalens_sharing::SharingError),
    /// A batch or schema could not be written as Arrow IPC on deltalens' side (arrow 60).
    #[error("cannot hand Arrow data from deltalens to DataFusion: {0}")]
    Encode(#[source] arrow_schema::ArrowError),
    /// A batch or schema could not be read as Arrow IPC on DataFusion's side (arrow 59).
    #[error("cannot hand Arrow data from DataFusion to deltalens: {0}")]
    Decode(#[source] datafusion::arrow::error::ArrowError),
    /// A table option, a table function's argument or an encoded plan is not valid.
    #[error("{0}")]
    InvalidArgument(String),
    /// The work could not run: no Tokio runtime, a thread that could not start or died.
    #[error("{0}")]
    Internal(String),
}

impl From<Error> for DataFusionError {
    fn from(e: Error) -> Self {
        DataFusionError::External(Box::new(e))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

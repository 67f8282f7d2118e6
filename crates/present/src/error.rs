//! The one error type of the presentation layer.

use arrow_schema::ArrowError;

/// Why a document or a row output could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PresentError {
    /// Reading the snapshot's values failed (a partition value that does not parse, …).
    #[error(transparent)]
    Core(#[from] deltalens_core::Error),
    /// A sum over the files does not fit in 64 bits: the log is corrupt or hostile.
    #[error(
        "the {what} of partition [{partition}] overflows a 64-bit integer: the log's sizes or statistics are corrupt"
    )]
    Overflow {
        /// The sum that overflowed: `total_size` or `record_count`.
        what: &'static str,
        /// The partition, as `col=value,…`.
        partition: String,
    },
    /// CSV and the aligned text table hold flat values only.
    #[error(
        "{format} cannot hold the nested column `{column}` ({data_type}); choose JSON or Arrow, which hold nested values, or select other columns"
    )]
    NestedColumn {
        /// The output format's name (`CSV`).
        format: &'static str,
        /// The nested column's name.
        column: String,
        /// The column's Arrow type.
        data_type: String,
    },
    /// The Arrow writer of a format failed.
    #[error("writing {format} failed: {source}")]
    Encode {
        /// The format being written (its name, or `text` for cells).
        format: &'static str,
        /// The Arrow writer's error.
        #[source]
        source: ArrowError,
    },
    /// The Parquet writer failed.
    #[cfg(feature = "parquet")]
    #[error("writing parquet failed: {0}")]
    Parquet(#[source] parquet::errors::ParquetError),
    /// The destination refused the bytes (a closed pipe, a full disk).
    #[error("writing the output failed: {0}")]
    Io(#[source] std::io::Error),
}

/// A result with [`PresentError`].
pub type Result<T, E = PresentError> = std::result::Result<T, E>;

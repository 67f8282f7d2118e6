use deltalens_storage::StorageError;

/// Everything that can go wrong reading a Delta table.
///
/// Each variant says what happened, where, and what to try.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The storage backend failed.
    #[error(transparent)]
    Storage(#[from] StorageError),

    /// There is no `_delta_log` with commits at the location.
    #[error(
        "no Delta table found: {location} has no _delta_log commits or checkpoints; check the path points at the table root"
    )]
    NotATable {
        /// The table location that was looked at.
        location: String,
    },

    /// A commit needed to reconstruct the requested version is missing.
    #[error(
        "commit {version} is missing from _delta_log (needed to reconstruct version {target}); the log was cleaned up or is incomplete: try a version covered by a checkpoint"
    )]
    MissingVersion {
        /// The commit version that is missing.
        version: u64,
        /// The table version being reconstructed.
        target: u64,
    },

    /// The requested version is outside the range the log can reconstruct.
    #[error(
        "version {requested} cannot be read: this table can be read at versions {earliest} to {latest}"
    )]
    VersionOutOfRange {
        /// The version asked for.
        requested: u64,
        /// The earliest version the log can reconstruct.
        earliest: u64,
        /// The latest version of the table.
        latest: u64,
    },

    /// The requested timestamp is outside the table's commit history.
    #[error(
        "no version of the table at {requested}: the timestamp is {relation} the {bound} commit; use a timestamp between {earliest} (version {earliest_version}) and {latest} (version {latest_version})"
    )]
    TimestampOutOfRange {
        /// The timestamp asked for, as ISO-8601 UTC.
        requested: String,
        /// `before` or `after`.
        relation: &'static str,
        /// `earliest available` or `latest`: the commit the timestamp falls outside of.
        bound: &'static str,
        /// The earliest readable commit's timestamp, as ISO-8601 UTC.
        earliest: String,
        /// The earliest readable version.
        earliest_version: u64,
        /// The latest commit's timestamp, as ISO-8601 UTC.
        latest: String,
        /// The latest version.
        latest_version: u64,
    },

    /// A timestamp argument could not be parsed.
    #[error(
        "cannot read timestamp {input:?}: {reason}; use ISO-8601 like 2023-09-10T12:00:00Z, 2023-09-10 12:00:00 (UTC) or a date like 2023-09-10"
    )]
    InvalidTimestamp {
        /// The text given as a timestamp.
        input: String,
        /// Why it is not a timestamp.
        reason: String,
    },

    /// A line of a commit or checkpoint could not be parsed.
    #[error("{path} line {line} is not a valid Delta action: {message}")]
    InvalidAction {
        /// The log file's path.
        path: String,
        /// The 1-based line number in the file.
        line: usize,
        /// The JSON parser's message.
        message: String,
    },

    /// A log file has an invalid structure (e.g. no protocol or metadata).
    #[error("invalid Delta log at {path}: {message}")]
    InvalidLog {
        /// Where: a log file's path, or the log and version, or the partition column.
        path: String,
        /// What is wrong with it.
        message: String,
    },

    /// A Parquet file (checkpoint or sidecar) could not be read.
    #[error("cannot read Parquet file {path}: {message}")]
    Parquet {
        /// The Parquet file's path.
        path: String,
        /// The Parquet reader's message.
        message: String,
    },

    /// The table needs a reader protocol version deltalens does not implement.
    #[error("the table requires reader version {version}; deltalens reads reader versions 1 to 3")]
    UnsupportedReaderVersion {
        /// The table's `minReaderVersion`.
        version: i32,
    },

    /// The table needs a reader feature deltalens does not implement.
    #[error("the table requires the reader feature '{feature}', which deltalens does not support")]
    UnsupportedFeature {
        /// The reader feature's name, as listed in `readerFeatures`.
        feature: String,
    },

    /// The protocol action is malformed.
    #[error("invalid protocol action: {message}")]
    InvalidProtocol {
        /// What is wrong with the `protocol` action.
        message: String,
    },

    /// A deletion vector could not be read or failed its checks.
    #[error("deletion vector {descriptor}: {message}")]
    DeletionVector {
        /// The DV as `<storageType>:<pathOrInlineDv>`.
        descriptor: String,
        /// What could not be read or which check failed.
        message: String,
    },

    /// Data of a file could not be converted to the table schema.
    #[error("cannot read {path} as the table schema: {message}")]
    DataFile {
        /// The data file's path.
        path: String,
        /// Why its data does not fit the table schema.
        message: String,
    },

    /// The change data feed was not enabled at a version of the requested range.
    #[error(
        "the change data feed is not enabled at version {version} (delta.enableChangeDataFeed is not true); use `diff` for a row-level comparison, or a range that starts after CDF was enabled"
    )]
    CdfNotEnabled {
        /// A version of the range where `delta.enableChangeDataFeed` is not true.
        version: u64,
    },

    /// A scan or filter argument is not valid.
    #[error("{message}")]
    InvalidArgument {
        /// What is wrong with the argument, shown as is.
        message: String,
    },

    /// A Parquet file uses a compression codec left out of this build.
    #[error(
        "{path} is compressed with {codec}, a codec this build of deltalens leaves out (the edge worker does, to stay small); read this table with the deltalens CLI or the explorer"
    )]
    CodecNotBuilt {
        /// The codec's name as Parquet reports it.
        codec: String,
        /// The Parquet file's path.
        path: String,
    },

    /// A count or size read from the log is over one of deltalens' limits
    /// ([`crate::limits`]): the work is refused before it starts.
    #[error(
        "{path}: {what} is {value}, over the limit of {max} ({limit}); the file is corrupt or was not written by a Delta writer"
    )]
    LimitExceeded {
        /// The limit's name in [`crate::limits`].
        limit: &'static str,
        /// What was counted or measured (`the number of sidecar files`).
        what: &'static str,
        /// The count or size found.
        value: u64,
        /// The limit's value.
        max: u64,
        /// The file that holds the count or size.
        path: String,
    },

    /// A scan would decode (decompress and materialise) more bytes than its
    /// [`crate::scan::ScanOptions::max_decoded_bytes`] allows: refused before the row group
    /// whose column chunks would pass it, or at the batch that did.
    #[error(
        "reading {path} would pass this scan's budget of {max} decoded bytes (max_decoded_bytes; at {used}); narrow the scan (a filter, fewer columns, a LIMIT) or raise the budget"
    )]
    DecodedBytesExceeded {
        /// The scan's budget, in decoded bytes.
        max: u64,
        /// Decoded bytes counted so far, with the refused estimate or batch.
        used: u64,
        /// The data file being read.
        path: String,
    },

    /// A sum over the active files does not fit in 64 bits.
    #[error(
        "the {what} of the active files overflows a 64-bit sum: the log's add actions carry corrupt values"
    )]
    Overflow {
        /// What was summed (`size`, `row count`).
        what: &'static str,
    },

    /// A table property's value cannot be read (`delta.deletedFileRetentionDuration =
    /// "interval 2 fortnights"`).
    #[error("the table property {key} = {value:?} cannot be read: {reason}")]
    InvalidProperty {
        /// The property's key.
        key: String,
        /// Its value as written (cut to 80 characters).
        value: String,
        /// Why it cannot be read.
        reason: String,
    },

    /// The table schema could not be parsed or converted.
    #[error("invalid table schema: {message}")]
    InvalidSchema {
        /// What is wrong with the schema.
        message: String,
    },
}

impl Error {
    pub(crate) fn parquet(path: &str, e: impl std::fmt::Display) -> Self {
        let message = e.to_string();
        if let Some(codec) = message.split("Disabled feature at compile time: ").nth(1) {
            return Error::CodecNotBuilt {
                codec: codec.trim().to_string(),
                path: path.to_string(),
            };
        }
        for (marker, limit, what) in DECODER_LIMITS {
            if let Some((value, max)) = over_limit(&message, marker) {
                return Error::LimitExceeded {
                    limit,
                    what,
                    value,
                    max,
                    path: path.to_string(),
                };
            }
        }
        Error::Parquet {
            path: path.to_string(),
            message,
        }
    }
}

/// The limits the Parquet decoder enforces itself: the text its error starts with, the
/// limit's name in [`crate::limits`], and what it limits.
const DECODER_LIMITS: [(&str, &str, &str); 5] = [
    (
        parquet::file::serialized_reader::PAGE_TOO_LARGE,
        "MAX_PAGE_BYTES",
        "a page's uncompressed size",
    ),
    (
        parquet::file::page_budget::PAGES_OVER_BUDGET,
        "MAX_HELD_PAGE_BYTES",
        "the decompressed pages and dictionaries of one row group's columns held at once (fewer columns hold less)",
    ),
    (
        parquet::arrow::decode_budget::SKIP_OVER_BUDGET,
        "MAX_SKIPPED_LEVELS",
        "the levels and values one data file's decoding skips within pages (rows a resumed scan or the page index leaves out)",
    ),
    (
        parquet::schema::types::SCHEMA_TOO_DEEP,
        "MAX_SCHEMA_DEPTH",
        "the nesting depth of a data file's schema",
    ),
    (
        parquet::schema::types::SCHEMA_PATHS_OVER_BUDGET,
        "MAX_SCHEMA_PATH_ELEMENTS",
        "the path elements of a data file's leaf columns together (columns x their depth)",
    ),
];

/// The value and the limit of a decoder error that starts with `marker` and ends with
/// `<value> > <limit>`.
fn over_limit(message: &str, marker: &str) -> Option<(u64, u64)> {
    let (value, max) = message.split(marker).nth(1)?.split_once(" > ")?;
    let max = max.split(|c: char| !c.is_ascii_digit()).next()?;
    Some((value.trim().parse().ok()?, max.parse().ok()?))
}

/// Result type of the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

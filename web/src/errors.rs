//! The one place where core and storage errors become text for the user: what happened
//! and what to do about it.

use deltalens_core::Error;
use deltalens_storage::StorageError;

/// [`explain`] for a document that could not be made: the core's error underneath, or
/// what the presentation layer says.
pub fn explain_present(e: &deltalens_present::PresentError) -> String {
    match e {
        deltalens_present::PresentError::Core(c) => explain(c),
        other => other.to_string(),
    }
}

/// A message for the user: what happened, then what to try.
pub fn explain(e: &Error) -> String {
    let what = e.to_string();
    let hint = match e {
        // a fetch the browser refused: a network failure or a store without a CORS rule
        // for this page (the browser does not say which)
        Error::Storage(StorageError::Unreachable { .. }) => {
            "The browser could not read the table. If the URL is right, the storage must allow \
             this page's origin (CORS): allow GET and HEAD, the Range header (plus \
             Authorization and x-amz-* for S3 keys), and expose Content-Range, Content-Length \
             and ETag."
        }
        Error::Storage(StorageError::TimedOut { .. }) => {
            "The store did not answer in time (30 s): it may be overloaded or unreachable from \
             this network. Try again later."
        }
        Error::Storage(StorageError::InvalidResponse { .. }) => {
            "The server answered with other bytes than those asked for (a proxy or server \
             that mishandles Range requests); nothing of that answer was used. Try again, or \
             read the table from its store directly."
        }
        Error::Storage(StorageError::Http { status, .. }) if *status >= 500 => {
            "The store kept failing after several attempts: try again later."
        }
        Error::DecodedBytesExceeded { .. } => {
            "The rows asked for decompress to more data than a scan may decode at once: add \
             a filter, pick fewer columns or lower the row limit."
        }
        Error::LimitExceeded { .. } => {
            "The table's log asks for more work than deltalens allows (it is corrupt, or was \
             not written by a Delta writer)."
        }
        Error::Storage(StorageError::PermissionDenied { .. }) => {
            "Access was refused: check the credentials under 'Storage options' and that they \
             allow reading (and listing) the table's prefix."
        }
        Error::Storage(StorageError::NotFound { .. }) | Error::NotATable { .. } => {
            "Check that the URL points at the table root (the folder holding _delta_log/)."
        }
        Error::UnsupportedFeature { .. } | Error::UnsupportedReaderVersion { .. } => {
            "This table uses a Delta feature deltalens cannot read yet; other engines \
             (Spark, delta-rs) may."
        }
        Error::VersionOutOfRange { .. } | Error::TimestampOutOfRange { .. } => {
            "Pick a version or time inside the table's history."
        }
        Error::CdfNotEnabled { .. } => {
            "The change data feed is off for part of this range: the Changes tab shows the \
             row-level diff instead."
        }
        Error::InvalidArgument { .. } | Error::InvalidTimestamp { .. } => {
            "Check the filter or the time: filters use SQL syntax (price > 10 AND brand = \
             'x'); times are ISO-8601 (2024-01-31T12:00:00Z) or dates."
        }
        _ => "",
    };
    if hint.is_empty() {
        what
    } else {
        format!("{what}\n{hint}")
    }
}

//! The one place where core and storage errors become text for the user: what happened
//! and what to do about it.

use deltalens_core::Error;
use deltalens_storage::StorageError;

/// A message for the user: what happened, then what to try.
pub fn explain(e: &Error) -> String {
    let what = e.to_string();
    let hint = match e {
        // the one match on text: a fetch the browser refused (network or CORS) is a
        // `Backend` error like any other backend failure; fetch-storage says which in the
        // message only (its CORS hint, the browser's "Failed to fetch")
        Error::Storage(StorageError::Backend { message, .. })
            if message.contains("CORS") || message.contains("Failed to fetch") =>
        {
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

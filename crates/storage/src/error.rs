use crate::ByteRange;

/// What went wrong talking to a table's storage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The object does not exist.
    #[error(
        "{path} was not found in the table's storage; check the table URL and that the file was not vacuumed"
    )]
    NotFound { path: String },

    /// The store refused the request.
    #[error(
        "access to {path} was denied during {operation}: {message}; check the credentials and that they allow {operation}"
    )]
    PermissionDenied {
        path: String,
        operation: &'static str,
        message: String,
    },

    /// The range starts beyond the end of the object.
    #[error("range {range} is outside {path} ({size} bytes)")]
    InvalidRange {
        path: String,
        range: ByteRange,
        size: u64,
    },

    /// The store cannot list (plain HTTP hosting) or refuses to (403/405 on list).
    #[error("listing {path} is not possible here: {message}")]
    ListingUnsupported { path: String, message: String },

    /// The table location could not be understood.
    #[error("cannot open table location {location}: {message}")]
    InvalidLocation { location: String, message: String },

    /// A per-request budget ran out (see [`crate::BudgetStorage`]).
    #[error(
        "the {budget} budget of this request ({limit}) ran out at {used} while reading {path}; narrow the query (a filter, fewer columns, a LIMIT) or raise the budget"
    )]
    BudgetExceeded {
        budget: crate::BudgetKind,
        limit: u64,
        used: u64,
        path: String,
    },

    /// The store answered with an HTTP status that is neither success nor one of the
    /// answers above (404, 401/403, listing refused).
    #[error("{operation} of {path} failed with HTTP {status}: {message}")]
    Http {
        path: String,
        operation: &'static str,
        status: u16,
        message: String,
    },

    /// The store's answer contradicts the request (a `Content-Range` that is not the
    /// range asked for, a body shorter than announced): never used as data.
    #[error("{operation} of {path}: the answer does not match the request: {message}")]
    InvalidResponse {
        path: String,
        operation: &'static str,
        message: String,
    },

    /// The store did not answer (or did not finish its answer) within the backend's time
    /// limit. Not retried ([`crate::is_transient`]): a store that stalls once for that long
    /// stalls again, and retrying multiplies the wait (five 30 s attempts per request).
    #[error("{operation} of {path} timed out: {message}")]
    TimedOut {
        path: String,
        operation: &'static str,
        message: String,
    },

    /// The request got no answer at all: a network failure, or — in a browser — a store
    /// that does not allow the page's origin (CORS), which the browser reports the same
    /// way, without saying which. Retried like any network failure.
    #[error("{operation} of {path} failed: {message}")]
    Unreachable {
        path: String,
        operation: &'static str,
        message: String,
    },

    /// Any other failure of the backend (network errors, dropped connections).
    #[error("{operation} of {path} failed: {message}")]
    Backend {
        path: String,
        operation: &'static str,
        message: String,
    },
}

impl StorageError {
    /// True when the error means the object does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::NotFound { .. })
    }

    /// True when a list failed because the store cannot or will not list.
    pub fn is_listing_refused(&self) -> bool {
        matches!(
            self,
            StorageError::ListingUnsupported { .. }
                | StorageError::PermissionDenied {
                    operation: "list",
                    ..
                }
        )
    }
}

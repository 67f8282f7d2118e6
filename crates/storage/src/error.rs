use crate::ByteRange;

/// What went wrong talking to a table's storage.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The object does not exist.
    #[error(
        "{path} was not found in the table's storage; check the table URL and that the file was not vacuumed"
    )]
    NotFound {
        /// The object's path from the table root.
        path: String,
    },

    /// The store refused the request.
    #[error(
        "access to {path} was denied during {operation}: {message}; check the credentials and that they allow {operation}"
    )]
    PermissionDenied {
        /// The object's path from the table root (the prefix, for a list).
        path: String,
        /// The operation: `list`, `get` (whole or ranged) or `head`.
        operation: &'static str,
        /// The store's answer and a hint about the credentials.
        message: String,
    },

    /// The range starts beyond the end of the object.
    #[error("range {range} is outside {path} ({size} bytes)")]
    InvalidRange {
        /// The object's path from the table root.
        path: String,
        /// The range asked for.
        range: ByteRange,
        /// The object's size in bytes.
        size: u64,
    },

    /// The store cannot list (plain HTTP hosting) or refuses to (403/405 on list).
    #[error("listing {path} is not possible here: {message}")]
    ListingUnsupported {
        /// The prefix that was to be listed.
        path: String,
        /// Why: the store's answer.
        message: String,
    },

    /// The table location could not be understood.
    #[error("cannot open table location {location}: {message}")]
    InvalidLocation {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        message: String,
    },

    /// A per-request budget ran out (see [`crate::BudgetStorage`]).
    #[error(
        "the {budget} budget of this request ({limit}) ran out at {used} while reading {path}; narrow the query (a filter, fewer columns, a LIMIT) or raise the budget"
    )]
    BudgetExceeded {
        /// Which budget.
        budget: crate::BudgetKind,
        /// The budget, in its unit (requests, bytes, milliseconds).
        limit: u64,
        /// What was used when it ran out, in the same unit.
        used: u64,
        /// The object being read.
        path: String,
    },

    /// The store answered with an HTTP status that is neither success nor one of the
    /// answers above (404, 401/403, listing refused).
    #[error("{operation} of {path} failed with HTTP {status}: {message}")]
    Http {
        /// The object's path from the table root (the prefix, for a list).
        path: String,
        /// The operation: `list`, `get` (whole or ranged) or `head`.
        operation: &'static str,
        /// The HTTP status code.
        status: u16,
        /// Where the answer came from.
        message: String,
    },

    /// The store's answer contradicts the request (a `Content-Range` that is not the
    /// range asked for, a body shorter than announced): never used as data.
    #[error("{operation} of {path}: the answer does not match the request: {message}")]
    InvalidResponse {
        /// The object's path from the table root (the prefix, for a list).
        path: String,
        /// The operation: `list`, `get` (whole or ranged) or `head`.
        operation: &'static str,
        /// How the answer differs from the request.
        message: String,
    },

    /// The store did not answer (or did not finish its answer) within the backend's time
    /// limit. Not retried ([`crate::is_transient`]): a store that stalls once for that long
    /// stalls again, and retrying multiplies the wait (five 30 s attempts per request).
    #[error("{operation} of {path} timed out: {message}")]
    TimedOut {
        /// The object's path from the table root (the prefix, for a list).
        path: String,
        /// The operation: `list`, `get` (whole or ranged) or `head`.
        operation: &'static str,
        /// What did not arrive, and within which time limit.
        message: String,
    },

    /// The request got no answer at all: a network failure, or — in a browser — a store
    /// that does not allow the page's origin (CORS), which the browser reports the same
    /// way, without saying which. Retried like any network failure.
    #[error("{operation} of {path} failed: {message}")]
    Unreachable {
        /// The object's path from the table root (the prefix, for a list).
        path: String,
        /// The operation: `list`, `get` (whole or ranged) or `head`.
        operation: &'static str,
        /// The network error as reported, and a hint.
        message: String,
    },

    /// Any other failure of the backend (network errors, dropped connections).
    #[error("{operation} of {path} failed: {message}")]
    Backend {
        /// The object's path from the table root (the prefix, for a list).
        path: String,
        /// The operation: `list`, `get` (whole or ranged) or `head`.
        operation: &'static str,
        /// The backend's error.
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

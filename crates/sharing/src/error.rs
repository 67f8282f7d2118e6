//! What went wrong with a share, in words a data engineer can act on: the share, the table
//! and the server's own message are named.

/// A Delta Sharing failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SharingError {
    /// The profile file cannot be used.
    #[error("the Delta Sharing profile {profile} {why}")]
    BadProfile {
        /// The profile (its path or URL).
        profile: String,
        /// What is wrong with it.
        why: String,
    },
    /// The profile's bearer token expired.
    #[error(
        "the bearer token of the Delta Sharing profile {profile} expired at {at}: ask the data provider for a new profile file"
    )]
    Expired {
        /// The profile.
        profile: String,
        /// Its `expirationTime`.
        at: String,
    },
    /// The name is not `share[.schema[.table]]` as the protocol allows names.
    #[error("{name:?} is not a Delta Sharing name: {why} (use <profile>#<share>.<schema>.<table>)")]
    BadName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// The server refused the token (401) or the recipient's access (403).
    #[error(
        "the Delta Sharing server {endpoint} refused access to {what} ({status}: {message}): check the profile's token, or ask the provider"
    )]
    Denied {
        /// The server.
        endpoint: String,
        /// What was asked for.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The share, schema or table does not exist (404).
    #[error(
        "{what} was not found on the Delta Sharing server {endpoint} ({message}); names are case-insensitive: list the share to see what it holds"
    )]
    NotFound {
        /// The server.
        endpoint: String,
        /// What was asked for.
        what: String,
        /// The server's message.
        message: String,
    },
    /// The server could not be reached (the sender's error: DNS, connection, timeout).
    #[error("the Delta Sharing server {endpoint} could not be reached for {what}: {message}")]
    Unreachable {
        /// The server (or token endpoint).
        endpoint: String,
        /// What was asked for.
        what: String,
        /// The HTTP client's message.
        message: String,
    },
    /// Any other error answer.
    #[error("the Delta Sharing server {endpoint} answered {status} to {what}: {message}")]
    Server {
        /// The server.
        endpoint: String,
        /// What was asked for.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The server's message (or the start of its body).
        message: String,
    },
    /// A 2xx answer that is not what the protocol says.
    #[error("the Delta Sharing server {endpoint} gave an invalid answer to {what}: {why}")]
    InvalidAnswer {
        /// The server.
        endpoint: String,
        /// What was asked for.
        what: String,
        /// What is wrong with it.
        why: String,
    },
    /// An answer passed one of this crate's limits.
    #[error(
        "the Delta Sharing server {endpoint}'s answer to {what} passed {limit} ({value} > {max}): deltalens stops there rather than hold it"
    )]
    LimitExceeded {
        /// The server.
        endpoint: String,
        /// What was asked for.
        what: String,
        /// The limit's name (a constant of this crate).
        limit: &'static str,
        /// The figure reached.
        value: u64,
        /// The limit.
        max: u64,
    },
    /// The table needs something deltalens does not do with shares.
    #[error("{what} on the Delta Sharing server {endpoint}: {why}")]
    Unsupported {
        /// The server.
        endpoint: String,
        /// The table.
        what: String,
        /// What is not supported, and what to do.
        why: String,
    },
}

impl SharingError {
    /// The class of the failure, in the codes the front ends map to exit statuses and
    /// exceptions (`invalid_argument`, `not_found`, `storage_permission_denied`,
    /// `storage_failed`, `sharing_limit_exceeded`, `unsupported_table_feature`).
    pub fn code(&self) -> &'static str {
        match self {
            SharingError::BadProfile { .. } | SharingError::BadName { .. } => "invalid_argument",
            SharingError::NotFound { .. } => "not_found",
            SharingError::Denied { .. } | SharingError::Expired { .. } => {
                "storage_permission_denied"
            }
            SharingError::Unreachable { .. }
            | SharingError::Server { .. }
            | SharingError::InvalidAnswer { .. } => "storage_failed",
            SharingError::LimitExceeded { .. } => "sharing_limit_exceeded",
            SharingError::Unsupported { .. } => "unsupported_table_feature",
        }
    }
}

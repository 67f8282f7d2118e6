//! What went wrong asking the catalog, in words a data engineer can act on.

/// A catalog failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No endpoint or token configured.
    #[error(
        "Unity Catalog is not configured: set DATABRICKS_HOST and DATABRICKS_TOKEN (Databricks) or UC_ENDPOINT and UC_TOKEN (OSS Unity Catalog), or pass them as options ({0})"
    )]
    NotConfigured(String),
    /// The endpoint is not a URL deltalens sends a token to.
    #[error("the Unity Catalog endpoint {endpoint:?} {why}")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        why: String,
    },
    /// The name is not `catalog[.schema[.table]]`.
    #[error(
        "{0:?} is not a Unity Catalog name: use uc://catalog, uc://catalog.schema or uc://catalog.schema.table"
    )]
    BadName(String),
    /// The token was refused (401).
    #[error(
        "Unity Catalog at {endpoint} refused the token ({message}): check DATABRICKS_TOKEN / UC_TOKEN, or renew it"
    )]
    Unauthenticated {
        /// The catalog endpoint.
        endpoint: String,
        /// The catalog's message.
        message: String,
    },
    /// The catalog, schema or table does not exist (or is invisible to this principal).
    #[error(
        "{name} was not found in Unity Catalog at {endpoint} ({message}); check the name, or that you may see it (USE CATALOG, USE SCHEMA)"
    )]
    NotFound {
        /// The name asked for.
        name: String,
        /// The catalog endpoint.
        endpoint: String,
        /// The catalog's message.
        message: String,
    },
    /// The principal may not read the table (403).
    #[error(
        "Unity Catalog denied reading {name}: {message}; reading it from outside Databricks needs SELECT on the table and EXTERNAL USE SCHEMA on its schema"
    )]
    PermissionDenied {
        /// The table.
        name: String,
        /// The catalog's message.
        message: String,
    },
    /// The table is not a Delta table.
    #[error("{name} is a {format} table, not Delta: deltalens reads Delta tables only")]
    NotDelta {
        /// The table.
        name: String,
        /// Its data source format.
        format: String,
    },
    /// The name is a view, which has no files to read.
    #[error("{name} is a view ({kind}), not a table: open the tables it reads instead")]
    View {
        /// The name.
        name: String,
        /// Its table type.
        kind: String,
    },
    /// The table has a location deltalens cannot read.
    #[error("{name} is stored at {location:?}, which deltalens cannot open: {why}")]
    BadLocation {
        /// The table.
        name: String,
        /// The storage location.
        location: String,
        /// Why.
        why: String,
    },
    /// The catalog vended no credential deltalens can use.
    #[error("Unity Catalog vended no usable read credential for {name}: {why}")]
    NoCredential {
        /// The table.
        name: String,
        /// What was missing.
        why: String,
    },
    /// Any other answer.
    #[error("Unity Catalog at {endpoint} answered HTTP {status} to {what}: {message}")]
    Http {
        /// The catalog endpoint.
        endpoint: String,
        /// What was asked.
        what: String,
        /// The status.
        status: u16,
        /// The catalog's message.
        message: String,
    },
    /// An answer that is not what the API specifies.
    #[error("Unity Catalog at {endpoint} sent an answer to {what} that is not the API's: {why}")]
    InvalidResponse {
        /// The catalog endpoint.
        endpoint: String,
        /// What was asked.
        what: String,
        /// What is wrong with it.
        why: String,
    },
    /// The catalog could not be reached.
    #[error("Unity Catalog at {endpoint} could not be reached for {what}: {message}")]
    Unreachable {
        /// The catalog endpoint.
        endpoint: String,
        /// What was asked.
        what: String,
        /// The transport's error.
        message: String,
    },
}

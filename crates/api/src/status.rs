//! The one table from a failure to what an HTTP front end answers: a status and a stable
//! code. The worker, `deltalens serve`'s relay and the catalog routes of both answer
//! through it, so the same failure gets the same status and code from each
//! (`{"error": {"code", "message"}}`). [`storage_failure`] and [`catalog_failure`] say
//! which row a storage or catalog error is.

use deltalens_catalog::CatalogError;
use deltalens_storage::{BudgetKind, StorageError};

/// What went wrong, as HTTP tells it: one row of the table ([`Failure::status`],
/// [`Failure::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// A request parameter (or the query body) is missing or malformed.
    InvalidParameter,
    /// The table URL does not parse, or names something that is not a table.
    InvalidTableUrl,
    /// No `Authorization: Bearer` with the server's token.
    Unauthorized,
    /// A route that needs something the server was not given (a fan-out it is not running).
    Forbidden,
    /// The table is not among those the server relays or allows.
    TableNotAllowed,
    /// The path is not a route.
    NoRoute,
    /// The route answers other methods.
    MethodNotAllowed,
    /// The query body is over the server's limit.
    QueryTooLarge,
    /// The server's own configuration is wrong.
    BadConfiguration,
    /// The server has no token and no explicit public flag: it serves nothing.
    NotConfigured,
    /// The object (a log file, a data file) is not in the store.
    NotFound,
    /// The store refused the server's credentials for this object.
    StoragePermissionDenied,
    /// The store cannot list (plain HTTPS without a listing).
    ListingUnsupported,
    /// The store did not answer in time.
    StorageTimedOut,
    /// The store failed otherwise (an HTTP error, unreachable).
    StorageFailed,
    /// A budget of the request ran out (bytes, subrequests, rows; its time: 408).
    BudgetExceeded(BudgetKind),
    /// The catalog has no such catalog, schema or table.
    CatalogNotFound,
    /// The catalog refused the server's identity for this name.
    CatalogPermissionDenied,
    /// The catalog did not accept the server's token.
    CatalogUnauthenticated,
    /// The catalog's entry is not a Delta table (a view, another format), or the name is
    /// not a catalog name.
    NotADeltaTable,
    /// The server has no catalog configured, or a bad endpoint for it.
    CatalogNotConfigured,
    /// The catalog failed otherwise.
    CatalogFailed,
    /// A worker asked for a split of a fanned-out query could not be reached.
    SplitUnreachable,
    /// The worker's runtime failed (its JavaScript bindings).
    WorkerRuntime,
    /// The server failed in a way no row above names.
    Internal,
}

impl Failure {
    /// Every row, for tests and documentation.
    pub const ALL: [Failure; 29] = [
        Failure::InvalidParameter,
        Failure::InvalidTableUrl,
        Failure::Unauthorized,
        Failure::Forbidden,
        Failure::TableNotAllowed,
        Failure::NoRoute,
        Failure::MethodNotAllowed,
        Failure::QueryTooLarge,
        Failure::BadConfiguration,
        Failure::NotConfigured,
        Failure::NotFound,
        Failure::StoragePermissionDenied,
        Failure::ListingUnsupported,
        Failure::StorageTimedOut,
        Failure::StorageFailed,
        Failure::BudgetExceeded(BudgetKind::Subrequests),
        Failure::BudgetExceeded(BudgetKind::Bytes),
        Failure::BudgetExceeded(BudgetKind::WallTime),
        Failure::BudgetExceeded(BudgetKind::Rows),
        Failure::BudgetExceeded(BudgetKind::RowsBuffered),
        Failure::CatalogNotFound,
        Failure::CatalogPermissionDenied,
        Failure::CatalogUnauthenticated,
        Failure::NotADeltaTable,
        Failure::CatalogNotConfigured,
        Failure::CatalogFailed,
        Failure::SplitUnreachable,
        Failure::WorkerRuntime,
        Failure::Internal,
    ];

    /// The row: (HTTP status, stable code).
    fn row(self) -> (u16, &'static str) {
        match self {
            Failure::InvalidParameter => (400, "invalid_parameter"),
            Failure::InvalidTableUrl => (400, "invalid_table_url"),
            Failure::Unauthorized => (401, "unauthorized"),
            Failure::Forbidden => (403, "forbidden"),
            Failure::TableNotAllowed => (403, "table_not_allowed"),
            Failure::NoRoute => (404, "not_found"),
            Failure::MethodNotAllowed => (405, "method_not_allowed"),
            Failure::QueryTooLarge => (413, "query_too_large"),
            Failure::BadConfiguration => (500, "bad_configuration"),
            Failure::NotConfigured => (503, "not_configured"),
            Failure::NotFound => (404, "not_found"),
            // the store refused: the request cannot be authorized, whoever relays it
            Failure::StoragePermissionDenied => (403, "storage_permission_denied"),
            Failure::ListingUnsupported => (501, "listing_unsupported"),
            Failure::StorageTimedOut => (504, "storage_timed_out"),
            Failure::StorageFailed => (502, "storage_failed"),
            Failure::BudgetExceeded(kind) => match kind {
                BudgetKind::Subrequests => (413, "subrequests_budget_exceeded"),
                BudgetKind::Bytes => (413, "bytes_budget_exceeded"),
                BudgetKind::WallTime => (408, "wall_time_ms_budget_exceeded"),
                BudgetKind::Rows => (413, "rows_budget_exceeded"),
                BudgetKind::RowsBuffered => (413, "rows_buffered_budget_exceeded"),
            },
            Failure::CatalogNotFound => (404, "catalog_not_found"),
            Failure::CatalogPermissionDenied => (403, "catalog_permission_denied"),
            // the server's own token for the catalog: the gateway's fault
            Failure::CatalogUnauthenticated => (502, "catalog_unauthenticated"),
            Failure::NotADeltaTable => (400, "not_a_delta_table"),
            Failure::CatalogNotConfigured => (500, "catalog_not_configured"),
            Failure::CatalogFailed => (502, "catalog_failed"),
            Failure::SplitUnreachable => (502, "split_unreachable"),
            Failure::WorkerRuntime => (500, "worker_error"),
            Failure::Internal => (500, "internal_error"),
        }
    }

    /// The HTTP status.
    pub fn status(self) -> u16 {
        self.row().0
    }

    /// The stable code (`error.code` of the answer).
    pub fn code(self) -> &'static str {
        self.row().1
    }

    /// The status line's text, `"403 Forbidden"`.
    pub fn status_line(self) -> &'static str {
        status_line(self.status())
    }
}

/// The status line's text of an HTTP status this table uses (`"502 Bad Gateway"` for
/// any other).
pub fn status_line(status: u16) -> &'static str {
    match status {
        400 => "400 Bad Request",
        401 => "401 Unauthorized",
        403 => "403 Forbidden",
        404 => "404 Not Found",
        405 => "405 Method Not Allowed",
        408 => "408 Request Timeout",
        409 => "409 Conflict",
        413 => "413 Content Too Large",
        416 => "416 Range Not Satisfiable",
        422 => "422 Unprocessable Content",
        500 => "500 Internal Server Error",
        501 => "501 Not Implemented",
        503 => "503 Service Unavailable",
        504 => "504 Gateway Timeout",
        _ => "502 Bad Gateway",
    }
}

/// The row of a storage error.
pub fn storage_failure(e: &StorageError) -> Failure {
    match e {
        StorageError::NotFound { .. } => Failure::NotFound,
        StorageError::PermissionDenied { .. } => Failure::StoragePermissionDenied,
        StorageError::InvalidLocation { .. } => Failure::InvalidTableUrl,
        StorageError::ListingUnsupported { .. } => Failure::ListingUnsupported,
        StorageError::TimedOut { .. } => Failure::StorageTimedOut,
        StorageError::BudgetExceeded { budget, .. } => Failure::BudgetExceeded(*budget),
        _ => Failure::StorageFailed,
    }
}

/// The row of a catalog error.
pub fn catalog_failure(e: &CatalogError) -> Failure {
    match e {
        CatalogError::NotFound { .. } => Failure::CatalogNotFound,
        CatalogError::PermissionDenied { .. } => Failure::CatalogPermissionDenied,
        CatalogError::Unauthenticated { .. } => Failure::CatalogUnauthenticated,
        CatalogError::NotDelta { .. } | CatalogError::View { .. } | CatalogError::BadName(_) => {
            Failure::NotADeltaTable
        }
        CatalogError::NotConfigured(_) | CatalogError::BadEndpoint { .. } => {
            Failure::CatalogNotConfigured
        }
        _ => Failure::CatalogFailed,
    }
}

/// The JSON error document every HTTP front end answers a failure with.
pub fn error_document(code: &str, message: &str) -> String {
    serde_json::json!({"error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_a_client_or_server_status_a_code_and_a_status_line() {
        for f in Failure::ALL {
            assert!((400..=599).contains(&f.status()), "{f:?}");
            assert!(!f.code().is_empty() && f.code().is_ascii(), "{f:?}");
            assert!(
                f.status_line().starts_with(&f.status().to_string()),
                "{f:?}"
            );
        }
    }

    #[test]
    fn a_budget_code_is_its_name_and_time_is_408() {
        for f in Failure::ALL {
            if let Failure::BudgetExceeded(kind) = f {
                assert_eq!(f.code(), format!("{kind}_budget_exceeded"));
                assert_eq!(
                    f.status(),
                    if kind == BudgetKind::WallTime {
                        408
                    } else {
                        413
                    }
                );
            }
        }
    }

    #[test]
    fn storage_errors_map_as_the_relays_and_the_worker_agreed() {
        let denied = StorageError::PermissionDenied {
            path: "p".into(),
            operation: "get",
            message: "m".into(),
        };
        // (serve said 403, the worker 502: now 403 from both)
        assert_eq!(storage_failure(&denied).status(), 403);
        let timed_out = StorageError::TimedOut {
            path: "p".into(),
            operation: "get",
            message: "m".into(),
        };
        // (serve said 504, the worker 502)
        assert_eq!(storage_failure(&timed_out).status(), 504);
        let listing = StorageError::ListingUnsupported {
            path: "p".into(),
            message: "m".into(),
        };
        // (serve said 501, the worker 502)
        assert_eq!(storage_failure(&listing).status(), 501);
        assert_eq!(
            storage_failure(&StorageError::NotFound { path: "p".into() }).code(),
            "not_found"
        );
    }
}

use deltalens_storage::{BudgetKind, StorageError};

use crate::status::{Failure, storage_failure};

/// Everything that can go wrong answering a query. Each variant says what happened and
/// what to try; [`ApiError::status`] is the HTTP status the worker answers with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The SQL does not parse.
    #[error("cannot parse the query: {message}")]
    Syntax {
        /// The SQL parser's message.
        message: String,
    },

    /// The SQL parses but uses something outside the supported subset.
    #[error("{construct} is not supported: {hint}")]
    Unsupported {
        /// The construct refused, as written (`WITH`, `UNION`, …).
        construct: String,
        /// What to write instead, or what is supported.
        hint: String,
    },

    /// A request parameter is missing or malformed.
    #[error("invalid parameter `{parameter}`: {message}")]
    InvalidParameter {
        /// The parameter's name.
        parameter: String,
        /// What is wrong with its value.
        message: String,
    },

    /// The query refers to a column that is not there, or uses it wrongly.
    #[error("column `{column}`: {message}")]
    Column {
        /// The column as named in the query (`*` for an aggregate of `*`).
        column: String,
        /// What is wrong.
        message: String,
    },

    /// The table URL is not covered by the allowlist.
    #[error(
        "the table {table} is not allowed here: its URL does not start with any of the {allowed} allowed prefixes; ask the operator to add it to DELTALENS_ALLOWED_TABLES"
    )]
    Forbidden {
        /// The table URL requested.
        table: String,
        /// How many prefixes the allowlist has.
        allowed: usize,
    },

    /// The result has more rows than the request may return.
    #[error(
        "the rows budget of this request ({limit}) ran out: the result has more rows; add a LIMIT, a filter or a GROUP BY"
    )]
    RowsBudget {
        /// The most rows the request may return.
        limit: usize,
    },

    /// The file list asked for is longer than one response may hold.
    #[error(
        "this version has more active files than one response may hold ({limit}, the rows budget): ask for pages with limit (at most {limit}) and offset"
    )]
    FilesBudget {
        /// The most files one response may hold.
        limit: usize,
    },

    /// Reading the table failed.
    #[error(transparent)]
    Core(#[from] deltalens_core::Error),

    /// A computation over the rows failed.
    #[error("cannot compute {what}: {message}")]
    Compute {
        /// What was being computed (an aggregate, a sort, …).
        what: String,
        /// Why it failed (an Arrow error, an overflow).
        message: String,
    },

    /// One split of a fanned-out query failed on every attempt: the query fails, naming
    /// the split (its position in the plan) and the last error.
    #[error(
        "split {split} of {splits} failed after {attempts} attempt(s): {source}; the other splits' answers were dropped, try again or query fewer files (a filter, a smaller table)"
    )]
    SplitFailed {
        /// The split's position in its plan.
        split: usize,
        /// How many splits the plan has.
        splits: usize,
        /// How many times it was tried.
        attempts: u32,
        /// The last attempt's error.
        source: Box<ApiError>,
    },

    /// A worker asked for a split answered with an error (its status, code and message).
    #[error("a split worker answered {status} {code}: {message}")]
    Remote {
        /// Its HTTP status.
        status: u16,
        /// Its `error.code`.
        code: String,
        /// Its `error.message`.
        message: String,
    },

    /// Writing the result failed.
    #[error("cannot write the result as {format}: {message}")]
    Encode {
        /// The output format's name (`rows` when the format is not known).
        format: &'static str,
        /// The writer's error.
        message: String,
    },
}

impl From<deltalens_present::PresentError> for ApiError {
    fn from(e: deltalens_present::PresentError) -> Self {
        use deltalens_present::PresentError as P;
        match e {
            P::Core(c) => ApiError::Core(c),
            P::NestedColumn { .. } => ApiError::param("format", e.to_string()),
            P::Encode { format, source } => ApiError::Encode {
                format,
                message: source.to_string(),
            },
            other => ApiError::Encode {
                format: "rows",
                message: other.to_string(),
            },
        }
    }
}

/// Result type of this crate.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

impl ApiError {
    pub(crate) fn compute(what: impl Into<String>, e: impl std::fmt::Display) -> Self {
        ApiError::Compute {
            what: what.into(),
            message: e.to_string(),
        }
    }

    pub(crate) fn unsupported(construct: impl Into<String>, hint: impl Into<String>) -> Self {
        ApiError::Unsupported {
            construct: construct.into(),
            hint: hint.into(),
        }
    }

    pub(crate) fn param(parameter: &str, message: impl Into<String>) -> Self {
        ApiError::InvalidParameter {
            parameter: parameter.to_string(),
            message: message.into(),
        }
    }

    /// The storage error underneath, if any.
    pub fn storage(&self) -> Option<&StorageError> {
        match self {
            ApiError::Core(deltalens_core::Error::Storage(s)) => Some(s),
            _ => None,
        }
    }

    /// The budget that ran out, if that is what happened.
    pub fn budget(&self) -> Option<BudgetKind> {
        match self {
            ApiError::RowsBudget { .. } | ApiError::FilesBudget { .. } => Some(BudgetKind::Rows),
            ApiError::SplitFailed { source, .. } => source.budget(),
            _ => match self.storage() {
                Some(StorageError::BudgetExceeded { budget, .. }) => Some(*budget),
                _ => None,
            },
        }
    }

    /// A stable machine-readable code (`{"error": {"code": …}}`).
    pub fn code(&self) -> String {
        match self {
            ApiError::Remote { code, .. } => code.clone(),
            // a split refused for a budget keeps the budget's code, also when the split
            // answered remotely (a code only, no budget kind)
            ApiError::SplitFailed { source, .. } if source.code().ends_with("_budget_exceeded") => {
                source.code()
            }
            _ => self
                .failure()
                .map_or_else(|| self.own_code().to_string(), |f| f.code().to_string()),
        }
    }

    /// The HTTP status for this error: 4xx when the request (or a budget) is at fault,
    /// 502 when the table's storage failed, 500 for a table we cannot make sense of.
    pub fn status(&self) -> u16 {
        match self {
            ApiError::Remote { status, .. } => *status,
            _ => self
                .failure()
                .map_or_else(|| self.own_status(), Failure::status),
        }
    }

    /// This error's row of the front ends' table ([`crate::status`]), where it has one:
    /// budgets, refusals and storage failures, which every HTTP front end also meets.
    pub fn failure(&self) -> Option<Failure> {
        if let Some(b) = self.budget() {
            return Some(Failure::BudgetExceeded(b));
        }
        match self {
            ApiError::InvalidParameter { .. } => Some(Failure::InvalidParameter),
            ApiError::Forbidden { .. } => Some(Failure::TableNotAllowed),
            ApiError::Core(deltalens_core::Error::Storage(s)) => Some(storage_failure(s)),
            _ => None,
        }
    }

    /// The code of an error only a query meets (no row of the table).
    fn own_code(&self) -> &'static str {
        match self {
            ApiError::Syntax { .. } => "syntax_error",
            ApiError::Unsupported { .. } => "unsupported",
            ApiError::Column { .. } => "invalid_column",
            ApiError::Compute { .. } => "compute_failed",
            ApiError::Encode { .. } => "encode_failed",
            ApiError::SplitFailed { .. } => "split_failed",
            ApiError::Core(c) => core_code(c),
            _ => "internal_error",
        }
    }

    /// The status of an error only a query meets (no row of the table).
    fn own_status(&self) -> u16 {
        use deltalens_core::Error as C;
        match self {
            ApiError::Syntax { .. } | ApiError::Unsupported { .. } | ApiError::Column { .. } => 400,
            ApiError::Compute { .. } => 422,
            // a split's storage or worker failed: the gateway's fault, not the request's;
            // a split refused with a 4xx (a budget, a bad query, the store refusing the
            // credentials: retrying cannot help) keeps it
            ApiError::SplitFailed { source, .. } => match source.status() {
                s @ 400..=499 => s,
                _ => 502,
            },
            ApiError::Core(c) => match c {
                C::NotATable { .. } => 404,
                C::VersionOutOfRange { .. }
                | C::TimestampOutOfRange { .. }
                | C::MissingVersion { .. } => 404,
                C::InvalidTimestamp { .. }
                | C::InvalidArgument { .. }
                | C::InvalidSchema { .. } => 400,
                C::CdfNotEnabled { .. } => 409,
                C::LimitExceeded { .. } => 422,
                C::DecodedBytesExceeded { .. } => 413,
                C::UnsupportedReaderVersion { .. }
                | C::UnsupportedFeature { .. }
                | C::CodecNotBuilt { .. } => 501,
                _ => 500,
            },
            _ => 500,
        }
    }
}

/// The stable code of a storage error (its row of [`crate::status`]).
pub fn storage_code(s: &StorageError) -> &'static str {
    storage_failure(s).code()
}

/// The stable code of a core error (the worker's `error.code`, the CLI's `--json` errors).
pub fn core_code(c: &deltalens_core::Error) -> &'static str {
    use deltalens_core::Error as C;
    match c {
        C::Storage(s) => storage_code(s),
        C::NotATable { .. } => "not_a_table",
        C::VersionOutOfRange { .. } | C::TimestampOutOfRange { .. } => "version_not_found",
        C::MissingVersion { .. } => "version_not_found",
        C::InvalidTimestamp { .. } | C::InvalidArgument { .. } => "invalid_argument",
        C::UnsupportedReaderVersion { .. } | C::UnsupportedFeature { .. } => {
            "unsupported_table_feature"
        }
        C::CdfNotEnabled { .. } => "change_data_feed_not_enabled",
        C::CodecNotBuilt { .. } => "codec_not_built",
        C::LimitExceeded { .. } => "log_limit_exceeded",
        C::DecodedBytesExceeded { .. } => "decoded_bytes_budget_exceeded",
        _ => "table_unreadable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_refused_for_a_budget_keeps_the_budgets_code_local_or_remote() {
        let remote = ApiError::Remote {
            status: 413,
            code: "rows_buffered_budget_exceeded".into(),
            message: "m".into(),
        };
        let split = |source| ApiError::SplitFailed {
            split: 0,
            splits: 2,
            attempts: 1,
            source: Box::new(source),
        };
        let e = split(remote);
        assert_eq!(
            (e.status(), e.code()),
            (413, "rows_buffered_budget_exceeded".into())
        );
        let e = split(ApiError::RowsBudget { limit: 1 });
        assert_eq!((e.status(), e.code()), (413, "rows_budget_exceeded".into()));
        let e = split(ApiError::Remote {
            status: 503,
            code: "storage_failed".into(),
            message: "m".into(),
        });
        assert_eq!((e.status(), e.code()), (502, "split_failed".into()));
    }
}

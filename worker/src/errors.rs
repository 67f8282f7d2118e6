//! The one place where errors become HTTP responses: `{"error": {"code", "message"}}`
//! with the status [`deltalens_api::ApiError::status`] chose (400 bad query, 401 no
//! token, 403 table not allowed, 404 no table/version, 405, 408/413 budgets, 409 CDF off,
//! 501 unsupported table feature, 502 storage failed).

use deltalens_api::{ApiError, Failure, Spent, error_document};

/// One failed request.
pub struct ErrorResponse {
    pub status: u16,
    pub code: String,
    pub message: String,
    /// What the request had read from storage when it failed: sent as
    /// `x-deltalens-bytes-read` and `x-deltalens-subrequests`, as on an answer.
    pub spent: Option<Spent>,
}

impl ErrorResponse {
    /// A failure of `kind` (its status and code: the front ends' one table,
    /// [`deltalens_api::status`]).
    pub fn new(kind: Failure, message: impl Into<String>) -> Self {
        ErrorResponse {
            status: kind.status(),
            code: kind.code().to_string(),
            message: message.into(),
            spent: None,
        }
    }

    /// This error, saying what the request had `spent` reading from storage.
    pub fn with_spent(mut self, spent: Spent) -> Self {
        self.spent = Some(spent);
        self
    }

    pub fn body(&self) -> String {
        error_document(&self.code, &self.message)
    }
}

impl From<ApiError> for ErrorResponse {
    fn from(e: ApiError) -> Self {
        ErrorResponse {
            status: e.status(),
            code: e.code(),
            message: e.to_string(),
            spent: None,
        }
    }
}

impl From<deltalens_core::Error> for ErrorResponse {
    fn from(e: deltalens_core::Error) -> Self {
        ApiError::from(e).into()
    }
}

impl From<worker::Error> for ErrorResponse {
    fn from(e: worker::Error) -> Self {
        ErrorResponse::new(
            Failure::WorkerRuntime,
            format!("the worker runtime failed: {e}"),
        )
    }
}

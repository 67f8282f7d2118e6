//! Errors as Python sees them: `DeltaLensError` with the API's stable `code`
//! (`not_a_table`, `invalid_parameter`, `storage_permission_denied`, …) and its message,
//! the same codes as the worker's JSON errors and the npm package's.

use deltalens_api::{ApiError, storage_code};
use deltalens_storage::StorageError;
use pyo3::prelude::*;

pyo3::create_exception!(
    deltalens,
    DeltaLensError,
    pyo3::exceptions::PyException,
    "An error of deltalens: `code` (stable, e.g. `not_a_table`, `invalid_parameter`, `rows_budget_exceeded`) and the message (what happened, where, what to try)."
);

/// A `DeltaLensError` with `code` and `message`.
pub(crate) fn error(py: Python<'_>, code: &str, message: &str) -> PyErr {
    let e = DeltaLensError::new_err(message.to_string());
    // an attribute of the instance (setting it cannot fail on an exception object)
    let _ = e.value(py).setattr("code", code);
    e
}

/// An API error (a parameter, the table, its storage, a budget).
pub(crate) fn api(py: Python<'_>, e: &ApiError) -> PyErr {
    error(py, &e.code(), &e.to_string())
}

/// A table location or storage option that cannot be used, or a store that answered
/// with an error while the table was opened.
pub(crate) fn storage(py: Python<'_>, e: &StorageError) -> PyErr {
    error(py, storage_code(e), &e.to_string())
}

/// An argument the caller gave that is not one, or not of its type.
pub(crate) fn option(py: Python<'_>, name: &str, message: &str) -> PyErr {
    error(
        py,
        "invalid_parameter",
        &format!("argument {name}: {message}"),
    )
}

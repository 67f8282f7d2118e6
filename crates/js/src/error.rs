//! Errors as JavaScript sees them: an `Error` named `DeltaLensError` with the API's
//! stable `code` (`not_a_table`, `invalid_parameter`, `storage_permission_denied`, …)
//! and its message. The package's wrapper turns it into an instance of its
//! `DeltaLensError` class.

use deltalens_api::ApiError;
use deltalens_fetch_storage::LocationError;
use wasm_bindgen::JsValue;

/// A `DeltaLensError` with `code` and `message`.
pub(crate) fn js_error(code: &str, message: &str) -> JsValue {
    let e = js_sys::Error::new(message);
    e.set_name("DeltaLensError");
    let _ = js_sys::Reflect::set(&e, &"code".into(), &code.into());
    e.into()
}

/// An API error (a parameter, the table, its storage, a budget).
pub(crate) fn api(e: &ApiError) -> JsValue {
    js_error(&e.code(), &e.to_string())
}

/// A table URL or storage option that cannot be used.
pub(crate) fn location(e: &LocationError) -> JsValue {
    js_error("invalid_table_url", &e.to_string())
}

/// An option the caller gave that is not one, or not of its type.
pub(crate) fn option(name: &str, message: &str) -> JsValue {
    js_error("invalid_parameter", &format!("option {name}: {message}"))
}

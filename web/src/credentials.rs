//! The storage form as this device remembers it: [`Form`] (settings, and secrets each
//! bound to the one origin it was entered for — deltalens_fetch_storage::credentials) in
//! the browser's local storage, written only by the user's Open with "remember" ticked.

pub use deltalens_fetch_storage::credentials::{Filled, Form, S3Keys};

const CREDS_KEY: &str = "deltalens.credentials";

/// Remember `form` on this device: only the user's Open, with "remember" ticked.
pub fn save(form: &Form) {
    crate::device::set(CREDS_KEY, &form.to_stored());
}

/// Forget what this device remembers.
pub fn forget() {
    crate::device::remove(CREDS_KEY);
}

/// The form this device remembers, if any (an older format's unbound secrets are not kept).
pub fn load() -> Option<Form> {
    Form::from_stored(&crate::device::get(CREDS_KEY)?)
}

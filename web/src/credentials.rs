//! The storage form as this device remembers it: [`Form`] (settings, and secrets each
//! bound to the one origin it was entered for — deltalens_fetch_storage::credentials) in
//! the browser's local storage, written only by the user's Open with "remember" ticked.

pub use deltalens_fetch_storage::credentials::{Filled, Form, S3Keys};

const CREDS_KEY: &str = "deltalens.credentials";

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// Remember `form` on this device: only the user's Open, with "remember" ticked.
pub fn save(form: &Form) {
    if let Some(s) = local_storage() {
        let _ = s.set_item(CREDS_KEY, &form.to_stored());
    }
}

/// Forget what this device remembers.
pub fn forget() {
    if let Some(s) = local_storage() {
        let _ = s.remove_item(CREDS_KEY);
    }
}

/// The form this device remembers, if any (an older format's unbound secrets are not kept).
pub fn load() -> Option<Form> {
    let raw = local_storage()?.get_item(CREDS_KEY).ok().flatten()?;
    Form::from_stored(&raw)
}

//! What this device keeps in the browser's local storage, by key: the remembered form
//! ([`crate::credentials`]) and the recently opened tables ([`crate::session`]). Where
//! the browser denies storage (site data blocked, a sandboxed frame: reading
//! `localStorage` throws), nothing is kept and nothing is found; no call fails.
//! (gloo-storage's `LocalStorage` throws there instead.)

fn local_storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The text kept under `key`, if any.
pub fn get(key: &str) -> Option<String> {
    local_storage()?.get_item(key).ok().flatten()
}

/// Keeps `value` under `key` (nothing where storage is denied or full).
pub fn set(key: &str, value: &str) {
    if let Some(s) = local_storage() {
        let _ = s.set_item(key, value);
    }
}

/// Forgets what is kept under `key`.
pub fn remove(key: &str) {
    if let Some(s) = local_storage() {
        let _ = s.remove_item(key);
    }
}

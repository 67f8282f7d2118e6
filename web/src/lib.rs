//! The deltalens explorer: open a Delta table URL in a browser tab and see its overview,
//! schema, history, data at any version, change feed, diffs and files. Everything runs
//! in the tab: the core reads the table straight from storage with range requests.
//!
//! The app is thin: it parses input, calls the core (through `session`), and renders.
//! Core errors become UI text in one place (`errors`); values become text in `format`.
//! Imports go one way: `ui` (the page) renders `tabs`, and both read and change
//! `state`; nothing imports `ui`.

// A snapshot holds its table's storage, which is not `Send` on wasm32 (JS futures); the
// tab has one thread, and the state shares snapshots between signals through `Arc`.
#![cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]

// the unit tests of the modules run in headless Chromium (scripts/web-test)
#[cfg(test)]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

pub mod catalog;
pub mod credentials;
pub mod device;
pub mod errors;
pub mod extras;
pub mod format;
pub mod grid;
pub mod landing;
pub mod query;
pub mod rows;
pub mod session;
pub mod state;
pub mod tabs;
pub mod ui;

/// Mount the app on the page's body.
pub fn start() {
    expose_memory();
    extras::install();
    leptos::mount::mount_to_body(ui::App);
}

/// `window.deltalensWasmMemory`: the module's `WebAssembly.Memory`, so a test can read
/// how large the tab's wasm heap grew (web/e2e/scale.mjs).
fn expose_memory() {
    #[cfg(target_arch = "wasm32")]
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"deltalensWasmMemory".into(), &wasm_bindgen::memory());
    }
}

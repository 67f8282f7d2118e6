//! Names of conformance-corpus tables that more than one test uses. The browser tests
//! include this file too (`#[path]` in crates/fetch-storage/tests/browser.rs: they run in
//! wasm32 and cannot depend on this crate), so it holds plain constants only.

/// The corpus' checkpointed tables whose first open is measured: the worker counts its
/// subrequests (tests/tests/worker.rs), the browser its round trips and time
/// (crates/fetch-storage/tests/browser.rs).
pub const CHECKPOINTED: &[&str] = &[
    "dat_with_checkpoint",
    "dk_basic-dv-with-checkpoint",
    "golden_dv-with-columnmapping",
    "golden_multi-part-checkpoint",
];

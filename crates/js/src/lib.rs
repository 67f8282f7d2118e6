//! deltalens for JavaScript: the Delta Lake reader as a wasm module for browsers, Node
//! (20 and later) and Cloudflare Workers. `scripts/build-js` packages it for npm with a
//! thin ESM wrapper (`crates/js/package/`: one entry per runtime, a `DeltaLensError`
//! class, TypeScript declarations).
//!
//! The exports are the worker's HTTP API as calls: each method turns its options into
//! the API's parameters (`deltalens_api::request::parse_get`), so a parameter is checked
//! and means the same in `GET /v1/scan?…`, `deltalens scan …` and `table.scan({…})`.
//! Documents come back as plain objects (the JSON of `deltalens info --json` and the
//! others), rows as Arrow IPC stream bytes (or JSON lines, CSV).
//!
//! Natively the crate is empty: everything here runs on wasm32 only.

#![warn(missing_docs, unreachable_pub)]

#[cfg(target_arch = "wasm32")]
mod batches;
#[cfg(target_arch = "wasm32")]
mod error;
#[cfg(target_arch = "wasm32")]
mod exports;
#[cfg(target_arch = "wasm32")]
mod options;

#[cfg(target_arch = "wasm32")]
pub use batches::Batches;
#[cfg(target_arch = "wasm32")]
pub use exports::{Table, open_table};

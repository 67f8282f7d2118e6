//! deltalens storage over the browser's `fetch` (wasm32): plain HTTP(S) hosting (any
//! server that honours `Range`), S3 and S3-compatible stores (anonymous or SigV4-signed
//! with keys the user types), Azure Blob Storage (public or SAS) and public GCS buckets.
//! Where listing is impossible the core finds versions by name (no-LIST discovery).
//!
//! URL resolution, SigV4 and listing parsers are plain Rust, tested natively; the
//! `fetch` glue exists only on wasm32.

#![warn(missing_docs, unreachable_pub)]

pub mod credentials;
pub mod listing;
pub mod location;
pub mod sigv4;

#[cfg(target_arch = "wasm32")]
mod fetch;

#[cfg(target_arch = "wasm32")]
pub use fetch::{FetchStorage, Sleep, boxed_sleep, sleep};
pub use location::{BrowserOptions, Endpoint, LocationError, S3Credentials, Service};

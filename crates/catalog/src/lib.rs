//! Unity Catalog, as deltalens reads it: a `uc://catalog.schema.table` name resolved with
//! the REST API (`GET /api/2.1/unity-catalog/tables/{full_name}`) to its storage location,
//! read credentials vended for it (`POST /api/2.1/unity-catalog/temporary-table-credentials`,
//! `operation: READ`) and refreshed before they expire; `uc://catalog` and
//! `uc://catalog.schema` listed.
//!
//! Pure: this crate builds the requests ([`Request`]) and reads the answers; the caller
//! sends them (object_store's HTTP client natively, `fetch` in the worker). The catalog
//! token goes only to the configured endpoint: every request is built from it.

#![warn(missing_docs, unreachable_pub)]

mod config;
mod credentials;
mod error;
mod listing;
mod request;
mod table;

pub use config::CatalogConfig;
pub use credentials::{Vended, VendedKind};
pub use error::CatalogError;
pub use listing::{CatalogEntry, EntryKind, ListPage, MAX_PAGES};
pub use request::Request;
pub use table::{MAX_ANSWER_BYTES, TableInfo};

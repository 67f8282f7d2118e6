//! deltalens-core: Delta Lake protocol logic with no runtime, clock or network.
//!
//! Storage is reached only through [`deltalens_storage::Storage`]. Start with [`Table`].

#![warn(missing_docs, unreachable_pub)]

pub mod actions;
pub mod active_files;
pub mod changes;
pub mod checkpoint;
mod checkpoint_columns;
pub mod column_mapping;
pub mod deletion_vector;
pub mod diff;
/// The error type of every fallible operation of this crate.
pub mod error;
pub mod file_totals;
pub mod history;
pub mod limits;
pub mod log;
pub mod metadata;
mod parquet_read;
pub mod partition_values;
pub mod predicate;
pub mod protocol;
pub mod replay;
pub mod scan;
pub mod schema;
pub mod skipping;
pub mod snapshot;
pub mod split;
pub mod string_map;
pub mod table;
mod table_path;
pub mod text_value;
pub mod time_travel;
pub mod tombstones;
pub mod type_widening;
pub mod version_info;

pub use deltalens_storage as storage;
pub use error::{Error, Result};
pub use history::HistoryEntry;
pub use snapshot::Snapshot;
pub use split::{PlanOptions, ScanPlan, Split};
pub use table::{Table, VersionSpec};
pub use version_info::VersionInfo;

// unit tests also run in headless Chromium (scripts/browser-test)
#[cfg(all(test, target_arch = "wasm32"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

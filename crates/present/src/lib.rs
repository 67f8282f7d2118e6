//! How deltalens presents a table, the same in every front end — the CLI prints it, the
//! explorer renders it, the worker serializes it. No I/O: callers load snapshots with
//! the core and hand the documents or rows to their own output.
//!
//! - documents, typed and serializable: [`Overview`] (with [`warnings`]), [`FileRow`],
//!   [`SchemaRow`] ([`schema_rows`]) and [`PartitionRow`] ([`partitions`], Trino's
//!   `$partitions`); the history is the core's `HistoryEntry`;
//! - [`health`]: the table health report ([`Health`]: findings, size histogram, partition
//!   skew, tombstones), one computation for `deltalens health`, `GET /v1/health` and the
//!   explorer;
//! - [`rows`]: one streaming [`RowWriter`] for every output [`Format`];
//! - [`cell`]: Arrow values as text cells (the grid, the aligned table, CSV, JSON);
//! - [`loaded`]: rows loaded page by page for a grid (windows, column statistics, order);
//! - [`value`]: single values as text (byte sizes, times);
//! - [`text`]: aligned text tables, key/value listings, terminal escaping.

#![warn(missing_docs, unreachable_pub)]

pub mod cell;
pub mod diff;
mod error;
mod files;
pub mod health;
pub mod health_series;
pub mod loaded;
mod overview;
mod partitions;
pub mod rows;
mod schema;
pub mod text;
pub mod value;

pub use error::{PresentError, Result};
pub use files::FileRow;
pub use health::{Health, HealthTally};
pub use health_series::{HealthPoint, HealthSeries};
pub use overview::{NOT_COUNTED, Overview, ProtocolSummary, warnings, warnings_of};
pub use partitions::{PartitionRow, PartitionTotals, partitions};
pub use rows::{Format, RowWriter, encode};
pub use schema::{SchemaRow, schema_rows, schema_rows_of};

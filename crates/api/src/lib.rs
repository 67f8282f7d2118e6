//! The HTTP/SQL API over Delta tables, shared by the edge worker and the CLI (`deltalens
//! query`).
//!
//! - [`sql`]: the SQL subset (`SELECT cols | * | COUNT(*) | SUM/MIN/MAX/AVG(col) FROM
//!   '<table url>' [VERSION AS OF n | TIMESTAMP AS OF '<ts>'] [WHERE …] [GROUP BY …]
//!   [ORDER BY …] [LIMIT n]` and `FROM table_changes('<url>', from[, to])`), parsed with
//!   `sqlparser` into a [`Query`]; anything else is refused naming the construct;
//! - [`request`]: the HTTP API's routes and parameters turned into the same [`Query`];
//! - [`execute`]: running a [`Query`] on a [`deltalens_core::Table`] (filter, columns and
//!   limit pushed into the scan, then grouping, aggregates, ordering) within a rows budget;
//! - [`aggregate`]: grouping and the aggregate functions;
//! - [`partial`]: a query over one split of a plan as a mergeable state ([`execute_partial`],
//!   [`merge_partials`]);
//! - [`plan_ipc`]: a scan plan as Arrow IPC, a row per file (and back);
//! - [`respond()`]: an API request answered on a table (JSON documents or encoded rows);
//! - [`access`]: the allowlist of table URL prefixes (checked before any request);
//! - rows are written by `deltalens_present`'s [`RowWriter`](deltalens_present::RowWriter)
//!   in one of [`request::SERVED_FORMATS`].

#![warn(missing_docs, unreachable_pub)]

pub mod access;
pub mod aggregate;
mod error;
pub mod execute;
pub mod fan_out;
pub mod partial;
pub mod plan_ipc;
pub mod request;
mod response;
pub mod sql;
pub mod status;

pub use deltalens_present::Format;
pub use error::{ApiError, Result, core_code, storage_code};
pub use execute::{
    Limits, Output, RowSink, combine_partials, execute, execute_limited, execute_partial,
    execute_streaming, merge_partials,
};
pub use fan_out::{
    FanOutOptions, FanOutPolicy, Spent, SplitAttempt, SplitBudgets, TreeBudgets, fan_out,
    respond_fanned_out,
};
pub use partial::Partial;
pub use request::{ApiRequest, SERVED_FORMATS, parse_format, parse_partial, scan_for_splits};
pub use response::{ApiResponse, PARTIAL_CONTENT_TYPE, respond};
pub use sql::{AggFunc, Item, OrderKey, OrderTarget, Query, Source, parse_sql};
pub use status::{Failure, catalog_failure, error_document, status_line, storage_failure};

//! Shared helpers of the cross-crate tests.
// test support: a helper that cannot do its part fails the test that called it
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod canonical;
pub mod corpus;

use std::path::PathBuf;
use std::sync::Arc;

use deltalens_core::Table;
use deltalens_object_store::ObjectStoreStorage;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The shared conformance corpus (`DELTALENS_CONFORMANCE` or `../shared/conformance`),
/// when it exists.
pub fn conformance_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("DELTALENS_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/conformance"));
    dir.join("tables.json").is_file().then_some(dir)
}

/// The tables `tests/fixtures/make_fixtures.py` writes.
pub const FIXTURES: &[&str] = &[
    "partitioned",
    "checkpointed",
    "cdf",
    "column_mapping",
    "schema_evolution",
    "overwrite_vacuum",
    "row_groups",
    "stats_struct",
    "codecs",
    "demo",
    "xss",
];

/// The project's generated fixtures.
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("tests/fixtures")
}

/// Open a local table.
pub fn open_local(path: &std::path::Path) -> Table {
    let loc = path.to_string_lossy().to_string();
    let storage =
        ObjectStoreStorage::open(&loc, &[]).unwrap_or_else(|e| panic!("cannot open {loc}: {e}"));
    Table::new(Arc::new(storage), loc)
}

/// A single-threaded runtime like the CLI's.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// Whether a column of type `t` can be summed and averaged in the generated queries.
pub fn numeric(t: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType as D;
    matches!(
        t,
        D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::Float32 | D::Float64 | D::Decimal128(..)
    )
}

/// Whether a column of type `t` can be a group key in the generated queries.
pub fn groupable(t: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType as D;
    matches!(t, D::Utf8 | D::Int32 | D::Int64 | D::Date32 | D::Boolean)
}

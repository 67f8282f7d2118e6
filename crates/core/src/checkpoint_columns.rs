//! Which leaf columns of a Parquet checkpoint a question reads: the version's head (its
//! `protocol` and `metaData`) is a few kilobytes of a checkpoint whose `add` columns may
//! be hundreds of megabytes. `stats_parsed` / `partitionValues_parsed` are never read
//! (the JSON `stats` and the `partitionValues` map say the same).

use crate::parquet_read::Columns;

/// Columns no question reads.
pub(crate) const EXCLUDE: &[&[&str]] =
    &[&["add", "stats_parsed"], &["add", "partitionValues_parsed"]];

/// The version's head: `protocol` and `metaData`.
pub(crate) const HEAD: Columns<'static> = Columns {
    include: &[&["metaData"], &["protocol"]],
    exclude: EXCLUDE,
};

//! One module per subcommand, each with its arguments (`Args`) and its `run`, which
//! returns the document to print on stdout (a [`Doc`]; rows and long listings are
//! streamed through the [`Output`](crate::output::Output) `main` made) or the error
//! `main` prints.

pub mod bench;
pub mod catalog;
pub mod changes;
pub mod diff;
pub mod files;
pub mod health;
pub mod history;
pub mod info;
pub mod plan;
pub mod query;
pub mod scan;
pub mod schema;
pub mod serve;
pub mod share;
#[cfg(feature = "sql")]
pub mod sql;

use serde::Serialize;

use crate::error::CliError;
use crate::output::Doc;

/// A JSON document as printed: pretty, one trailing newline.
fn to_json(doc: &impl Serialize) -> Result<Doc, CliError> {
    let mut s = serde_json::to_string_pretty(doc)?;
    s.push('\n');
    Ok(Doc::Json(s))
}

/// Hand the snapshot to the process exit instead of freeing it entry by entry: the CLI
/// prints and exits, and dropping 100,000 file entries one by one is ~10% of an `info`.
fn exit_without_freeing(s: deltalens_core::Snapshot) {
    std::mem::forget(s);
}

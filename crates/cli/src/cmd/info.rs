//! `deltalens info`: version, files, size, rows, protocol, properties and partitioning.

use deltalens_core::{Table, VersionSpec};

use deltalens_present::{Overview, text};

use super::{exit_without_freeing, to_json};
use crate::error::CliError;
use crate::table::with_table;

/// A table and the version to read.
pub use crate::args::SnapshotArgs as Args;

pub async fn run(args: Args) -> Result<String, CliError> {
    let t = &args.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        info(&o.table, args.at.spec()?, t.json).await
    })
    .await
}

async fn info(table: &Table, at: VersionSpec, json: bool) -> Result<String, CliError> {
    let s = table.snapshot(at).await?;
    let doc = Overview::of(table.location(), &s);
    exit_without_freeing(s);
    if json {
        return to_json(&doc);
    }
    let mut out = text::pairs(&doc.lines());
    if !doc.properties.is_empty() {
        out.push_str("\nproperties:\n");
        let rows: Vec<Vec<String>> = doc
            .properties
            .into_iter()
            .map(|(k, v)| vec![k, v])
            .collect();
        out.push_str(&text::table(&["key", "value"], &rows));
    }
    Ok(out)
}

//! `deltalens files`: the active data files with partition values, statistics and
//! deletion vectors.

use deltalens_core::{Table, VersionSpec};

use super::to_json;
use crate::error::CliError;
use crate::table::with_table;
use deltalens_present::{FileRow, text, value};

/// A table and the version to read.
pub use crate::args::SnapshotArgs as Args;

pub async fn run(args: Args) -> Result<String, CliError> {
    let t = &args.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        files(&o.table, args.at.spec()?, t.json).await
    })
    .await
}

async fn files(table: &Table, at: VersionSpec, json: bool) -> Result<String, CliError> {
    let s = table.snapshot(at).await?;
    let docs = FileRow::all(&s)?;
    if json {
        return to_json(&docs);
    }
    let rows: Vec<Vec<String>> = docs.iter().map(FileRow::text_row).collect();
    let mut out = text::table(&FileRow::TEXT_HEADERS, &rows);
    out.push_str(&format!(
        "{} files, {} at version {}\n",
        s.num_files(),
        s.size_bytes()
            .map_or_else(|_| "unknown size".into(), value::bytes),
        s.version
    ));
    Ok(out)
}

//! `deltalens files`: the active data files with partition values, statistics and
//! deletion vectors.

use deltalens_core::time_travel::format_timestamp;
use deltalens_core::{Table, VersionSpec};
use serde_json::Value;

use super::to_json;
use crate::error::CliError;
use crate::render;
use crate::table::with_table;

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
    let docs = deltalens_present::files(&s)?;
    if json {
        return Ok(to_json(&Value::Array(docs)));
    }
    let rows: Vec<Vec<String>> = s
        .files
        .iter()
        .zip(&docs)
        .map(|(f, d)| {
            let parts = d["partition_values"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", render::cell(v)))
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .unwrap_or_default();
            vec![
                f.path.clone(),
                render::bytes(f.size),
                f.num_records().map(|n| n.to_string()).unwrap_or_default(),
                parts,
                f.deletion_vector
                    .as_ref()
                    .map(|d| d.cardinality.to_string())
                    .unwrap_or_default(),
                format_timestamp(f.modification_time),
            ]
        })
        .collect();
    let mut out = render::table(
        &[
            "path",
            "size",
            "rows",
            "partition",
            "deleted rows",
            "modified",
        ],
        &rows,
    );
    out.push_str(&format!(
        "{} files, {} at version {}\n",
        s.num_files(),
        s.size_bytes()
            .map_or_else(|_| "unknown size".into(), render::bytes),
        s.version
    ));
    Ok(out)
}

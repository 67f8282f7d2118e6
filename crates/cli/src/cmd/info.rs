//! `deltalens info`: version, files, size, rows, protocol, properties and partitioning.

use deltalens_core::{Table, VersionSpec};

use super::{exit_without_freeing, opt_ts, to_json};
use crate::error::CliError;
use crate::render;
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
    let md = &s.metadata;
    let p = &s.protocol;
    let doc = deltalens_present::overview(table.location(), &s);
    if json {
        exit_without_freeing(s);
        return Ok(to_json(&doc));
    }
    let list = |v: &Option<Vec<String>>| v.as_ref().map(|f| f.join(", ")).unwrap_or_default();
    let rows = vec![
        ("location", table.location().to_string()),
        ("version", s.version.to_string()),
        ("files", s.num_files().to_string()),
        (
            "size",
            match s.size_bytes() {
                Ok(n) => format!("{} ({n} bytes)", render::bytes(n)),
                Err(e) => format!("unknown: {e}"),
            },
        ),
        (
            "rows",
            match s.num_rows() {
                Ok(Some(n)) => n.to_string(),
                Ok(None) => "unknown (some files have no statistics)".into(),
                Err(e) => format!("unknown: {e}"),
            },
        ),
        ("partition columns", s.partition_columns().join(", ")),
        (
            "protocol",
            format!(
                "reader {}, writer {}",
                p.min_reader_version, p.min_writer_version
            ),
        ),
        ("reader features", list(&p.reader_features)),
        ("writer features", list(&p.writer_features)),
        ("id", md.id.clone()),
        ("name", md.name.clone().unwrap_or_default()),
        ("description", md.description.clone().unwrap_or_default()),
        ("created", opt_ts(md.created_time)),
        (
            "checkpoint",
            s.checkpoint_version
                .map(|v| v.to_string())
                .unwrap_or_default(),
        ),
    ];
    let props = s.properties();
    let mut out = render::pairs(&rows);
    if !props.is_empty() {
        out.push_str("\nproperties:\n");
        let rows: Vec<Vec<String>> = props.into_iter().map(|(k, v)| vec![k, v]).collect();
        out.push_str(&render::table(&["key", "value"], &rows));
    }
    exit_without_freeing(s);
    Ok(out)
}

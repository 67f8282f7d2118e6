//! `deltalens files`: the active data files with partition values, statistics and
//! deletion vectors.

use deltalens_core::{Table, VersionSpec};

use super::to_json;
use crate::error::CliError;
use crate::table::with_table;
use deltalens_present::{FileRow, text, value};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub snapshot: crate::args::SnapshotArgs,
    /// Print at most N files: the files are then streamed in log order (checkpoint first)
    /// and reading stops once the page is full — the first 100 files of a million cost
    /// one window of the checkpoint. Without it every file is listed, sorted by path.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Skip the first N files of that order (with or without --limit).
    #[arg(long, value_name = "N")]
    pub offset: Option<usize>,
}

pub async fn run(args: Args) -> Result<String, CliError> {
    let t = &args.snapshot.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        let at = args.snapshot.at.spec()?;
        if args.limit.is_none() && args.offset.is_none() {
            return files(&o.table, at, t.json).await;
        }
        page(&o.table, at, args.offset.unwrap_or(0), args.limit, t.json).await
    })
    .await
}

/// One page of the files, streamed.
async fn page(
    table: &Table,
    at: VersionSpec,
    offset: usize,
    limit: Option<usize>,
    json: bool,
) -> Result<String, CliError> {
    let v = table.version_info(at).await?;
    let page = v.files_page(offset, limit).await?;
    let docs = page
        .iter()
        .map(|f| Ok(FileRow::new(f, v.partition_values_json(f)?)))
        .collect::<Result<Vec<_>, deltalens_core::Error>>()?;
    if json {
        return to_json(&docs);
    }
    let rows: Vec<Vec<String>> = docs.iter().map(FileRow::text_row).collect();
    let mut out = text::table(&FileRow::TEXT_HEADERS, &rows);
    out.push_str(&format!(
        "files {} to {} (log order) at version {}\n",
        offset + usize::from(!docs.is_empty()),
        offset + docs.len(),
        v.version
    ));
    Ok(out)
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

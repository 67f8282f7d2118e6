//! `deltalens info`: version, files, size, rows, protocol, properties and partitioning.

use deltalens_core::{Table, VersionSpec};

use deltalens_present::{Overview, text};

use super::to_json;
use crate::error::CliError;
use crate::output::Doc;
use crate::progress::Progress;
use crate::table::{IoReport, with_table};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub snapshot: crate::args::SnapshotArgs,
    /// Do not count the files (number, size, rows): read only the version's protocol,
    /// metadata and commit — kilobytes, even for a table of a million files.
    #[arg(long)]
    pub no_files: bool,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.snapshot.table;
    // counting files draws its own progress
    let io = IoReport {
        watch: false,
        ..t.io()
    };
    with_table(&t.location, &t.options, io, async |o| {
        info(
            &o.table,
            o.at(args.snapshot.at.spec()?).await?,
            t.json,
            args.no_files,
            t.quiet,
        )
        .await
    })
    .await
}

async fn info(
    table: &Table,
    at: VersionSpec,
    json: bool,
    no_files: bool,
    quiet: bool,
) -> Result<Doc, CliError> {
    let v = table.version_info(at).await?;
    let totals = if no_files {
        None
    } else {
        // streamed: memory follows a batch of the checkpoint, not the file count
        let progress = Progress::counter("files counted", quiet);
        let t = v
            .file_totals(&mut |t| {
                progress.set(t.files);
                crate::allocator::release_free_memory();
                true
            })
            .await?;
        progress.clear();
        Some(t)
    };
    let doc = Overview::of_version(table.location(), &v, totals.as_ref());
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
    Ok(Doc::Text(out))
}

//! `deltalens files`: the active data files with partition values, statistics and
//! deletion vectors.

use deltalens_core::VersionInfo;
use deltalens_present::text::TableStream;
use deltalens_present::{FileRow, text, value};

use super::to_json;
use crate::error::CliError;
use crate::output::{Doc, Kind, Output};
use crate::table::with_table;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub snapshot: crate::args::SnapshotArgs,
    /// Print at most N files; reading stops once they are found (the first 100 files of
    /// a million cost one window of the checkpoint). Without it every file is listed,
    /// written as it streams in: memory holds a batch, not the list.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Skip the first N files.
    #[arg(long, value_name = "N")]
    pub offset: Option<usize>,
}

// Files come in log order: the checkpoint's, then the newer commits' (as Trino's $files,
// no sort: sorting a million paths means holding them).

pub async fn run(args: Args, out: &Output) -> Result<Option<Doc>, CliError> {
    let t = &args.snapshot.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        let v = o
            .table
            .version_info(o.at(args.snapshot.at.spec()?).await?)
            .await?;
        let offset = args.offset.unwrap_or(0);
        match args.limit {
            Some(limit) => page(&v, offset, limit, t.json).await.map(Some),
            None => stream_all(&v, offset, t.json, out).await,
        }
    })
    .await
}

/// One page of the files, streamed.
async fn page(v: &VersionInfo, offset: usize, limit: usize, json: bool) -> Result<Doc, CliError> {
    let page = v.files_page(offset, Some(limit)).await?;
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
    Ok(Doc::Text(out))
}

/// Every file from `offset`, written to stdout as it streams in (one JSON array, or an
/// aligned table); returns the closing line.
async fn stream_all(
    v: &VersionInfo,
    offset: usize,
    json: bool,
    output: &Output,
) -> Result<Option<Doc>, CliError> {
    let mut out = output.stream(if json { Kind::Json } else { Kind::Text });
    let mut table = TableStream::new(&FileRow::TEXT_HEADERS);
    let (mut files, mut bytes, mut skipped) = (0u64, 0i64, 0usize);
    let mut failed = None;
    v.for_each_file(&mut |f| {
        if skipped < offset {
            skipped += 1;
            return Ok(true);
        }
        let row = FileRow::new(&f, v.partition_values_json(&f)?);
        files += 1;
        bytes = bytes.saturating_add(f.size);
        let text = if json {
            let sep = if files == 1 { "[" } else { "," };
            match serde_json::to_string(&row) {
                Ok(s) => format!("{sep}{s}"),
                Err(e) => {
                    failed = Some(CliError::Json(e));
                    return Ok(false);
                }
            }
        } else {
            table.push(row.text_row())
        };
        if let Err(e) = out.write(&text) {
            failed = Some(e);
            return Ok(false);
        }
        Ok(true)
    })
    .await?;
    if let Some(e) = failed {
        return Err(e);
    }
    let end = if json {
        if files == 0 { "[]\n" } else { "]\n" }.to_string()
    } else {
        table.finish()
    };
    out.write(&end)?;
    out.finish()?;
    if json {
        return Ok(None);
    }
    Ok(Some(Doc::Text(format!(
        "{files} files, {} at version {} (log order)\n",
        value::bytes(bytes),
        v.version
    ))))
}

//! `deltalens diff`: what changed between two versions — files, schema, protocol,
//! properties and rows.

use deltalens_core::diff::TableDiff;

use super::to_json;
use crate::args::TableArgs;
use crate::error::CliError;
use crate::output::Doc;
use crate::table::{Opened, with_table};
use deltalens_present::{Format, RowWriter, text, value};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    /// The older version.
    #[arg(value_name = "V1")]
    pub v1: u64,
    /// The newer version.
    #[arg(value_name = "V2")]
    pub v2: u64,
    /// Show at most N inserted/deleted rows (default: 20 in text, all with --json).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only the rows' columns, comma-separated.
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        diff(
            o,
            args.v1,
            args.v2,
            args.limit,
            args.columns.clone(),
            t.json,
        )
        .await
    })
    .await
}

async fn diff(
    t: &Opened,
    v1: u64,
    v2: u64,
    limit: Option<usize>,
    columns: Option<Vec<String>>,
    json: bool,
) -> Result<Doc, CliError> {
    let d = TableDiff::new(&t.table, v1, v2).await?;
    let options = deltalens_core::scan::ScanOptions {
        columns,
        limit: if json {
            limit
        } else {
            Some(limit.unwrap_or(20))
        },
        ..Default::default()
    };
    let mut batches = Vec::new();
    d.rows(&options, &mut |b| {
        batches.push(b);
        Ok(true)
    })
    .await?;
    if json {
        let doc = deltalens_present::diff::diff_document(&d, &d.row_schema(&options)?, &batches)?;
        return to_json(&doc);
    }
    let est = deltalens_present::diff::row_estimate(&d);
    let (rows_inserted, rows_deleted) = (est.inserted, est.deleted);
    let mut out = format!(
        "diff of versions {} and {}\n\nfiles: +{} -{} ({} with changed deletion vectors)\nrows (from statistics): +{} -{}\n",
        d.from.version,
        d.to.version,
        d.files_added.len(),
        d.files_removed.len(),
        d.deletion_vectors_changed.len(),
        rows_inserted.map_or("?".into(), |n| n.to_string()),
        rows_deleted.map_or("?".into(), |n| n.to_string()),
    );
    if !d.schema_changes.is_empty() {
        out.push_str("\nschema:\n");
        let rows: Vec<Vec<String>> = d
            .schema_changes
            .iter()
            .map(|c| {
                vec![
                    c.column.clone(),
                    c.change.to_string(),
                    c.from.clone().unwrap_or_default(),
                    c.to.clone().unwrap_or_default(),
                ]
            })
            .collect();
        out.push_str(&text::table(&["column", "change", "from", "to"], &rows));
    }
    if d.partition_columns_changed {
        out.push_str(&format!(
            "\npartition columns: [{}] -> [{}]\n",
            d.from.partition_columns().join(", "),
            d.to.partition_columns().join(", ")
        ));
    }
    if let Some((a, b)) = &d.protocol_change {
        out.push_str(&format!(
            "\nprotocol: reader {} writer {} -> reader {} writer {} (reader features {:?} -> {:?}, writer features {:?} -> {:?})\n",
            a.min_reader_version, a.min_writer_version, b.min_reader_version, b.min_writer_version,
            a.reader_features, b.reader_features, a.writer_features, b.writer_features
        ));
    }
    if !d.property_changes.is_empty() {
        out.push_str("\nproperties:\n");
        let rows: Vec<Vec<String>> = d
            .property_changes
            .iter()
            .map(|c| {
                vec![
                    c.key.clone(),
                    c.from.clone().unwrap_or_default(),
                    c.to.clone().unwrap_or_default(),
                ]
            })
            .collect();
        out.push_str(&text::table(&["key", "from", "to"], &rows));
    }
    for (title, files) in [("added", &d.files_added), ("removed", &d.files_removed)] {
        if !files.is_empty() {
            out.push_str(&format!("\nfiles {title}:\n"));
            for f in files.iter() {
                out.push_str(&format!("  {} ({})\n", f.path, value::bytes(f.size)));
            }
        }
    }
    out.push_str("\nrows:\n");
    let schema = d.row_schema(&options)?;
    let mut buf = Vec::new();
    {
        let mut w = RowWriter::new(Format::Table, &mut buf, &schema)?;
        for b in &batches {
            w.write(b)?;
        }
        w.finish()?;
    }
    out.push_str(&String::from_utf8_lossy(&buf));
    Ok(Doc::Text(out))
}

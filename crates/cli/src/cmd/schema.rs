//! `deltalens schema`: the Delta schema (logical names).

use deltalens_core::{Table, VersionSpec};

use super::to_json;
use crate::error::CliError;
use crate::output::Doc;
use crate::table::with_table;
use deltalens_present::text;

/// A table and the version to read.
pub use crate::args::SnapshotArgs as Args;

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        schema(&o.table, o.at(args.at.spec()?).await?, t.json).await
    })
    .await
}

async fn schema(table: &Table, at: VersionSpec, json: bool) -> Result<Doc, CliError> {
    // the schema needs no file: the checkpoint's metaData column and the newer commits
    let s = table.version_info(at).await?;
    if json {
        return to_json(&s.schema.raw);
    }
    let partition = s.partition_columns();
    let rows: Vec<Vec<String>> = s
        .schema
        .fields()
        .iter()
        .map(|f| {
            vec![
                f.name.clone(),
                f.data_type.type_string(),
                if f.nullable {
                    "yes".into()
                } else {
                    "no".into()
                },
                if partition.contains(&f.name) {
                    "yes".into()
                } else {
                    String::new()
                },
                f.physical_name().unwrap_or_default().to_string(),
                f.comment().unwrap_or_default().to_string(),
            ]
        })
        .collect();
    Ok(Doc::Text(text::table(
        &[
            "column",
            "type",
            "nullable",
            "partition",
            "physical name",
            "comment",
        ],
        &rows,
    )))
}

//! `deltalens catalog [uc://catalog[.schema]]`: what a Unity Catalog holds — its
//! catalogs, a catalog's schemas, a schema's tables (with type and format) — to pick a
//! `uc://catalog.schema.table` to open.

use deltalens_catalog::{CatalogEntry, EntryKind};
use deltalens_object_store::{Catalog, catalog_error, catalog_name};
use deltalens_present::text;

use super::to_json;
use crate::error::CliError;
use crate::output::Doc;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// uc://catalog or uc://catalog.schema (nothing: the catalogs).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
    /// uc_endpoint=URL, uc_token=TOKEN (else UC_ENDPOINT/UC_TOKEN or
    /// DATABRICKS_HOST/DATABRICKS_TOKEN).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = crate::args::parse_kv)]
    pub options: Vec<(String, String)>,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let location = args.name.clone().unwrap_or_else(|| "uc://".into());
    let parent = match &args.name {
        None => Vec::new(),
        Some(n) => catalog_name(n)
            .filter(|p| p.len() < 3)
            .ok_or_else(|| CliError::Argument {
                expected: "uc://catalog or uc://catalog.schema",
                given: n.clone(),
            })?,
    };
    let err = |e| CliError::from(catalog_error(&location, e));
    let catalog = Catalog::from_env(&args.options).map_err(err)?;
    let entries = catalog.list(&parent).await.map_err(err)?;
    if args.json {
        let doc: Vec<serde_json::Value> = entries.iter().map(entry_json).collect();
        return to_json(&doc);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                format!("uc://{}", e.full_name),
                kind(e.kind).into(),
                e.table_type.clone().unwrap_or_default(),
                e.format.clone().unwrap_or_default(),
                e.comment.clone().unwrap_or_default(),
            ]
        })
        .collect();
    Ok(Doc::Text(text::table(
        &["name", "kind", "type", "format", "comment"],
        &rows,
    )))
}

fn kind(k: EntryKind) -> &'static str {
    match k {
        EntryKind::Catalog => "catalog",
        EntryKind::Schema => "schema",
        EntryKind::Table => "table",
    }
}

fn entry_json(e: &CatalogEntry) -> serde_json::Value {
    serde_json::json!({
        "name": format!("uc://{}", e.full_name),
        "kind": kind(e.kind),
        "table_type": e.table_type,
        "format": e.format,
        "comment": e.comment,
    })
}

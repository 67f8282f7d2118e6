//! `deltalens share <profile>[#share[.schema[.table]]]`: what a Delta Sharing profile
//! gives access to — its shares, a share's schemas, a schema's tables (with how each may
//! be read) — and a table's current version, to pick a `<profile>#share.schema.table`.

use deltalens_object_store::Share;
use deltalens_present::text;
use deltalens_sharing::{ShareName, SharedItem};

use super::to_json;
use crate::error::CliError;
use crate::output::Doc;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A profile file (config.share), or <profile>#share, <profile>#share.schema,
    /// <profile>#share.schema.table.
    #[arg(value_name = "PROFILE[#NAME]")]
    pub name: String,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let err = CliError::Sharing;
    let name = ShareName::parse(&args.name).map_err(err)?;
    let share = Share::open(&name.profile).await.map_err(err)?;
    if let (Some(s), Some(sc), Some(t)) = (&name.share, &name.schema, &name.table) {
        let version = share.version(s, sc, t).await.map_err(err)?;
        if args.json {
            return to_json(&serde_json::json!({ "table": name.dotted(), "version": version }));
        }
        return Ok(Doc::Text(text::table(
            &["table", "version"],
            &[vec![name.dotted(), version.to_string()]],
        )));
    }
    let items = share.list(&name).await.map_err(err)?;
    let kind = match (&name.share, &name.schema) {
        (None, _) => "share",
        (Some(_), None) => "schema",
        (Some(_), Some(_)) => "table",
    };
    let full = |i: &SharedItem| {
        let mut parts = match (&name.share, &name.schema) {
            (None, _) => vec![],
            (Some(s), None) => vec![i.share.clone().unwrap_or_else(|| s.clone())],
            (Some(s), Some(sc)) => vec![
                i.share.clone().unwrap_or_else(|| s.clone()),
                i.schema.clone().unwrap_or_else(|| sc.clone()),
            ],
        };
        parts.push(i.name.clone());
        format!("{}#{}", name.profile, parts.join("."))
    };
    let modes = |i: &SharedItem| {
        if i.access_modes.is_empty() {
            "url".to_string()
        } else {
            i.access_modes.join(",")
        }
    };
    if args.json {
        let doc: Vec<serde_json::Value> = items
            .iter()
            .map(|i| {
                serde_json::json!({
                    "name": full(i),
                    "kind": kind,
                    "access_modes": (kind == "table").then(|| modes(i)),
                    "location": i.location,
                })
            })
            .collect();
        return to_json(&doc);
    }
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|i| {
            vec![
                full(i),
                kind.to_string(),
                if kind == "table" {
                    modes(i)
                } else {
                    String::new()
                },
            ]
        })
        .collect();
    Ok(Doc::Text(text::table(&["name", "kind", "access"], &rows)))
}

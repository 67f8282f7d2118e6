//! Overview: version, commit time, files, size, rows, partitioning, protocol and table
//! features, properties (Trino's `$properties`) and warnings.

use leptos::prelude::*;
use serde_json::Value;

use crate::format::{fmt_bytes, fmt_ts};
use crate::state::use_ctx;

#[component]
pub fn Overview() -> impl IntoView {
    let ctx = use_ctx();
    move || {
        let (Some(s), Some(sess)) = (ctx.snapshot.get(), ctx.session.get()) else {
            return view! { <p>"Loading…"</p> }.into_any();
        };
        let doc = deltalens_present::overview(&sess.url, &s);
        let text = |k: &str| match &doc[k] {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let list = |v: &Value| {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default()
        };
        let rows = vec![
            ("version", text("version")),
            ("commit time", fmt_ts(doc["commit_timestamp"].as_i64())),
            ("files", text("num_files")),
            ("size", fmt_bytes(doc["size_bytes"].as_i64().unwrap_or(0))),
            (
                "rows",
                doc["num_rows"].as_i64().map_or_else(
                    || "unknown (files without statistics)".into(),
                    |n| n.to_string(),
                ),
            ),
            ("partition columns", list(&doc["partition_columns"])),
            (
                "protocol",
                format!(
                    "reader {}, writer {}",
                    doc["protocol"]["min_reader_version"], doc["protocol"]["min_writer_version"]
                ),
            ),
            ("reader features", list(&doc["protocol"]["reader_features"])),
            ("writer features", list(&doc["protocol"]["writer_features"])),
            ("checkpoint", text("checkpoint_version")),
            ("name", text("name")),
            ("description", text("description")),
            ("id", text("id")),
            ("created", fmt_ts(doc["created_time"].as_i64())),
        ];
        let props: Vec<(String, String)> = s.properties().into_iter().collect();
        let warnings = deltalens_present::warnings(&s);
        view! {
            <section id="overview">
                <ul class="warnings">{warnings.into_iter().map(|w| view! { <li class="warning">{w}</li> }).collect_view()}</ul>
                <table class="kv">
                    {rows.into_iter().map(|(k, v)| view! { <tr><th>{k}</th><td data-key=k>{v}</td></tr> }).collect_view()}
                </table>
                <h3>"Properties ($properties)"</h3>
                <table class="kv" id="properties">
                    {props.into_iter().map(|(k, v)| view! { <tr><th>{k}</th><td>{v}</td></tr> }).collect_view()}
                </table>
            </section>
        }
        .into_any()
    }
}

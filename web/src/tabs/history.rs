//! History: Trino's `$history` columns plus operation metrics, newest first, loaded
//! progressively; charts of files, bytes and rows written per version and of the table's
//! size over versions; clicking a version time-travels to it.

use leptos::prelude::*;
use serde_json::Value;

use crate::errors::explain;
use crate::state::{Tab, use_ctx};
use crate::tabs::bars;
use deltalens_present::value::timestamp as fmt_ts;

const PAGE: usize = 50;

fn metric(e: &deltalens_core::HistoryEntry, keys: &[&str]) -> f64 {
    let Some(m) = e.operation_metrics.as_ref() else {
        return 0.0;
    };
    keys.iter()
        .filter_map(|k| m.get(*k))
        .filter_map(|v| match v {
            Value::String(s) => s.parse::<f64>().ok(),
            Value::Number(n) => n.as_f64(),
            _ => None,
        })
        .sum()
}

/// The table's size after each commit as its metrics tell it: bytes added less bytes
/// removed, summed from the oldest commit loaded (so a size relative to it when older
/// commits are not loaded); nothing when no commit records bytes.
pub fn cumulative_bytes(chron: &[&deltalens_core::HistoryEntry]) -> Vec<(String, f64)> {
    const ADDED: [&str; 3] = ["numOutputBytes", "numAddedBytes", "num_added_bytes"];
    const REMOVED: [&str; 2] = ["numRemovedBytes", "num_removed_bytes"];
    let any = chron
        .iter()
        .any(|e| metric(e, &ADDED) > 0.0 || metric(e, &REMOVED) > 0.0);
    if !any {
        return Vec::new();
    }
    let mut total = 0.0f64;
    chron
        .iter()
        .map(|e| {
            // an overwrite replaces the table: its removed bytes are in its metrics
            total = (total + metric(e, &ADDED) - metric(e, &REMOVED)).max(0.0);
            (format!("v{}", e.version), total)
        })
        .collect()
}

fn compact(v: &Option<Value>) -> String {
    match v {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

#[component]
pub fn HistoryTab() -> impl IntoView {
    let ctx = use_ctx();
    // "more" is a long operation of its own (shown, cancellable)
    let load = move |n: usize| {
        let Some(s) = ctx.session.get_untracked() else {
            return;
        };
        ctx.run(format!("reading the newest {n} commits"), async move {
            let h = s.table.history(Some(n)).await.map_err(|e| explain(&e))?;
            ctx.history.set(h);
            Ok(())
        });
    };
    // once per known latest version (live follow moves it): read beside whatever runs —
    // the commits' history needs no file, so it shows while a version's file totals are
    // still streaming in
    let loaded_for = RwSignal::new(None::<Option<u64>>);
    Effect::new(move || {
        let latest = ctx.latest.get();
        let Some(s) = ctx.session.get() else {
            return;
        };
        if latest.is_some() && loaded_for.get_untracked() != Some(latest) {
            loaded_for.set(Some(latest));
            let n = ctx.history.get_untracked().len().max(PAGE);
            leptos::task::spawn_local(async move {
                let h = s.table.history(Some(n)).await;
                // the answer of a table still open (another may have been opened since)
                if !ctx
                    .session
                    .get_untracked()
                    .is_some_and(|now| std::rc::Rc::ptr_eq(&now, &s))
                {
                    return;
                }
                match h {
                    Ok(h) => ctx.history.set(h),
                    Err(e) => ctx.error.set(Some(explain(&e))),
                }
                ctx.refresh_io();
            });
        }
    });
    view! {
        <section id="history">
            {move || {
                let h = ctx.history.get();
                let mut chron: Vec<_> = h.iter().collect();
                chron.reverse();
                let files: Vec<(String, f64)> = chron.iter().map(|e| (format!("v{}", e.version), metric(e, &["numFiles", "numAddedFiles", "numTargetFilesAdded", "num_added_files", "num_target_files_added"]))).collect();
                let bytes: Vec<(String, f64)> = chron.iter().map(|e| (format!("v{}", e.version), metric(e, &["numOutputBytes", "numAddedBytes", "num_added_bytes"]))).collect();
                let rows: Vec<(String, f64)> = chron.iter().map(|e| (format!("v{}", e.version), metric(e, &["numOutputRows", "numTargetRowsInserted", "numTargetRowsUpdated", "numUpdatedRows", "numDeletedRows", "numTargetRowsDeleted", "num_added_rows", "num_target_rows_inserted", "num_target_rows_updated", "num_updated_rows", "num_deleted_rows", "num_target_rows_deleted"]))).collect();
                let size = cumulative_bytes(&chron);
                view! {
                    <div class="charts">
                        {bars("files written per version", files, "chart-files")}
                        {bars("bytes written per version", bytes, "chart-bytes")}
                        {bars("rows written or changed per version", rows, "chart-rows")}
                        {bars("table size by version (bytes added less removed, from the commits' metrics)", size, "chart-size")}
                    </div>
                }
            }}
            <table class="list" id="history-table">
                <thead><tr><th>"version"</th><th>"timestamp"</th><th>"operation"</th><th>"user_name"</th><th>"read_version"</th><th>"isolation_level"</th><th>"is_blind_append"</th><th>"operation_parameters"</th><th>"operation_metrics"</th></tr></thead>
                <tbody>
                {move || ctx.history.get().into_iter().map(|e| {
                    let v = e.version;
                    view! {
                        <tr>
                            <td><button class="link version" on:click=move |_| { ctx.tab.set(Tab::Overview); ctx.load(Some(v)); }>{v}</button></td>
                            <td>{fmt_ts(e.in_commit_timestamp.or(e.timestamp))}</td>
                            <td class="op">{e.operation.clone().unwrap_or_default()}</td>
                            <td>{e.user_name.clone().unwrap_or_default()}</td>
                            <td>{e.read_version.map(|r| r.to_string()).unwrap_or_default()}</td>
                            <td>{e.isolation_level.clone().unwrap_or_default()}</td>
                            <td>{e.is_blind_append.map(|b| b.to_string()).unwrap_or_default()}</td>
                            <td class="meta">{compact(&e.operation_parameters)}</td>
                            <td class="meta">{compact(&e.operation_metrics)}</td>
                        </tr>
                    }
                }).collect_view()}
                </tbody>
            </table>
            {move || {
                let n = ctx.history.get().len();
                let more = n > 0 && ctx.history.get().last().is_some_and(|e| e.version > 0) && n.is_multiple_of(PAGE);
                more.then(|| view! { <button id="history-more" on:click=move |_| load(n + PAGE)>"Load older commits"</button> })
            }}
        </section>
    }
}

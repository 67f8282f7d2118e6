//! Files: a `$partitions`-style summary (files, bytes, rows, min/max per partition), from
//! the background pass that counts the version's files ([`Ctx::partitions`]), and the
//! file list with statistics and deletion-vector cardinality, a page at a time (each
//! page streams the files up to it: memory follows a page, not the file count).

use std::sync::Arc;

use deltalens_core::VersionInfo;
use deltalens_core::actions::Add;
use leptos::prelude::*;
use serde_json::Value;

use crate::errors::explain;
use crate::state::{Ctx, use_ctx};
use deltalens_present::value::bytes as fmt_bytes;

/// Files per page of the list.
const PAGE: usize = 100;

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "∅".into(),
        v => v.to_string(),
    }
}

/// The page of files from `offset`.
fn turn_page(
    ctx: Ctx,
    info: Arc<VersionInfo>,
    offset: usize,
    page: RwSignal<(Option<u64>, usize, Vec<Add>)>,
) {
    ctx.run(
        format!("reading files {} to {}", offset + 1, offset + PAGE),
        async move {
            let files = info
                .files_page(offset, Some(PAGE))
                .await
                .map_err(|e| explain(&e))?;
            page.set((Some(info.version), offset, files));
            Ok(())
        },
    );
}

#[component]
pub fn FilesTab() -> impl IntoView {
    let ctx = use_ctx();
    let page = RwSignal::new((None::<u64>, 0usize, Vec::<Add>::new()));
    // the first page of each version shown: one window of the checkpoint
    Effect::new(move || {
        if let Some(info) = ctx.info.get()
            && page.with_untracked(|p| p.0) != Some(info.version)
        {
            turn_page(ctx, info, 0, page);
        }
    });
    move || {
        let Some(info) = ctx.info.get() else {
            return view! { <p>"Loading…"</p> }.into_any();
        };
        // $partitions and the file count come from the background pass over the files
        let Some(parts) = ctx.partitions.get() else {
            let so_far = ctx.totals.get().map_or(0, |(t, _)| t.files);
            return view! { <p id="files-counting">{format!("Counting the files of version {}… {so_far} so far", info.version)}</p> }.into_any();
        };
        let n = ctx.totals.get().map_or(0, |(t, _)| t.files) as usize;
        let cols: Vec<String> = parts
            .iter()
            .flat_map(|p| p.min.keys().cloned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let pcols = info.partition_columns().to_vec();
        let head = view! { <tr>
            {pcols.iter().map(|c| view! { <th>{c.clone()}</th> }).collect_view()}
            <th>"file_count"</th><th>"total_size"</th><th>"record_count"</th>
            {cols.iter().map(|c| view! { <th>{format!("{c} min / max")}</th> }).collect_view()}
        </tr> };
        let body = parts.into_iter().map(|p| {
            let cols = cols.clone();
            view! { <tr>
                {pcols.iter().map(|c| view! { <td>{p.partition.get(c).map(cell).unwrap_or_default()}</td> }).collect_view()}
                <td>{p.file_count}</td><td>{fmt_bytes(p.total_size)}</td>
                <td>{p.record_count.map(|r| r.to_string()).unwrap_or_else(|| "unknown".into())}</td>
                {cols.iter().map(|c| view! { <td>{format!("{} / {}", p.min.get(c).map(cell).unwrap_or_default(), p.max.get(c).map(cell).unwrap_or_default())}</td> }).collect_view()}
            </tr> }
        }).collect_view();
        let (_, offset, shown) = page.get();
        let end = offset + shown.len();
        let files = shown.iter().map(|f| {
            let pv = info.partition_values_json(f).map(|m| m.iter().map(|(k, v)| format!("{k}={}", cell(v))).collect::<Vec<_>>().join(", ")).unwrap_or_default();
            view! { <tr>
                <td>{f.path.clone()}</td><td>{fmt_bytes(f.size)}</td>
                <td>{f.num_records().map(|r| r.to_string()).unwrap_or_default()}</td>
                <td>{f.deletion_vector.as_ref().map(|d| d.cardinality.to_string()).unwrap_or_default()}</td>
                <td>{pv}</td>
                <td class="meta">{f.stats.clone().unwrap_or_default()}</td>
            </tr> }
        }).collect_view();
        let (prev, next) = (info.clone(), info.clone());
        view! {
            <section id="files">
                <h3>"Partitions ($partitions)"</h3>
                <table class="list" id="partitions"><thead>{head}</thead><tbody>{body}</tbody></table>
                <h3>{format!("Files ({n})")}</h3>
                <p id="file-page">{format!("files {} to {end} of {n} (log order: the checkpoint's, then the newer commits')", offset + usize::from(end > offset))}
                    {(offset > 0).then(|| view! { <button on:click=move |_| turn_page(ctx, prev.clone(), offset.saturating_sub(PAGE), page)>"Previous"</button> })}
                    {(end < n).then(|| view! { <button on:click=move |_| turn_page(ctx, next.clone(), end, page)>"Next"</button> })}
                </p>
                <table class="list" id="file-list">
                    <thead><tr><th>"path"</th><th>"size"</th><th>"rows"</th><th>"deleted rows (DV)"</th><th>"partition"</th><th>"stats"</th></tr></thead>
                    <tbody>{files}</tbody>
                </table>
            </section>
        }.into_any()
    }
}

//! Files: a `$partitions`-style summary (files, bytes, rows, min/max per partition) and
//! the file list with statistics and deletion-vector cardinality.

use leptos::prelude::*;
use serde_json::Value;

use crate::state::use_ctx;
use deltalens_present::value::bytes as fmt_bytes;

const SHOWN: usize = 500;

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "∅".into(),
        v => v.to_string(),
    }
}

#[component]
pub fn FilesTab() -> impl IntoView {
    let ctx = use_ctx();
    let all = RwSignal::new(false);
    // the whole file list: loaded when this tab is shown
    Effect::new(move || {
        if ctx.info.get().is_some() && ctx.snapshot.get().is_none() {
            ctx.need_snapshot();
        }
    });
    move || {
        let Some(s) = ctx.snapshot.get() else {
            return view! { <p>"Loading…"</p> }.into_any();
        };
        let parts = match deltalens_present::partitions(&s) {
            Ok(p) => p,
            Err(e) => {
                return view! { <pre class="error">{crate::errors::explain_present(&e)}</pre> }
                    .into_any();
            }
        };
        let cols: Vec<String> = parts
            .iter()
            .flat_map(|p| p.min.keys().cloned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let pcols = s.partition_columns().to_vec();
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
        let n = s.files.len();
        let limit = if all.get() { n } else { SHOWN.min(n) };
        let files = s.files.iter().take(limit).map(|f| {
            let pv = s.partition_values_json(f).map(|m| m.iter().map(|(k, v)| format!("{k}={}", cell(v))).collect::<Vec<_>>().join(", ")).unwrap_or_default();
            view! { <tr>
                <td>{f.path.clone()}</td><td>{fmt_bytes(f.size)}</td>
                <td>{f.num_records().map(|r| r.to_string()).unwrap_or_default()}</td>
                <td>{f.deletion_vector.as_ref().map(|d| d.cardinality.to_string()).unwrap_or_default()}</td>
                <td>{pv}</td>
                <td class="meta">{f.stats.clone().unwrap_or_default()}</td>
            </tr> }
        }).collect_view();
        view! {
            <section id="files">
                <h3>"Partitions ($partitions)"</h3>
                <table class="list" id="partitions"><thead>{head}</thead><tbody>{body}</tbody></table>
                <h3>{format!("Files ({n})")}</h3>
                <table class="list" id="file-list">
                    <thead><tr><th>"path"</th><th>"size"</th><th>"rows"</th><th>"deleted rows (DV)"</th><th>"partition"</th><th>"stats"</th></tr></thead>
                    <tbody>{files}</tbody>
                </table>
                {(limit < n).then(|| view! { <button on:click=move |_| all.set(true)>{format!("Show all {n} files")}</button> })}
            </section>
        }.into_any()
    }
}

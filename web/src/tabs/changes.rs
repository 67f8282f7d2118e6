//! Changes: the change data feed between two versions (`table_changes`), inserts,
//! deletes and update pre-/post-images colour-coded and kept next to each other, with
//! counts per version as a chart. Without CDF, the row-level diff between the versions.

use std::collections::BTreeMap;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;
use deltalens_core::changes::Changes;
use deltalens_core::diff::TableDiff;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{Error, Table};
use leptos::prelude::*;

use crate::errors::explain;
use crate::rows::{self, Grid};
use crate::state::use_ctx;
use crate::tabs::{bars, grid_view};

const LIMIT: usize = 1000;

fn counts(batches: &[RecordBatch]) -> BTreeMap<(i64, String), usize> {
    let mut out = BTreeMap::new();
    for b in batches {
        let (Some(t), Some(v)) = (
            b.column_by_name("_change_type"),
            b.column_by_name("_commit_version"),
        ) else {
            continue;
        };
        let (Some(t), Some(v)) = (t.as_string_opt::<i32>(), v.as_primitive_opt::<Int64Type>())
        else {
            continue;
        };
        for i in 0..b.num_rows() {
            let ver = if v.is_null(i) { -1 } else { v.value(i) };
            *out.entry((ver, t.value(i).to_string())).or_insert(0) += 1;
        }
    }
    out
}

/// Changed rows per version and per change type (by type only when the rows carry no
/// versions, as a diff's do).
fn tallies(batches: &[RecordBatch]) -> (BTreeMap<i64, usize>, BTreeMap<String, usize>) {
    let c = counts(batches);
    let mut by_version: BTreeMap<i64, usize> = BTreeMap::new();
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for ((v, ty), n) in &c {
        *by_version.entry(*v).or_default() += n;
        *by_type.entry(ty.clone()).or_default() += n;
    }
    if c.is_empty() {
        // the diff has no versions: count by change type only
        for b in batches {
            if let Some(t) = b
                .column_by_name("_change_type")
                .and_then(|t| t.as_string_opt::<i32>().cloned())
            {
                for i in 0..t.len() {
                    *by_type.entry(t.value(i).to_string()).or_default() += 1;
                }
            }
        }
    }
    (by_version, by_type)
}

/// Orders `g`'s rows as the feed reads: per version, deletes, then each update preimage
/// followed by its postimage (paired in the order the feed lists them), then inserts.
/// Answers the column of the change type.
fn in_feed_order(g: &mut Grid) -> Option<usize> {
    let idx = g.columns.iter().position(|c| c == "_change_type");
    if let Some(i) = idx {
        let vi = g.columns.iter().position(|c| c == "_commit_version");
        let mut by_version: BTreeMap<i64, [Vec<Vec<String>>; 4]> = BTreeMap::new();
        for r in std::mem::take(&mut g.rows) {
            let v = vi.and_then(|v| r[v].parse::<i64>().ok()).unwrap_or(0);
            let k = match r[i].as_str() {
                "delete" => 0,
                "update_preimage" => 1,
                "update_postimage" => 2,
                _ => 3,
            };
            by_version.entry(v).or_default()[k].push(r);
        }
        for (_, [del, pre, post, ins]) in by_version {
            g.rows.extend(del);
            let (mut pre, mut post) = (pre.into_iter(), post.into_iter());
            loop {
                match (pre.next(), post.next()) {
                    (None, None) => break,
                    (a, b) => {
                        g.rows.extend(a);
                        g.rows.extend(b);
                    }
                }
            }
            g.rows.extend(ins);
        }
    }
    idx
}

#[component]
pub fn ChangesTab() -> impl IntoView {
    let ctx = use_ctx();
    let from = RwSignal::new(String::new());
    let to = RwSignal::new(String::new());
    let grid = RwSignal::new(None::<(Grid, Option<usize>)>);
    let note = RwSignal::new(String::new());
    let per_version = RwSignal::new(Vec::<(String, f64)>::new());
    let summary = RwSignal::new(Vec::<(String, usize)>::new());
    if let Some(l) = ctx.latest.get_untracked() {
        from.set(l.saturating_sub(1).to_string());
        to.set(l.to_string());
    }
    let run = move || {
        let Some(sess) = ctx.session.get_untracked() else {
            return;
        };
        let (Ok(a), Ok(b)) = (
            from.get_untracked().trim().parse::<u64>(),
            to.get_untracked().trim().parse::<u64>(),
        ) else {
            ctx.error
                .set(Some("Enter the first and last version (numbers).".into()));
            return;
        };
        ctx.run(
            format!("reading changes of versions {a} to {b}"),
            async move {
                let read = || {
                    let sess = sess.clone();
                    async move { read_changes(&sess.table, a, b).await }
                };
                let (schema, batches, told) = crate::extras::with_codecs(read).await?;
                note.set(told);
                let (by_version, by_type) = tallies(&batches);
                per_version.set(
                    by_version
                        .into_iter()
                        .map(|(v, n)| (format!("v{v}"), n as f64))
                        .collect(),
                );
                summary.set(by_type.into_iter().collect());
                let mut g = rows::grid(&schema, &batches)?;
                let idx = in_feed_order(&mut g);
                grid.set(Some((g, idx)));
                Ok(())
            },
        );
    };
    // the latest commit's changes at once, rather than an empty tab (unless something else
    // is running, which a run would cancel)
    let started = StoredValue::new(false);
    Effect::new(move |_| {
        let (latest, busy) = (ctx.latest.get(), ctx.busy.get());
        if let (Some(l), None, false) = (latest, busy, started.get_value()) {
            started.set_value(true);
            if from.get_untracked().is_empty() {
                from.set(l.saturating_sub(1).to_string());
                to.set(l.to_string());
            }
            leptos::task::spawn_local(async move { run() });
        }
    });
    view! {
        <section id="changes">
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); run(); }>
                "versions " <input id="changes-from" class="num" type="text" aria-label="from version" prop:value=move || from.get() on:input=move |ev| from.set(event_target_value(&ev)) />
                " to " <input id="changes-to" class="num" type="text" aria-label="to version" prop:value=move || to.get() on:input=move |ev| to.set(event_target_value(&ev)) />
                <button id="changes-run" type="submit">"Show changes"</button>
            </form>
            <p id="changes-note">{move || note.get()}</p>
            <ul id="changes-counts" class="counts">{move || summary.get().into_iter().map(|(t, n)| { let (c, d) = (t.clone(), t.clone()); view! { <li class=c><b>{t}</b>": "<span data-type=d>{n}</span></li> } }).collect_view()}</ul>
            {move || { let p = per_version.get(); (!p.is_empty()).then(|| bars("changed rows per version", p, "chart-changes")) }}
            <div class="scroll" tabindex="0" role="region" aria-label="changed rows">{move || grid.get().map(|(g, idx)| grid_view(g, "changes-grid", idx))}</div>
        </section>
    }
}

/// The changes of versions `a` to `b`: the change data feed where it is on, else the
/// row-level diff; the rows, their schema and what they are.
async fn read_changes(
    t: &Table,
    a: u64,
    b: u64,
) -> Result<(SchemaRef, Vec<RecordBatch>, String), String> {
    let opts = ScanOptions {
        limit: Some(LIMIT),
        ..Default::default()
    };
    let mut batches = Vec::new();
    let planned = Changes::new(t, a, Some(b), opts.clone()).await;
    let cdf = match planned {
        Ok(c) => match c
            .execute(&mut |x| {
                batches.push(x);
                Ok(true)
            })
            .await
        {
            Ok(_) => Some(c.schema().map_err(|e| explain(&e))?),
            Err(Error::CdfNotEnabled { .. }) => None,
            Err(e) => return Err(explain(&e)),
        },
        Err(Error::CdfNotEnabled { .. }) => None,
        Err(e) => return Err(explain(&e)),
    };
    let (schema, told) = match cdf {
        Some(s) => (
            s,
            format!("Change data feed of versions {a}–{b} (table_changes)"),
        ),
        None => {
            batches.clear();
            let from_v = a.saturating_sub(1);
            let d = TableDiff::new(t, from_v, b)
                .await
                .map_err(|e| explain(&e))?;
            d.rows(&opts, &mut |x| {
                batches.push(x);
                Ok(true)
            })
            .await
            .map_err(|e| explain(&e))?;
            let told = format!(
                "The change data feed is off for this range: rows inserted and deleted between versions {from_v} and {b} (row-level diff)"
            );
            (d.row_schema(&opts).map_err(|e| explain(&e))?, told)
        }
    };
    Ok((schema, batches, told))
}

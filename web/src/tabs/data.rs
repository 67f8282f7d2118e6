//! Data: rows at the version being looked at, with a column picker (Flink's
//! `columnNames`), a SQL filter, a limit, more rows loaded while scrolling, and downloads
//! of the current result as CSV, Parquet or Arrow.

use std::collections::BTreeSet;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_present::Format;
use leptos::prelude::*;

use crate::errors::explain;
use crate::rows;
use crate::state::use_ctx;
use crate::tabs::grid_view;

const STEP: usize = 100;

#[derive(Clone, Default)]
struct Result {
    schema: Option<SchemaRef>,
    batches: Vec<RecordBatch>,
    rows: usize,
    requests: u64,
    bytes: u64,
}

#[component]
pub fn DataTab() -> impl IntoView {
    let ctx = use_ctx();
    let filter = RwSignal::new(String::new());
    let limit = RwSignal::new(STEP);
    let picked = RwSignal::new(None::<BTreeSet<String>>);
    let result = RwSignal::new(Result::default());
    let ran_for = RwSignal::new(None::<(u64, String, usize, Option<BTreeSet<String>>)>);

    let run = move || {
        let (Some(sess), Some(info)) = (ctx.session.get_untracked(), ctx.info.get_untracked())
        else {
            return;
        };
        let f = filter.get_untracked();
        let n = limit.get_untracked();
        let cols = picked.get_untracked();
        ran_for.set(Some((info.version, f.clone(), n, cols.clone())));
        ctx.run(
            format!("reading up to {n} rows of version {}", info.version),
            async move {
                let filter = if f.trim().is_empty() {
                    None
                } else {
                    Some(Predicate::parse(&f).map_err(|e| explain(&e))?)
                };
                let columns = cols.map(|c| {
                    info.schema
                        .fields()
                        .iter()
                        .map(|x| x.name.clone())
                        .filter(|x| c.contains(x))
                        .collect::<Vec<_>>()
                });
                let opts = ScanOptions {
                    columns,
                    limit: Some(n),
                    filter,
                    ..Default::default()
                };
                let before = sess.stats();
                // the files chosen while they stream: a preview of a million-file table
                // keeps a handful of them, a partition filter that partition's
                let snap = info
                    .snapshot_for_scan(&opts)
                    .await
                    .map_err(|e| explain(&e))?;
                let scan = snap.scan(opts).map_err(|e| explain(&e))?;
                let schema = scan.schema_with([]);
                let mut batches = Vec::new();
                scan.execute(&mut |b| {
                    batches.push(b);
                    Ok(true)
                })
                .await
                .map_err(|e| explain(&e))?;
                let after = sess.stats();
                let rows = batches.iter().map(|b| b.num_rows()).sum();
                result.set(Result {
                    schema: Some(schema),
                    batches,
                    rows,
                    requests: after.requests - before.requests,
                    bytes: after.bytes - before.bytes,
                });
                Ok(())
            },
        );
    };
    // run when the version changes (time travel changes the preview), beside the
    // counting of its files
    Effect::new(move || {
        if let Some(s) = ctx.info.get()
            && ran_for.get_untracked().is_none_or(|r| r.0 != s.version)
        {
            run();
        }
    });
    let on_scroll = move |ev: leptos::ev::Event| {
        use wasm_bindgen::JsCast;
        let Some(el) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        let near_bottom = el.scroll_top() + el.client_height() + 40 >= el.scroll_height();
        let r = result.get_untracked();
        if near_bottom && ctx.busy.get_untracked().is_none() && r.rows >= limit.get_untracked() {
            limit.update(|l| *l += STEP);
            run();
        }
    };
    let download = move |kind: Format| {
        let r = result.get_untracked();
        let Some(schema) = r.schema else { return };
        let v = ctx.shown_version().unwrap_or(0);
        let out = rows::file(kind, &schema, &r.batches).and_then(|d| {
            rows::download(
                &format!("deltalens-v{v}.{}", kind.extension()),
                kind.content_type(),
                &d,
            )
        });
        match out {
            Ok(()) => {}
            Err(e) => ctx.error.set(Some(e)),
        }
    };
    let columns = move || {
        let Some(s) = ctx.info.get() else {
            return Vec::new();
        };
        s.schema
            .fields()
            .iter()
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
    };
    view! {
        <section id="data">
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); limit.set(limit.get_untracked().max(1)); run(); }>
                <input id="filter" type="text" aria-label="filter (SQL WHERE)" placeholder="filter, e.g. price > 10 AND brand = 'nars'"
                    prop:value=move || filter.get() on:input=move |ev| filter.set(event_target_value(&ev)) />
                <label>"limit "<input id="limit" class="num" type="number" min="1"
                    prop:value=move || limit.get().to_string()
                    on:change=move |ev| limit.set(event_target_value(&ev).parse().unwrap_or(STEP)) /></label>
                <button id="run" type="submit">"Run"</button>
                <span class="downloads">"download: "
                    <button type="button" on:click=move |_| download(Format::Csv)>"CSV"</button>
                    <button type="button" on:click=move |_| download(Format::Parquet)>"Parquet"</button>
                    <button type="button" on:click=move |_| download(Format::Arrow)>"Arrow"</button>
                </span>
            </form>
            <details class="columns"><summary>"columns"</summary>
                {move || columns().into_iter().map(|c| {
                    let c2 = c.clone();
                    let c3 = c.clone();
                    view! { <label><input type="checkbox" class="col-pick"
                        prop:checked=move || picked.get().is_none_or(|p| p.contains(&c2))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            let all: BTreeSet<String> = columns().into_iter().collect();
                            picked.update(|p| {
                                let set = p.get_or_insert_with(|| all.clone());
                                if on { set.insert(c3.clone()); } else { set.remove(&c3); }
                            });
                        } />{c}</label> }
                }).collect_view()}
            </details>
            <p class="summary" id="data-summary">{move || {
                let r = result.get();
                format!("{} rows · {} requests, {} bytes for this result", r.rows, r.requests, r.bytes)
            }}</p>
            <div class="scroll" tabindex="0" role="region" aria-label="rows" on:scroll=on_scroll>
                {move || {
                    let r = result.get();
                    r.schema.map(|s| match rows::grid(&s, &r.batches) {
                        Ok(g) => grid_view(g, "data-grid", None).into_any(),
                        Err(e) => view! { <p class="error">{e}</p> }.into_any(),
                    })
                }}
            </div>
        </section>
    }
}

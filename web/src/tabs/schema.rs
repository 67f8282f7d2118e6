//! Schema: a collapsible tree of nested fields with Delta and Arrow types, nullability,
//! partition marker, column-mapping physical name and id, comments and metadata; and the
//! schema changes against another version.

use std::collections::BTreeSet;

use deltalens_core::diff::TableDiff;
use leptos::prelude::*;

use crate::errors::explain;
use crate::state::use_ctx;

#[component]
pub fn SchemaTab() -> impl IntoView {
    let ctx = use_ctx();
    let collapsed = RwSignal::new(BTreeSet::<String>::new());
    let other = RwSignal::new(String::new());
    let changes = RwSignal::new(None::<Vec<(String, String, String, String)>>);
    let compare = move || {
        let (Some(sess), Some(s)) = (ctx.session.get_untracked(), ctx.info.get_untracked()) else {
            return;
        };
        let Ok(v) = other.get_untracked().trim().parse::<u64>() else {
            ctx.error
                .set(Some("Enter a version number to compare with.".into()));
            return;
        };
        ctx.run(
            format!("comparing schemas of versions {v} and {}", s.version),
            async move {
                let d = TableDiff::new(&sess.table, v, s.version)
                    .await
                    .map_err(|e| explain(&e))?;
                changes.set(Some(
                    d.schema_changes
                        .into_iter()
                        .map(|c| {
                            (
                                c.column,
                                c.change.to_string(),
                                c.from.unwrap_or_default(),
                                c.to.unwrap_or_default(),
                            )
                        })
                        .collect(),
                ));
                Ok(())
            },
        );
    };
    let tree = move || {
        // the version without its files is enough for the schema
        let Some(s) = ctx.info.get() else {
            return view! { <p>"Loading…"</p> }.into_any();
        };
        let rows = deltalens_present::schema_rows_of(&s.schema, s.partition_columns());
        let hidden = collapsed.get();
        let rows = rows.into_iter().filter(|r| {
            !hidden.iter().any(|h| r.path.starts_with(&format!("{h}.")))
        }).map(|r| {
            let path = r.path.clone();
            let is_collapsed = hidden.contains(&r.path);
            let toggle = r.has_children.then(|| {
                let p = path.clone();
                let label = format!("{} {}", if is_collapsed { "expand" } else { "collapse" }, p);
                view! { <button class="twisty" aria-expanded=(!is_collapsed).to_string() aria-label=label on:click=move |_| collapsed.update(|c| { if !c.remove(&p) { c.insert(p.clone()); } })>
                    {if is_collapsed { "▸" } else { "▾" }}</button> }
            });
            view! {
                <tr data-path=path>
                    <td style=format!("padding-left:{}em", r.depth as f64 * 1.2 + 0.3)>{toggle}<span class="field">{r.name}</span></td>
                    <td>{r.delta_type}</td>
                    <td class="arrow">{r.arrow_type}</td>
                    <td>{if r.nullable { "yes" } else { "no" }}</td>
                    <td>{if r.partition { "partition" } else { "" }}</td>
                    <td>{r.physical_name.unwrap_or_default()}</td>
                    <td>{r.field_id.map(|i| i.to_string()).unwrap_or_default()}</td>
                    <td>{r.comment.unwrap_or_default()}</td>
                    <td class="meta">{r.metadata.unwrap_or_default()}</td>
                </tr>
            }
        }).collect_view();
        view! {
            <table id="schema" class="list">
                <thead><tr><th>"column"</th><th>"Delta type"</th><th>"Arrow type"</th><th>"nullable"</th><th></th><th>"physical name"</th><th>"field id"</th><th>"comment"</th><th>"metadata"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }.into_any()
    };
    view! {
        <section>
            {tree}
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); compare(); }>
                "Schema changes since version "
                <input class="num" id="schema-compare" type="text" aria-label="compare with version" prop:value=move || other.get() on:input=move |ev| other.set(event_target_value(&ev)) />
                <button type="submit">"Compare"</button>
            </form>
            {move || changes.get().map(|c| if c.is_empty() {
                view! { <p id="schema-changes">"No schema changes."</p> }.into_any()
            } else {
                view! { <table class="list" id="schema-changes"><tr><th>"column"</th><th>"change"</th><th>"from"</th><th>"to"</th></tr>
                    {c.into_iter().map(|(a, b, f, t)| view! { <tr><td>{a}</td><td>{b}</td><td>{f}</td><td>{t}</td></tr> }).collect_view()}
                </table> }.into_any()
            })}
        </section>
    }
}

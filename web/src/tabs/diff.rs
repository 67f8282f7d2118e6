//! Diff: any two versions — files added and removed, deletion vectors, schema,
//! partitioning, protocol and property changes.

use deltalens_core::diff::TableDiff;
use leptos::prelude::*;

use crate::errors::explain;
use crate::state::use_ctx;
use deltalens_present::value::bytes as fmt_bytes;

#[derive(Clone, Default)]
struct Shown {
    added: Vec<(String, i64)>,
    removed: Vec<(String, i64)>,
    dvs: Vec<(String, i64, i64)>,
    schema: Vec<(String, String, String, String)>,
    props: Vec<(String, String, String)>,
    protocol: Option<String>,
    partitioning: bool,
}

impl Shown {
    /// What the tab shows of `d`.
    fn of(d: &TableDiff) -> Shown {
        Shown {
            added: d
                .files_added
                .iter()
                .map(|f| (f.path.clone(), f.size))
                .collect(),
            removed: d
                .files_removed
                .iter()
                .map(|f| (f.path.clone(), f.size))
                .collect(),
            dvs: d
                .deletion_vectors_changed
                .iter()
                .map(|c| (c.path.clone(), c.deleted_rows_from, c.deleted_rows_to))
                .collect(),
            schema: d
                .schema_changes
                .iter()
                .map(|c| {
                    (
                        c.column.clone(),
                        c.change.to_string(),
                        c.from.clone().unwrap_or_default(),
                        c.to.clone().unwrap_or_default(),
                    )
                })
                .collect(),
            props: d
                .property_changes
                .iter()
                .map(|p| {
                    (
                        p.key.clone(),
                        p.from.clone().unwrap_or_default(),
                        p.to.clone().unwrap_or_default(),
                    )
                })
                .collect(),
            protocol: d.protocol_change.as_ref().map(|(f, t)| {
                format!(
                    "reader {} → {}, writer {} → {}",
                    f.min_reader_version,
                    t.min_reader_version,
                    f.min_writer_version,
                    t.min_writer_version
                )
            }),
            partitioning: d.partition_columns_changed,
        }
    }
}

#[component]
pub fn DiffTab() -> impl IntoView {
    let ctx = use_ctx();
    let a = RwSignal::new(String::new());
    let b = RwSignal::new(String::new());
    if let Some(l) = ctx.latest.get_untracked() {
        a.set(l.saturating_sub(1).to_string());
        b.set(l.to_string());
    }
    let shown = RwSignal::new(None::<Shown>);
    let run = move || {
        let Some(sess) = ctx.session.get_untracked() else {
            return;
        };
        let (Ok(x), Ok(y)) = (
            a.get_untracked().trim().parse::<u64>(),
            b.get_untracked().trim().parse::<u64>(),
        ) else {
            ctx.error.set(Some("Enter two version numbers.".into()));
            return;
        };
        ctx.run(format!("comparing versions {x} and {y}"), async move {
            let d = TableDiff::new(&sess.table, x, y)
                .await
                .map_err(|e| explain(&e))?;
            shown.set(Some(Shown::of(&d)));
            Ok(())
        });
    };
    let files = |title: &'static str, id: &'static str, v: Vec<(String, i64)>| {
        view! {
            <h3>{format!("{title} ({})", v.len())}</h3>
            <table class="list" id=id>{v.into_iter().map(|(p, s)| view! { <tr><td>{p}</td><td>{fmt_bytes(s)}</td></tr> }).collect_view()}</table>
        }
    };
    view! {
        <section id="diff">
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); run(); }>
                "version " <input id="diff-a" class="num" type="text" aria-label="version" prop:value=move || a.get() on:input=move |ev| a.set(event_target_value(&ev)) />
                " against " <input id="diff-b" class="num" type="text" aria-label="against version" prop:value=move || b.get() on:input=move |ev| b.set(event_target_value(&ev)) />
                <button id="diff-run" type="submit">"Compare"</button>
            </form>
            {move || shown.get().map(|s| view! {
                <p>{s.protocol.clone().map_or_else(|| "Protocol unchanged.".to_string(), |p| format!("Protocol: {p}"))}
                   {if s.partitioning { " Partitioning changed." } else { "" }}</p>
                <h3>"Schema changes"</h3>
                <table class="list" id="diff-schema">{s.schema.into_iter().map(|(c, k, f, t)| view! { <tr><td>{c}</td><td>{k}</td><td>{f}</td><td>{t}</td></tr> }).collect_view()}</table>
                <h3>"Property changes"</h3>
                <table class="list" id="diff-props">{s.props.into_iter().map(|(k, f, t)| view! { <tr><td>{k}</td><td>{f}</td><td>{t}</td></tr> }).collect_view()}</table>
                {files("Files added", "diff-added", s.added)}
                {files("Files removed", "diff-removed", s.removed)}
                <h3>"Deletion vectors changed"</h3>
                <table class="list" id="diff-dvs">{s.dvs.into_iter().map(|(p, f, t)| view! { <tr><td>{p}</td><td>{f}" → "{t}" deleted rows"</td></tr> }).collect_view()}</table>
            })}
        </section>
    }
}

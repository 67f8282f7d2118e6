//! Overview: version, commit time, files, size, rows, partitioning, protocol and table
//! features, properties (Trino's `$properties`) and warnings.

use leptos::prelude::*;

use crate::state::use_ctx;

#[component]
pub fn Overview() -> impl IntoView {
    let ctx = use_ctx();
    move || {
        let (Some(info), Some(sess)) = (ctx.info.get(), ctx.session.get()) else {
            return view! { <p>"Loading…"</p> }.into_any();
        };
        // the version at once, its file totals as they stream in
        let totals = ctx.totals.get();
        let complete = totals.as_ref().is_some_and(|(_, done)| *done);
        let doc = deltalens_present::Overview::of_version(
            &sess.url,
            &info,
            totals.as_ref().filter(|_| complete).map(|(t, _)| t),
        );
        let counting = match &totals {
            Some((t, false)) => format!(
                "counting… {} files so far",
                crate::format::group_digits(&t.files.to_string())
            ),
            _ => "counting…".to_string(),
        };
        // the location is the page's header already
        let rows: Vec<(&'static str, String)> = doc
            .lines()
            .into_iter()
            .filter(|(k, _)| *k != "location")
            .map(|(k, v)| match k {
                "files" | "size" | "rows" if !complete => (k, counting.clone()),
                // counts read at a glance: 1,000,250 files
                "files" | "size" | "rows" => (k, crate::format::group_digits(&v)),
                _ => (k, v),
            })
            .collect();
        let props: Vec<(String, String)> = doc.properties.into_iter().collect();
        let warnings = doc.warnings;
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

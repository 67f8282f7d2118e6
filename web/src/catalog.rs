//! The catalog browser: a Unity Catalog catalog or schema opened through a relay
//! (`uc://main`, `uc://main.sales`) lists what it holds; a schema opens as the next level,
//! a table as the table (the same relay and token).

use leptos::prelude::*;

use crate::credentials::Form;
use crate::state::use_ctx;

#[component]
pub fn CatalogBrowser(form: RwSignal<Form>) -> impl IntoView {
    let ctx = use_ctx();
    let open = move |name: String| {
        // the same relay as the catalog; asked first if a secret would go with it
        let via = ctx.session.get_untracked().and_then(|s| s.via.clone());
        ctx.open_link(name, via, None, &form.get_untracked());
    };
    view! {
        <section id="catalog" aria-labelledby="catalog-title">
            <h2 id="catalog-title">{move || ctx.catalog.get().map(|c| c.0).unwrap_or_default()}</h2>
            {move || match ctx.catalog.get().and_then(|c| c.1) {
                None => view! { <p>"Listing…"</p> }.into_any(),
                Some(entries) if entries.is_empty() => view! { <p id="catalog-empty">"Nothing here that you may see."</p> }.into_any(),
                Some(entries) => view! {
                    <table class="list" id="catalog-entries">
                        <thead><tr><th>"name"</th><th>"kind"</th><th>"type"</th><th>"format"</th><th>"comment"</th></tr></thead>
                        <tbody>
                            {entries.into_iter().map(|e| {
                                let name = e.name.clone();
                                let readable = e.kind != "table" || e.format.as_deref().is_none_or(|f| f.eq_ignore_ascii_case("DELTA"));
                                view! {
                                    <tr>
                                        <td>{if readable {
                                            let n = name.clone();
                                            view! { <button class="link" on:click=move |_| open(n.clone())>{name.clone()}</button> }.into_any()
                                        } else {
                                            view! { <span>{name.clone()}</span> }.into_any()
                                        }}</td>
                                        <td>{e.kind}</td>
                                        <td>{e.table_type.unwrap_or_default()}</td>
                                        <td>{e.format.unwrap_or_default()}</td>
                                        <td>{e.comment.unwrap_or_default()}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any(),
            }}
        </section>
    }
}

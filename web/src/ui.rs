//! The page's components: the open form (storage options, recent tables), the link
//! confirmation, the version bar (time travel, follow), the tab bar with the tab shown,
//! the status line with progress and cancel, and the error box. The state they show and
//! change lives in [`crate::state`]; the tabs in [`crate::tabs`].

use std::time::Duration;

use deltalens_core::VersionSpec;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::credentials::{self, Filled, Form, S3Keys};
use crate::format::{fmt_io, fmt_ranges_ignored};
use crate::session;
use crate::state::{Ctx, Tab, use_ctx};
use crate::tabs;

#[component]
pub fn App() -> impl IntoView {
    let ctx = Ctx::new();
    provide_context(ctx);
    let start = session::read_url();
    if let Some(t) = start.tab.as_deref().and_then(Tab::parse) {
        ctx.tab.set(t);
    }
    ctx.query.set(start.query.clone());
    let stored = credentials::load();
    let remember = RwSignal::new(stored.is_some());
    let form = RwSignal::new(stored.unwrap_or_default());
    let url = RwSignal::new(start.table.clone().unwrap_or_default());
    // A link (`?table=…&via=…`) may come from anyone. Its relay is used beside the form,
    // never written into it; the form's secrets go only where each is bound, and when one
    // would go with this link the page asks first, naming where (`Ctx::open_link`).
    if let Some(table) = start.table.clone() {
        ctx.open_link(
            table,
            start.via.clone(),
            start.version,
            &form.get_untracked(),
        );
    }
    // whether the table URL field holds what the user typed or picked from their own
    // opens (not what a link put there): only then does their Open bind typed secrets
    let typed = RwSignal::new(start.table.is_none());
    follow_the_page(ctx, form);
    // the user's own Open of what they typed: the secrets typed since they were last bound
    // are bound to where this open reads, and the form is stored only here, with
    // "remember" ticked; a URL a link left in the field opens as the link would
    let open = move || {
        let table = url.get_untracked();
        let via = Some(form.get_untracked().relay).filter(|r| !r.trim().is_empty());
        if !typed.get_untracked() {
            ctx.open_link(table, via, None, &form.get_untracked());
            return;
        }
        let resolved = via.as_deref().map(session::resolve_relay);
        // a table that cannot be opened binds nothing (the open says why)
        let mut scope = None;
        form.update(|f| scope = f.bind_typed(&table, resolved.as_deref()).ok().flatten());
        ctx.consent(scope);
        let f = form.get_untracked();
        if remember.get_untracked() {
            credentials::save(&f);
        } else {
            credentials::forget();
        }
        session::remember_recent(&table);
        ctx.open(table, via, &f, None);
    };
    view! {
        <header>
            <h1>"deltalens"</h1>
            <form class="open" on:submit=move |ev| { ev.prevent_default(); open(); }>
                <input id="table-url" type="text" aria-label="table URL" placeholder="s3://bucket/table, abfss://container@account.dfs.core.windows.net/table, gs://…, https://…, uc://catalog.schema.table (through a relay)"
                    prop:value=move || url.get() on:input=move |ev| { typed.set(true); url.set(event_target_value(&ev)) } />
                <button id="open" type="submit">"Open"</button>
                <StorageOptions form remember />
                <Recent url typed />
            </form>
        </header>
        <Show when=move || ctx.pending.get().is_some()>
            <ConfirmLink form />
        </Show>
        <Status />
        <Show when=move || ctx.session.get().is_none() && ctx.pending.get().is_none()>
            <crate::landing::Landing url />
        </Show>
        <Show when=move || ctx.session.get().is_some() && ctx.catalog.get().is_some()>
            <crate::catalog::CatalogBrowser form />
        </Show>
        <Show when=move || ctx.session.get().is_some() && ctx.catalog.get().is_none()>
            <TableViews />
        </Show>
    }
}

/// Back and Forward restore the table, version and tab; keys: `/` focuses the filter, `[`
/// and `]` step versions (not while typing in a field); requests and bytes are refreshed
/// while anything runs. Each listener ends with the page's owner.
fn follow_the_page(ctx: Ctx, form: RwSignal<Form>) {
    let on_pop = window_event_listener(leptos::ev::popstate, move |_| {
        ctx.restore(&form.get_untracked());
    });
    let on_key = window_event_listener(leptos::ev::keydown, move |ev| global_keys(ctx, &ev));
    on_cleanup(move || {
        on_pop.remove();
        on_key.remove();
    });
    let progress = set_interval_with_handle(
        move || {
            if ctx.busy.get_untracked().is_some() || ctx.counting.get_untracked().is_some() {
                ctx.refresh_io();
            }
        },
        Duration::from_millis(200),
    );
    if let Ok(h) = progress {
        on_cleanup(move || h.clear());
    }
}

/// The question a link asks before the secrets remembered for an origin go with it: the
/// table, the link's relay, which secrets and for which origin, named
/// (`Ctx::open_link`); the answer goes to `Ctx::answer_link`.
#[component]
fn ConfirmLink(form: RwSignal<Form>) -> impl IntoView {
    let ctx = use_ctx();
    let answer = move |with_credentials: bool| {
        ctx.answer_link(with_credentials, &form.get_untracked());
    };
    view! {
        <div id="confirm-open" class="confirm" role="alertdialog" aria-labelledby="confirm-text">
            <p id="confirm-text">"This link opens "
                <code id="confirm-table">{move || ctx.pending.get().map(|c| c.table).unwrap_or_default()}</code>
                {move || ctx.pending.get().and_then(|c| c.via).map(|v| view! { " through the relay " <code id="confirm-via">{v}</code> })}
                ". The "{move || ctx.pending.get().map(|c| c.secrets.join(" and ")).unwrap_or_default()}
                " remembered on this device for "
                <code id="confirm-origin">{move || ctx.pending.get().and_then(|c| c.origin).unwrap_or_default()}</code>
                " would be sent there. Send them?"</p>
            <button id="confirm-with" on:click=move |_| answer(true)>"Open with my credentials"</button>
            <button id="confirm-without" on:click=move |_| answer(false)>"Open without credentials"</button>
        </div>
    }
}

/// An open table's views: the version bar, the tab bar and the tab shown.
#[component]
fn TableViews() -> impl IntoView {
    let ctx = use_ctx();
    view! {
        <VersionBar />
        <nav class="tabs" role="tablist" aria-label="table views" on:keydown=move |ev| tab_keys(ctx, &ev)>
            {Tab::ALL.into_iter().map(|t| view! {
                <button class="tab" id=format!("tab-{}", t.name()) role="tab"
                    aria-controls="panel"
                    aria-selected=move || (ctx.tab.get() == t).to_string()
                    tabindex=move || if ctx.tab.get() == t { "0" } else { "-1" }
                    class:active=move || ctx.tab.get() == t
                    on:click=move |_| ctx.show_tab(t)>
                    {t.name()}
                </button>
            }).collect_view()}
        </nav>
        <main id="panel" role="tabpanel" aria-labelledby=move || format!("tab-{}", ctx.tab.get().name())>
            {move || match ctx.tab.get() {
                Tab::Overview => tabs::overview::Overview().into_any(),
                Tab::Schema => tabs::schema::SchemaTab().into_any(),
                Tab::History => tabs::history::HistoryTab().into_any(),
                Tab::Data => tabs::data::DataTab().into_any(),
                Tab::Changes => tabs::changes::ChangesTab().into_any(),
                Tab::Diff => tabs::diff::DiffTab().into_any(),
                Tab::Files => tabs::files::FilesTab().into_any(),
                Tab::Query => tabs::query::QueryTab().into_any(),
            }}
        </main>
    }
}

/// The page's keys, unless the focus is in a text field: `/` focuses the Data tab's
/// filter, `[` and `]` show the previous and next version.
fn global_keys(ctx: Ctx, ev: &leptos::ev::KeyboardEvent) {
    use wasm_bindgen::JsCast;
    let typing = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
    if typing
        || ev.ctrl_key()
        || ev.meta_key()
        || ev.alt_key()
        || ctx.session.get_untracked().is_none()
    {
        return;
    }
    match ev.key().as_str() {
        "/" => {
            ev.prevent_default();
            ctx.show_tab(Tab::Data);
            // the tab renders on the next frame
            leptos::task::spawn_local(async move {
                crate::state::next_frame().await;
                crate::state::focus("filter");
            });
        }
        "[" => ctx.step_version(-1),
        "]" => ctx.step_version(1),
        _ => {}
    }
}

/// Arrow keys, Home and End move between the tabs (the WAI-ARIA tabs pattern), and focus
/// follows.
fn tab_keys(ctx: Ctx, ev: &leptos::ev::KeyboardEvent) {
    let all = Tab::ALL;
    let Some(i) = all.iter().position(|t| *t == ctx.tab.get_untracked()) else {
        return;
    };
    let next = match ev.key().as_str() {
        "ArrowRight" => all[(i + 1) % all.len()],
        "ArrowLeft" => all[(i + all.len() - 1) % all.len()],
        "Home" => all[0],
        "End" => all[all.len() - 1],
        _ => return,
    };
    ev.prevent_default();
    ctx.show_tab(next);
    crate::state::focus(&format!("tab-{}", next.name()));
}

#[component]
fn StorageOptions(form: RwSignal<Form>, remember: RwSignal<bool>) -> impl IntoView {
    let field = move |label: &'static str,
                      id: &'static str,
                      secret: bool,
                      get: fn(&Form) -> String,
                      set: fn(&mut Form, String)| {
        view! {
            <label>{label}
                <input id=id type=if secret { "password" } else { "text" } autocomplete="off"
                    prop:value=move || get(&form.get())
                    on:input=move |ev| form.update(|f| set(f, event_target_value(&ev))) />
            </label>
        }
    };
    view! {
        <details class="options">
            <summary>"Storage options"</summary>
            <fieldset><legend>"S3 / S3-compatible"</legend>
                {field("endpoint", "s3-endpoint", false, |f| f.s3_endpoint.clone(), |f, v| f.s3_endpoint = v)}
                {field("region", "s3-region", false, |f| f.s3_region.clone(), |f, v| f.s3_region = v)}
                {field("access key id", "s3-key", false, |f| f.s3.value.key.clone(), |f, v| f.s3.set(S3Keys { key: v, ..f.s3.value.clone() }))}
                {field("secret access key", "s3-secret", true, |f| f.s3.value.secret.clone(), |f, v| f.s3.set(S3Keys { secret: v, ..f.s3.value.clone() }))}
                {field("session token", "s3-token", true, |f| f.s3.value.token.clone(), |f, v| f.s3.set(S3Keys { token: v, ..f.s3.value.clone() }))}
                <Bound id="s3-bound" form origin=|f| f.s3.origin.clone() filled=|f| f.s3.value.filled() />
                <label><input type="checkbox" prop:checked=move || form.get().s3_virtual_hosted
                    on:change=move |ev| form.update(|f| f.s3_virtual_hosted = event_target_checked(&ev)) />"virtual-hosted style"</label>
            </fieldset>
            <fieldset><legend>"Azure"</legend>
                {field("SAS token", "azure-sas", true, |f| f.azure_sas.value.clone(), |f, v| f.azure_sas.set(v))}
                <Bound id="azure-bound" form origin=|f| f.azure_sas.origin.clone() filled=|f| f.azure_sas.value.filled() />
                {field("account (for az://)", "azure-account", false, |f| f.azure_account.clone(), |f, v| f.azure_account = v)}
                {field("blob endpoint", "azure-endpoint", false, |f| f.azure_endpoint.clone(), |f, v| f.azure_endpoint = v)}
            </fieldset>
            <fieldset><legend>"Relay: deltalens serve or a worker reads the table for this tab (no CORS rule, no storage secret here)"</legend>
                {field("relay URL", "relay", false, |f| f.relay.clone(), |f, v| f.relay = v)}
                {field("relay token", "relay-token", true, |f| f.relay_token.value.clone(), |f, v| f.relay_token.set(v))}
                <Bound id="relay-bound" form origin=|f| f.relay_token.origin.clone() filled=|f| f.relay_token.value.filled() />
            </fieldset>
            <label><input type="checkbox" prop:checked=move || remember.get()
                on:change=move |ev| remember.set(event_target_checked(&ev)) />
                "remember on this device (otherwise credentials stay in this tab's memory only)"</label>
        </details>
    }
}

/// Where a secret of the form goes: the one origin it is bound to, or nowhere until the
/// next Open binds it.
#[component]
fn Bound(
    id: &'static str,
    form: RwSignal<Form>,
    origin: fn(&Form) -> Option<String>,
    filled: fn(&Form) -> bool,
) -> impl IntoView {
    view! {
        <p class="bound" id=id>{move || form.with(|f| match (filled(f), origin(f)) {
            (false, _) => String::new(),
            (true, Some(o)) => format!("sent only to {o}"),
            (true, None) => "bound to the origin of your next Open".to_string(),
        })}</p>
    }
}

#[component]
fn Recent(url: RwSignal<String>, typed: RwSignal<bool>) -> impl IntoView {
    let ctx = use_ctx();
    let recent = move || {
        ctx.session.get(); // re-read after each open
        session::recent()
    };
    view! {
        <div class="recent">
            {move || recent().into_iter().map(|r| {
                let r2 = r.clone();
                view! { <button type="button" class="link" on:click=move |_| { typed.set(true); url.set(r2.clone()) }>{r}</button> }
            }).collect_view()}
        </div>
    }
}

#[component]
fn Status() -> impl IntoView {
    let ctx = use_ctx();
    view! {
        <div class="status" id="status" role="status" aria-live="polite">
            {move || {
                let counting = ctx.counting.get().map(|v| format!("counting the files of version {v}"));
                let label = match (ctx.busy.get(), counting) {
                    (Some(b), Some(c)) => Some(format!("{b}; {c}")),
                    (b, c) => b.or(c),
                };
                label.map(|b| view! {
                    <span class="busy">{b}"… "</span>
                    <button id="cancel" on:click=move |_| ctx.cancel()>"Cancel"</button>
                })
            }}
            <span id="io">{move || { let (r, b, _) = ctx.io.get(); fmt_io(r, b) }}</span>
            {move || { let (_, _, ignored) = ctx.io.get(); (ignored > 0).then(|| view! {
                <span class="warning" id="range-ignored">{fmt_ranges_ignored(ignored)}</span>
            }) }}
        </div>
        <div role="alert">{move || ctx.error.get().map(|e| view! { <pre class="error" id="error">{e}</pre> })}</div>
    }
}

#[component]
fn VersionBar() -> impl IntoView {
    let ctx = use_ctx();
    let ts = RwSignal::new(String::new());
    let follow = RwSignal::new(false);
    let every = RwSignal::new(10u32);
    // Live: poll for new commits (Flink's updateCheckIntervalMillis); stopped with the bar
    let poll = set_interval_with_handle(
        move || {
            thread_local! { static TICKS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) }; }
            let n = TICKS.with(|t| {
                t.set(t.get() + 1);
                t.get()
            });
            if !follow.get_untracked()
                || !n.is_multiple_of(every.get_untracked().max(1))
                || ctx.busy.get_untracked().is_some()
            {
                return;
            }
            let Some(s) = ctx.session.get_untracked() else {
                return;
            };
            spawn_local(async move {
                // the newest version without its files: a poll costs the log's tip
                if let Ok(info) = s.table.version_info(VersionSpec::Latest).await
                    && ctx.latest.get_untracked().is_some_and(|l| info.version > l)
                {
                    ctx.latest.set(Some(info.version)); // the History tab reloads for it
                    if ctx.version.get_untracked().is_none() {
                        ctx.load(None);
                    }
                }
            });
        },
        Duration::from_secs(1),
    );
    if let Ok(h) = poll {
        on_cleanup(move || h.clear());
    }
    view! {
        <div class="versionbar">
            <span id="table-name">{move || ctx.session.get().map(|s| s.url.clone())}</span>
            <label>"version "
                <input id="version-slider" type="range" min="0"
                    prop:max=move || ctx.latest.get().unwrap_or(0).to_string()
                    prop:value=move || ctx.shown_version().unwrap_or(0).to_string()
                    on:change=move |ev| {
                        let v: Option<u64> = event_target_value(&ev).parse().ok();
                        let latest = ctx.latest.get_untracked();
                        ctx.load(if v == latest { None } else { v });
                    } />
                <b id="version">{move || ctx.shown_version().map(|v| v.to_string()).unwrap_or_default()}</b>
                " of " {move || ctx.latest.get().map(|v| v.to_string()).unwrap_or_default()}
            </label>
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); ctx.travel_to(ts.get_untracked()); }>
                <input id="timestamp" type="text" aria-label="timestamp as of" placeholder="TIMESTAMP AS OF (2024-01-31 or ISO-8601)"
                    prop:value=move || ts.get() on:input=move |ev| ts.set(event_target_value(&ev)) />
                <button type="submit">"Go"</button>
            </form>
            <button on:click=move |_| ctx.load(None)>"Latest"</button>
            <label title="poll for new commits"><input id="follow" type="checkbox" prop:checked=move || follow.get()
                on:change=move |ev| follow.set(event_target_checked(&ev)) />"follow every "
                <input class="num" type="number" min="1" aria-label="poll every seconds" prop:value=move || every.get().to_string()
                    on:change=move |ev| every.set(event_target_value(&ev).parse().unwrap_or(10)) />" s"</label>
        </div>
    }
}

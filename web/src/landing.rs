//! The landing view, before a table is open: the tables the page's own server serves
//! or relays (`GET /v1/tables`, when it answers: `deltalens serve`, the worker), the
//! tables opened recently on this device, and the URL forms the box takes.

use leptos::prelude::*;
use serde::Deserialize;

use crate::session;

/// `GET /v1/tables` of the page's server.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct ServerTables {
    /// Table URLs (and catalogs) it relays.
    #[serde(default)]
    pub tables: Vec<String>,
    /// Names of the local tables it serves under `/tables/`.
    #[serde(default)]
    pub served: Vec<String>,
}

/// Read `/v1/tables` of the page's origin; nothing when it does not answer with JSON
/// (a plain static host).
async fn server_tables() -> Option<ServerTables> {
    let w = web_sys::window()?;
    let resp = wasm_bindgen_futures::JsFuture::from(w.fetch_with_str("v1/tables"))
        .await
        .ok()?;
    let resp: web_sys::Response = wasm_bindgen::JsCast::dyn_into(resp).ok()?;
    if !resp.ok() {
        return None;
    }
    let text = wasm_bindgen_futures::JsFuture::from(resp.text().ok()?)
        .await
        .ok()?
        .as_string()?;
    parse(&text)
}

/// Bytes of a `/v1/tables` answer the page reads.
pub const MAX_ANSWER: usize = 1 << 20;

/// The answer, if it is one (bounded: a page lists at most 200 tables).
pub fn parse(text: &str) -> Option<ServerTables> {
    if text.len() > MAX_ANSWER {
        return None;
    }
    let mut t: ServerTables = deltalens_json::from_str(text).ok()?;
    t.tables.truncate(200);
    t.served.truncate(200);
    Some(t)
}

/// The link that opens `table` (through the page's relay for a relayed URL).
fn open_link(origin: &str, table: &str, relayed: bool) -> String {
    let enc = |s: &str| {
        js_sys::encode_uri_component(s)
            .as_string()
            .unwrap_or_default()
    };
    if relayed {
        format!("?table={}&via=/", enc(table))
    } else {
        format!("?table={}", enc(&format!("{origin}/tables/{table}")))
    }
}

/// URL forms the box takes, with what each is.
const EXAMPLES: [(&str, &str); 6] = [
    (
        "s3://bucket/path/to/table",
        "Amazon S3 or a compatible store (endpoint under Storage options)",
    ),
    (
        "abfss://container@account.dfs.core.windows.net/table",
        "Azure Data Lake Storage / Blob (a SAS under Storage options)",
    ),
    ("gs://bucket/table", "Google Cloud Storage"),
    (
        "https://host/path/to/table",
        "any HTTPS server that answers Range requests",
    ),
    ("r2://bucket/table", "Cloudflare R2 (through a worker)"),
    (
        "uc://catalog.schema.table",
        "a Unity Catalog table (through a relay: deltalens serve or the worker)",
    ),
];

#[component]
pub fn Landing(url: RwSignal<String>) -> impl IntoView {
    let tables = LocalResource::new(server_tables);
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    let recent = session::recent();
    view! {
        <section id="landing">
            <h2>"Look inside a Delta table"</h2>
            <p class="muted">"Paste a table's URL above. The tab reads the transaction log and the Parquet files straight from storage, with range requests: only the bytes it needs, nothing sent anywhere else."</p>
            <Suspense fallback=|| view! { <div class="skeleton" aria-hidden="true"><div></div></div> }>
                {move || {
                    let origin = origin.clone();
                    tables.get().flatten().map(|t| {
                        let served = t.served.into_iter().map(|n| (n.clone(), open_link(&origin, &n, false)));
                        let relayed = t.tables.into_iter().map(|u| (u.clone(), open_link(&origin, &u, true)));
                        let all: Vec<(String, String)> = served.chain(relayed).collect();
                        (!all.is_empty()).then(|| view! {
                            <h3>"Tables on this server"</h3>
                            <ul class="tables" id="landing-tables">
                                {all.into_iter().map(|(name, href)| view! { <li><a href=href>{name}</a></li> }).collect_view()}
                            </ul>
                        })
                    })
                }}
            </Suspense>
            {(!recent.is_empty()).then(|| view! {
                <h3>"Opened recently on this device"</h3>
                <ul class="tables" id="landing-recent">
                    {recent.into_iter().map(|r| {
                        let r2 = r.clone();
                        view! { <li><button type="button" class="link" on:click=move |_| url.set(r2.clone())>{r}</button></li> }
                    }).collect_view()}
                </ul>
            })}
            <h3>"Table URLs"</h3>
            <ul class="examples">
                {EXAMPLES.into_iter().map(|(u, what)| view! {
                    <li><button type="button" class="link" on:click=move |_| url.set(u.to_string())><code>{u}</code></button>" — "{what}</li>
                }).collect_view()}
            </ul>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[wasm_bindgen_test::wasm_bindgen_test]
    fn the_server_answer_is_read_and_bounded() {
        assert_eq!(
            parse(r#"{"tables":["s3://b/t"],"served":["demo"]}"#),
            Some(ServerTables {
                tables: vec!["s3://b/t".into()],
                served: vec!["demo".into()]
            })
        );
        // the worker lists no local tables
        assert_eq!(parse(r#"{"tables":[]}"#), Some(ServerTables::default()));
        assert_eq!(parse("<html>"), None);
        let many = format!(r#"{{"served":[{}]}}"#, vec!["\"x\""; 1000].join(","));
        assert_eq!(parse(&many).map(|t| t.served.len()), Some(200));
        // an answer too long to be a list of tables is not read at all
        let huge = format!(r#"{{"served":[{}]}}"#, vec!["\"x\""; 300_000].join(","));
        assert!(huge.len() > MAX_ANSWER);
        assert_eq!(parse(&huge), None);
    }
}

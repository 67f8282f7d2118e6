//! Overview: cards to read at a glance (version, last commit and its age, files, size,
//! rows, rows hidden by deletion vectors, partitions), the table's health (findings with
//! what they mean and the usual remedy, a file-size histogram, size per partition), then
//! the details: commit time, protocol and table features, properties (Trino's
//! `$properties`) and warnings.

use deltalens_present::health::{Health, duration};
use deltalens_present::health_series::SERIES_POINTS;
use deltalens_present::value::bytes;
use leptos::prelude::*;

use crate::format::group_digits;
use crate::state::use_ctx;
use crate::tabs::{bars, hbars};

/// A card: a label, a value, a note under it.
fn card(id: &'static str, label: &'static str, value: String, note: String) -> impl IntoView {
    view! {
        <div class="card" id=id>
            <div class="label">{label}</div>
            <div class="value">{value}</div>
            <div class="note">{note}</div>
        </div>
    }
}

/// The health panel: one row per finding, its figures, meaning and remedy on demand; the
/// file-size histogram and the size per partition.
fn health_view(h: Health) -> impl IntoView {
    let findings = h
        .findings
        .into_iter()
        .map(|f| {
            let sev = f.severity.as_str();
            let figures = f
                .figures
                .into_iter()
                .map(|x| view! { <tr><th>{x.label}</th><td>{x.value}</td></tr> })
                .collect_view();
            view! {
                <li class=format!("finding {sev}") data-id=f.id>
                    <details>
                        <summary><span class="badge">{sev}</span>" "<b>{f.title}</b>": "{f.summary}</summary>
                        <table class="kv">{figures}</table>
                        <p><b>"What it means: "</b>{f.meaning}</p>
                        <p><b>"Usual remedy: "</b>{f.remedy}</p>
                    </details>
                </li>
            }
        })
        .collect_view();
    let sizes: Vec<(String, f64, String)> = h
        .size_histogram
        .iter()
        .map(|b| {
            (
                b.label.to_string(),
                b.files as f64,
                format!(
                    "{} files, {}",
                    group_digits(&b.files.to_string()),
                    bytes(b.bytes as i64)
                ),
            )
        })
        .collect();
    let parts = h.partitions.map(|p| {
        let mut rows: Vec<(String, f64, String)> = p
            .top
            .iter()
            .chain(p.other.iter())
            .map(|s| {
                let rows = s.rows.map_or("rows unknown".into(), |r| {
                    format!("{} rows", group_digits(&r.to_string()))
                });
                (
                    s.partition.clone(),
                    s.bytes as f64,
                    format!("{}, {} files, {rows}", bytes(s.bytes as i64), s.files),
                )
            })
            .collect();
        rows.truncate(11);
        hbars(
            "size per partition (largest first)",
            rows,
            "chart-partitions",
        )
    });
    view! {
        <h3>"Health"</h3>
        <ul class="findings" id="health">{findings}</ul>
        <div class="charts">
            {hbars("files by size", sizes, "chart-file-sizes")}
            {parts}
        </div>
        <h3>"Health over history"</h3>
        {series_view()}
    }
}

fn pct(s: Option<f64>) -> String {
    s.map_or("–".into(), |s| format!("{:.1}%", s * 100.0))
}

/// Health over history: read on demand (each point reads its version's files, as the
/// panel above did), then files, size and the small-file share per version, and a table
/// of every figure.
fn series_view() -> impl IntoView {
    let ctx = use_ctx();
    move || {
        let Some(s) = ctx.health_series.get() else {
            return view! {
                <div id="health-series">
                    <button id="read-health-series" on:click=move |_| ctx.read_health_series(SERIES_POINTS)>
                        {format!("Read the health at {SERIES_POINTS} versions")}
                    </button>
                    <span class="muted">" spread over the newest commits; each reads its version's files"</span>
                </div>
            }
            .into_any();
        };
        let label = |v: u64| format!("v{v}");
        let files = s
            .points
            .iter()
            .map(|p| (label(p.version), p.files as f64))
            .collect();
        let size = s
            .points
            .iter()
            .map(|p| (label(p.version), p.bytes as f64))
            .collect();
        let small = s
            .points
            .iter()
            .map(|p| (label(p.version), p.small_file_share.unwrap_or(0.0) * 100.0))
            .collect();
        let rows = s
            .points
            .iter()
            .map(|p| {
                view! {
                    <tr>
                        <td>{p.version}</td>
                        <td>{group_digits(&p.files.to_string())}</td>
                        <td>{bytes(p.bytes as i64)}</td>
                        <td>{pct(p.small_file_share)}</td>
                        <td>{pct(p.deleted_row_share)}</td>
                        <td>{pct(p.files_without_stats_share)}</td>
                        <td>{p.largest_partition_to_median.map_or("–".into(), |r| format!("{r:.1}×"))}</td>
                        <td>{p.commits_since_checkpoint}</td>
                        <td>{group_digits(&p.tombstones.to_string())}</td>
                        <td>{if p.warnings.is_empty() { "–".to_string() } else { p.warnings.join(", ") }}</td>
                    </tr>
                }
            })
            .collect_view();
        let missing = s
            .unavailable
            .iter()
            .map(|u| view! { <li class="warning">{format!("version {} not read: {}", u.version, u.reason)}</li> })
            .collect_view();
        view! {
            <div id="health-series">
                <div class="charts">
                    {bars("active files per version", files, "chart-series-files")}
                    {bars("table size per version (bytes)", size, "chart-series-bytes")}
                    {bars("files under 32 MiB per version (%)", small, "chart-series-small")}
                </div>
                <table class="grid" id="health-series-table">
                    <caption>"Health over history"</caption>
                    <thead><tr>
                        <th scope="col">"version"</th><th scope="col">"files"</th><th scope="col">"size"</th>
                        <th scope="col">"small files"</th><th scope="col">"rows hidden by DVs"</th>
                        <th scope="col">"files without stats"</th><th scope="col">"partition skew"</th>
                        <th scope="col">"commits since checkpoint"</th><th scope="col">"tombstones"</th>
                        <th scope="col">"needs attention"</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <ul class="warnings">{missing}</ul>
            </div>
        }
        .into_any()
    }
}

/// The Details table's rows of `doc`: the totals shown as `counting` until `complete`, and
/// grouped by thousands (1,000,250 files) when they are; the location is the page's
/// header already.
fn detail_rows(
    doc: &deltalens_present::Overview,
    complete: bool,
    counting: &str,
) -> Vec<(&'static str, String)> {
    doc.lines()
        .into_iter()
        .filter(|(k, _)| *k != "location")
        .map(|(k, v)| match k {
            "files" | "size" | "rows" if !complete => (k, counting.to_string()),
            "files" | "size" | "rows" => (k, group_digits(&v)),
            _ => (k, v),
        })
        .collect()
}

/// The health section, or its skeleton while it is read.
fn health_or_skeleton(health: Option<Health>) -> AnyView {
    match health {
        Some(h) => health_view(h).into_any(),
        None => view! {
            <h3>"Health"</h3>
            <div class="skeleton" aria-hidden="true"><div></div><div></div><div></div></div>
            <p class="muted">"reading the files, tombstones and recent history…"</p>
        }
        .into_any(),
    }
}

#[component]
pub fn Overview() -> impl IntoView {
    let ctx = use_ctx();
    move || {
        let (Some(info), Some(sess)) = (ctx.info.get(), ctx.session.get()) else {
            return view! {
                <div class="cards skeleton" aria-hidden="true"><div></div><div></div><div></div><div></div></div>
                <p class="muted">"Reading the version…"</p>
            }
            .into_any();
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
        let rows = detail_rows(&doc, complete, &counting);
        let props: Vec<(String, String)> = doc.properties.into_iter().collect();
        let warnings = doc.warnings;
        let health = ctx.health.get();
        let now = js_sys::Date::now() as i64;
        let pending = || {
            if complete {
                "not known".to_string()
            } else {
                counting.clone()
            }
        };
        let files_note = health.as_ref().map_or(String::new(), |h| {
            format!(
                "{} under 32 MiB",
                group_digits(&h.files.files_under_32_mib.to_string())
            )
        });
        let hidden = health.as_ref().map_or_else(pending, |h| {
            group_digits(&h.files.rows_hidden_by_deletion_vectors.to_string())
        });
        let hidden_note = health.as_ref().map_or(String::new(), |h| {
            format!(
                "{} files with deletion vectors",
                h.files.files_with_deletion_vectors
            )
        });
        let partitions = match (doc.partition_columns.is_empty(), &health) {
            (true, _) => "none".to_string(),
            (false, Some(h)) => h
                .partitions
                .as_ref()
                .map_or("none".into(), |p| group_digits(&p.partitions.to_string())),
            (false, None) => pending(),
        };
        let cards = view! {
            <div class="cards">
                {card("card-version", "version", doc.version.to_string(),
                    doc.checkpoint_version.map_or("no checkpoint".into(), |c| format!("checkpoint at {c}")))}
                {card("card-commit", "last commit", doc.commit_timestamp.map_or("no time".into(), |t| format!("{} ago", duration(now - t))),
                    deltalens_present::value::timestamp(doc.commit_timestamp))}
                {card("card-files", "files", doc.num_files.map_or_else(pending, |n| group_digits(&n.to_string())), files_note)}
                {card("card-size", "size", match (doc.num_files, doc.size_bytes) { (Some(_), Some(b)) => bytes(b), _ => pending() }, String::new())}
                {card("card-rows", "rows", match (doc.num_files, doc.num_rows) { (Some(_), Some(r)) => group_digits(&r.to_string()), (Some(_), None) => "unknown".into(), _ => pending() }, String::new())}
                {card("card-deleted", "rows deleted (DVs)", hidden, hidden_note)}
                {card("card-partitions", "partitions", partitions, doc.partition_columns.join(", "))}
            </div>
        };
        let health_part = health_or_skeleton(health);
        view! {
            <section id="overview">
                <ul class="warnings">{warnings.into_iter().map(|w| view! { <li class="warning">{w}</li> }).collect_view()}</ul>
                {cards}
                {health_part}
                <h3>"Details"</h3>
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

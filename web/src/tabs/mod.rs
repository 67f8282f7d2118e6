//! One module per tab, plus the pieces they share: the row grid and a bar chart.

pub mod changes;
pub mod data;
pub mod diff;
pub mod files;
pub mod history;
pub mod overview;
pub mod query;
pub mod schema;

use leptos::prelude::*;

use crate::rows::Grid;

/// Rows as an HTML table; every value is text. `class_of` colours a row.
pub fn grid_view(g: Grid, id: &'static str, class_of: Option<usize>) -> impl IntoView {
    let head = g
        .columns
        .iter()
        .map(|c| view! { <th>{c.clone()}</th> })
        .collect_view();
    let body = g
        .rows
        .into_iter()
        .map(|r| {
            let class = class_of.and_then(|i| r.get(i).cloned()).unwrap_or_default();
            let cells = r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view();
            view! { <tr class=class>{cells}</tr> }
        })
        .collect_view();
    view! {
        <div class="grid"><table id=id><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>
    }
}

/// A chart with nothing to show: its title and why, instead of an empty box.
fn no_data(
    class: &'static str,
    id: &'static str,
    title: &'static str,
    why: &'static str,
) -> AnyView {
    view! {
        <figure class=class id=id>
            <figcaption>{title}</figcaption>
            <p>{why}</p>
        </figure>
    }
    .into_any()
}

/// A bar chart of `(label, value)` pairs as SVG.
pub fn bars(title: &'static str, points: Vec<(String, f64)>, id: &'static str) -> AnyView {
    // a chart with nothing to show says so instead of drawing an empty box
    if points.iter().all(|p| p.1 <= 0.0) {
        return no_data(
            "chart empty",
            id,
            title,
            "No data: these commits record no such metric.",
        );
    }
    let summary = chart_summary(title, &points);
    let first = points.first().map(|p| p.0.clone()).unwrap_or_default();
    let last = points.last().map(|p| p.0.clone()).unwrap_or_default();
    let max = points.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1.0);
    let n = points.len().max(1);
    let w = 600.0;
    let h = 120.0;
    let bw = (w / n as f64).max(1.0);
    let rects = points
        .into_iter()
        .enumerate()
        .map(|(i, (label, v))| {
            let bh = v / max * (h - 10.0);
            view! {
                <rect x=format!("{:.1}", i as f64 * bw) y=format!("{:.1}", h - bh)
                    width=format!("{:.1}", (bw - 1.0).max(0.5)) height=format!("{bh:.1}")>
                    <title>{format!("{label}: {v}")}</title>
                </rect>
            }
        })
        .collect_view();
    view! {
        <figure class="chart" id=id>
            <figcaption>{title}</figcaption>
            <div class="plot">
                <div class="axis-y" aria-hidden="true"><span>{axis_value(max)}</span><span>"0"</span></div>
                <svg viewBox=format!("0 0 {w} {h}") preserveAspectRatio="none" role="img" aria-label=summary>{rects}</svg>
            </div>
            <div class="axis-x" aria-hidden="true"><span>{first}</span><span>{last}</span></div>
        </figure>
    }
    .into_any()
}

/// An axis value, short: 1.2k, 3.4M, 5.6G.
pub fn axis_value(v: f64) -> String {
    let a = v.abs();
    let (d, unit) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / d;
    if unit.is_empty() && x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}{unit}")
    }
}

/// A horizontal bar chart of `(label, value, value as text)`: labels and values are text
/// (read by screen readers and on hover alike), the bars scale to the largest value.
pub fn hbars(title: &'static str, points: Vec<(String, f64, String)>, id: &'static str) -> AnyView {
    if points.iter().all(|p| p.1 <= 0.0) {
        return no_data("hbars empty", id, title, "No data.");
    }
    let max = points.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1.0);
    let rows = points
        .into_iter()
        .map(|(label, v, text)| {
            let pct = (v / max * 100.0).clamp(0.0, 100.0);
            let tip = format!("{label}: {text}");
            view! {
                <li title=tip>
                    <span class="label">{label}</span>
                    <span class="bar"><span style=format!("width: {pct:.1}%")></span></span>
                    <span class="value">{text}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <figure class="hbars" id=id>
            <figcaption>{title}</figcaption>
            <ul>{rows}</ul>
        </figure>
    }
    .into_any()
}

/// The text alternative of a bar chart: how many bars, the range, the largest.
pub fn chart_summary(title: &str, points: &[(String, f64)]) -> String {
    let Some(top) = points.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return format!("{title}: no data");
    };
    let first = points.first().map(|p| p.0.as_str()).unwrap_or_default();
    let last = points.last().map(|p| p.0.as_str()).unwrap_or_default();
    format!(
        "{title}: {} bars from {first} to {last}; the largest is {} at {}",
        points.len(),
        top.1,
        top.0
    )
}

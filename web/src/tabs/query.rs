//! Query: the SQL of `deltalens query` and the edge worker (projection, filter,
//! COUNT/SUM/MIN/MAX/AVG, GROUP BY, ORDER BY, LIMIT, `VERSION AS OF`, `TIMESTAMP AS OF`,
//! `table_changes`) on the open table, at the version on screen unless the SQL names
//! one: the result in a grid, a chart of a grouped result (bars or a line, the columns
//! chosen), downloads, the requests and bytes read while it runs, Cancel, and the query in
//! the page URL (`q=`: Back, Forward and shared links bring it back and run it).
//!
//! The query runs in the query module's Web Worker ([`crate::query`]), within the budgets
//! shown under the editor; one that is hit stops the query with an error naming it.

use std::time::Duration;

use futures::future::{Either, select};
use leptos::prelude::*;

use crate::query::protocol::{Answer, Budgets, MAX_WORKERS, Request};
use crate::rows::{self, Grid};
use crate::state::{Ctx, QueryRun, use_ctx};
use crate::tabs::{axis_value, chart_summary, grid_view};

/// The media type of a Parquet download.
const PARQUET_TYPE: &str = "application/vnd.apache.parquet";
/// How often the requests and bytes read are shown while a query runs.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// Past the wall-time budget the worker enforces at its requests, the page ends it.
const GRACE: Duration = Duration::from_secs(5);

/// The query the editor starts with for `url`.
pub fn starter(url: &str) -> String {
    format!("SELECT * FROM '{}' LIMIT 100", url.replace('\'', "''"))
}

#[component]
pub fn QueryTab() -> impl IntoView {
    let ctx = use_ctx();
    let url = ctx
        .session
        .get_untracked()
        .map(|s| s.url.clone())
        .unwrap_or_default();
    let sql = RwSignal::new(ctx.query.get_untracked().unwrap_or_else(|| starter(&url)));
    let budgets = RwSignal::new(Budgets::default());
    // a query from the URL (a link, Back or Forward), or one run before, is shown and run
    // when it is not the result shown (for the version on screen)
    Effect::new(move || {
        let (Some(q), Some(info)) = (ctx.query.get(), ctx.info.get()) else {
            return;
        };
        sql.set(q.clone());
        let shown = ctx
            .query_run
            .with_untracked(|r| r.as_ref().map(|r| (r.sql.clone(), r.shown)));
        if shown != Some((q.clone(), info.version)) {
            run_query(ctx, q, info.version, budgets.get_untracked());
        }
    });
    // Run: the query in the URL (a new history entry), which the effect above runs; the
    // same query again runs again (the table may have changed)
    let go = move || {
        let q = sql.get_untracked();
        if ctx.query.get_untracked().as_deref() == Some(q.as_str()) {
            if let Some(v) = ctx.shown_version() {
                run_query(ctx, q, v, budgets.get_untracked());
            }
        } else {
            ctx.query.set(Some(q));
            ctx.write_url();
        }
    };
    view! {
        <section id="query">
            <form class="query" on:submit=move |ev| { ev.prevent_default(); go(); }>
                <label for="sql">"SQL on this table (the subset of " <code>"deltalens query"</code> ")"</label>
                <textarea id="sql" rows="4" spellcheck="false" aria-describedby="query-help"
                    prop:value=move || sql.get()
                    on:input=move |ev| sql.set(event_target_value(&ev))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        // Ctrl+Enter (⌘+Enter) runs the query, as in most SQL editors
                        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                            ev.prevent_default();
                            go();
                        }
                    } />
                <p id="query-help" class="help">
                    "SELECT columns, *, COUNT(*) or COUNT/SUM/MIN/MAX/AVG(column) FROM '<this table>' "
                    "[VERSION AS OF n | TIMESTAMP AS OF '…'] [WHERE …] [GROUP BY …] [ORDER BY …] [LIMIT n], "
                    "or FROM table_changes('<this table>', from[, to]). Without VERSION AS OF it reads the version on screen. Ctrl+Enter runs it."
                </p>
                <button id="run-query" type="submit">"Run"</button>
                <BudgetFields budgets=budgets />
            </form>
            <QueryProgress />
            {move || ctx.query_run.with(|r| r.as_ref().and_then(|r| Some((r.sql.clone(), r.error.clone()?))))
                .map(|(sql, e)| view! { <pre class="error" id="query-error" role="alert" data-sql=sql>{e}</pre> })}
            {move || ctx.query_run.with(|r| r.as_ref().and_then(|r| Some((r.sql.clone(), r.answer.clone()?))))
                .map(|(sql, a)| view! { <Result sql=sql answer=a /> })}
        </section>
    }
}

/// Run `sql` at `version` (unless it names one) in the query worker, as the page's
/// operation (the status line, Cancel, the error box).
pub fn run_query(ctx: Ctx, sql: String, version: u64, budgets: Budgets) {
    let Some(sess) = ctx.session.get_untracked() else {
        return;
    };
    let request = Request {
        url: sess.url.clone(),
        storage: (&sess.options).into(),
        sql: sql.clone(),
        version: Some(version),
        budgets,
        workers: pool_width(),
    };
    ctx.query_run.set(Some(QueryRun {
        sql,
        shown: version,
        answer: None,
        progress: None,
        error: None,
    }));
    ctx.run(format!("running the query at version {version}"), async move {
        let progress = show_progress(ctx);
        let limit = Duration::from_millis(budgets.max_millis) + GRACE;
        let ran = async {
            match select(
                Box::pin(crate::query::run(&request)),
                Box::pin(gloo_timers::future::sleep(limit)),
            )
            .await
            {
                Either::Left((answer, _)) => answer,
                Either::Right(_) => {
                    let why = format!(
                        "the query ran past the tab's time budget of {} s (max_millis) and was stopped",
                        budgets.max_millis / 1000
                    );
                    crate::query::stop(&why);
                    Err(why)
                }
            }
        };
        let answer = match select(Box::pin(ran), Box::pin(progress)).await {
            Either::Left((answer, _)) => answer,
            Either::Right(((), _)) => Err("the progress loop ended".into()),
        };
        // the tab shows the answer, or why there is none, beside the SQL it is of
        ctx.query_run.update(|r| {
            if let Some(r) = r {
                match answer {
                    Ok(a) => r.answer = Some(a),
                    Err(e) => r.error = Some(e),
                }
            }
        });
        Ok(())
    });
}

/// Workers a query may be read by: one per core of this machine
/// (`navigator.hardwareConcurrency`), at most [`MAX_WORKERS`].
fn pool_width() -> u32 {
    let cores = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency());
    (cores as u32).clamp(1, MAX_WORKERS)
}

/// Show what the running query has read, every [`PROGRESS_EVERY`], until dropped.
async fn show_progress(ctx: Ctx) {
    loop {
        gloo_timers::future::sleep(PROGRESS_EVERY).await;
        let p = crate::query::progress();
        ctx.query_run.update(|r| {
            if let Some(r) = r {
                r.progress = p;
            }
        });
    }
}

/// The budgets a query runs within, named as its errors name them; each can be lowered
/// (never raised past the tab's own).
#[component]
fn BudgetFields(budgets: RwSignal<Budgets>) -> impl IntoView {
    let most = Budgets::default();
    type Field = (
        &'static str,
        &'static str,
        fn(&mut Budgets) -> &mut u64,
        u64,
    );
    let fields: [Field; 6] = [
        (
            "max_rows",
            "rows in the result",
            |b| &mut b.max_rows,
            most.max_rows,
        ),
        (
            "max_rows_buffered",
            "rows held to group, aggregate or sort",
            |b| &mut b.max_rows_buffered,
            most.max_rows_buffered,
        ),
        (
            "max_decoded_bytes",
            "bytes of column data decoded",
            |b| &mut b.max_decoded_bytes,
            most.max_decoded_bytes,
        ),
        (
            "max_bytes",
            "bytes read from storage",
            |b| &mut b.max_bytes,
            most.max_bytes,
        ),
        (
            "max_requests",
            "storage requests",
            |b| &mut b.max_requests,
            most.max_requests,
        ),
        (
            "max_millis",
            "wall time in milliseconds",
            |b| &mut b.max_millis,
            most.max_millis,
        ),
    ];
    let inputs = fields
        .into_iter()
        .map(|(name, what, field, top)| {
            let value = move || {
                let mut b = budgets.get();
                field(&mut b).to_string()
            };
            let set = move |ev: leptos::ev::Event| {
                let n = event_target_value(&ev).trim().parse::<u64>().unwrap_or(top).clamp(1, top);
                budgets.update(|b| *field(b) = n);
            };
            view! {
                <label title=what>{name}" "
                    <input class="num" type="number" min="1" max=top.to_string() id=format!("budget-{name}")
                        prop:value=value on:change=set />
                </label>
            }
        })
        .collect_view();
    view! {
        <details class="budgets"><summary>"budgets"</summary>
            <p class="help">"A query stops with an error naming the budget it hits. Lower one to keep a query small."</p>
            <p id="query-budgets">{inputs}</p>
        </details>
    }
}

/// What the running query has read.
#[component]
fn QueryProgress() -> impl IntoView {
    let ctx = use_ctx();
    move || {
        let p = ctx.query_run.with(|r| {
            r.as_ref()
                .filter(|r| r.answer.is_none() && r.error.is_none())
                .map(|r| r.progress.unwrap_or_default())
        })?;
        ctx.busy.get()?;
        Some(view! {
            <p class="summary" id="query-progress" role="status">
                {format!("running: {} requests, {} read so far", p.requests, deltalens_present::value::bytes(p.bytes as i64))}
            </p>
        })
    }
}

/// A result: its summary, downloads, a chart when grouped, the grid.
#[component]
fn Result(sql: String, answer: Answer) -> impl IntoView {
    let ctx = use_ctx();
    let shown = answer.rows.len() as u64;
    let more = if answer.total_rows > shown {
        format!(" (the first {shown} shown; download for all)")
    } else {
        String::new()
    };
    let pool = if answer.splits > 1 {
        let busy: Vec<String> = answer.busy_ms.iter().map(|ms| format!("{ms} ms")).collect();
        format!(
            " · read in {} splits by {} workers (busy {})",
            answer.splits,
            answer.busy_ms.len(),
            busy.join(", ")
        )
    } else {
        String::new()
    };
    let summary = format!(
        "{} rows{more} · version {} · {} requests, {} read{pool}",
        answer.total_rows,
        answer.version,
        answer.requests,
        deltalens_present::value::bytes(answer.bytes as i64)
    );
    let version = answer.version;
    let download = move |format: &'static str| {
        ctx.run(format!("writing the result as {format}"), async move {
            let (kind, data) = if format == "parquet" {
                let ipc = crate::query::download("arrow").await?;
                ("parquet", crate::extras::parquet_from_ipc(&ipc).await?)
            } else {
                (format, crate::query::download(format).await?)
            };
            let mime = match kind {
                "csv" => "text/csv",
                "parquet" => PARQUET_TYPE,
                "jsonl" => "application/x-ndjson",
                _ => "application/vnd.apache.arrow.stream",
            };
            let ext = if kind == "arrow" { "arrows" } else { kind };
            rows::download(&format!("deltalens-query-v{version}.{ext}"), mime, &data)
        });
    };
    let chart = answer
        .grouped
        .then(|| view! { <Chart answer=answer.clone() /> });
    let grid = Grid {
        columns: answer.columns.iter().map(|c| c.name.clone()).collect(),
        rows: answer.rows,
    };
    view! {
        <p class="summary" id="query-summary" data-sql=sql>{summary}</p>
        <p class="downloads">"download: "
            <button type="button" on:click=move |_| download("csv")>"CSV"</button>
            <button type="button" on:click=move |_| download("parquet")>"Parquet"</button>
            <button type="button" on:click=move |_| download("arrow")>"Arrow"</button>
            <button type="button" on:click=move |_| download("jsonl")>"JSON lines"</button>
        </p>
        {chart}
        {grid_view(grid, "query-grid", None)}
    }
}

/// How a grouped result is drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bars,
    Line,
}

/// A chart of a grouped result: a column for the x axis (the first, by default), a
/// numeric one for the y axis (the last numeric one), bars or a line.
#[component]
fn Chart(answer: Answer) -> impl IntoView {
    let numeric: Vec<usize> = (0..answer.columns.len())
        .filter(|i| answer.columns[*i].numbers.is_some())
        .collect();
    let Some(&last) = numeric.last() else {
        return view! { <p class="help" id="query-chart">"No numeric column to chart."</p> }
            .into_any();
    };
    let x = RwSignal::new(0usize);
    let y = RwSignal::new(last);
    let kind = RwSignal::new(Kind::Bars);
    let columns = answer.columns.clone();
    let options = |chosen: RwSignal<usize>,
                   which: Vec<usize>,
                   columns: &[crate::query::protocol::Column]| {
        which
            .into_iter()
            .map(|i| {
                let name = columns[i].name.clone();
                view! { <option value=i.to_string() selected=move || chosen.get() == i>{name}</option> }
            })
            .collect_view()
    };
    let all: Vec<usize> = (0..columns.len()).collect();
    let x_options = options(x, all, &columns);
    let y_options = options(y, numeric, &columns);
    let pick = |s: RwSignal<usize>| {
        move |ev: leptos::ev::Event| s.set(event_target_value(&ev).parse().unwrap_or(0))
    };
    let drawn = move || {
        let (xi, yi) = (x.get(), y.get());
        let labels = answer
            .rows
            .iter()
            .map(|r| r.get(xi).cloned().unwrap_or_default());
        let values = answer
            .columns
            .get(yi)
            .and_then(|c| c.numbers.clone())
            .unwrap_or_default();
        let points: Vec<(String, f64)> = labels
            .zip(values)
            .filter_map(|(l, v)| v.map(|v| (l, v)))
            .collect();
        let title = format!(
            "{} by {}",
            answer.columns.get(yi).map_or("", |c| c.name.as_str()),
            answer.columns.get(xi).map_or("", |c| c.name.as_str())
        );
        draw(&title, points, kind.get())
    };
    view! {
        <div class="chart-controls">
            <label>"x "<select id="chart-x" on:change=pick(x)>{x_options}</select></label>
            <label>"y "<select id="chart-y" on:change=pick(y)>{y_options}</select></label>
            <label><input type="radio" name="chart-kind" id="chart-bars" prop:checked=move || kind.get() == Kind::Bars
                on:change=move |_| kind.set(Kind::Bars) />"bars"</label>
            <label><input type="radio" name="chart-kind" id="chart-line" prop:checked=move || kind.get() == Kind::Line
                on:change=move |_| kind.set(Kind::Line) />"line"</label>
        </div>
        {drawn}
    }
    .into_any()
}

/// `points` as SVG bars or a line, with the y axis from its lowest value (or 0) to its
/// highest and the first and last labels under the x axis.
fn draw(title: &str, points: Vec<(String, f64)>, kind: Kind) -> AnyView {
    if points.is_empty() {
        return view! { <figure class="chart empty" id="query-chart"><figcaption>{title.to_string()}</figcaption><p>"No values to draw."</p></figure> }.into_any();
    }
    let summary = chart_summary(title, &points);
    let max = points
        .iter()
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(0.0);
    let min = points
        .iter()
        .map(|p| p.1)
        .fold(f64::INFINITY, f64::min)
        .min(0.0);
    let span = if max > min { max - min } else { 1.0 };
    let (w, h) = (600.0, 160.0);
    let n = points.len();
    let step = w / n as f64;
    let y_of = |v: f64| h - (v - min) / span * (h - 10.0);
    let first = points.first().map(|p| p.0.clone()).unwrap_or_default();
    let last = points.last().map(|p| p.0.clone()).unwrap_or_default();
    let marks = match kind {
        Kind::Bars => points
            .iter()
            .enumerate()
            .map(|(i, (label, v))| {
                let (top, bottom) = (y_of(v.max(0.0)), y_of(v.min(0.0)));
                view! {
                    <rect x=format!("{:.1}", i as f64 * step) y=format!("{top:.1}")
                        width=format!("{:.1}", (step - 1.0).max(0.5)) height=format!("{:.1}", (bottom - top).max(0.5))>
                        <title>{format!("{label}: {v}")}</title>
                    </rect>
                }
            })
            .collect_view()
            .into_any(),
        Kind::Line => {
            let path = points
                .iter()
                .enumerate()
                .map(|(i, (_, v))| format!("{:.1},{:.1}", (i as f64 + 0.5) * step, y_of(*v)))
                .collect::<Vec<_>>()
                .join(" ");
            let dots = points
                .iter()
                .enumerate()
                .map(|(i, (label, v))| {
                    view! {
                        <circle cx=format!("{:.1}", (i as f64 + 0.5) * step) cy=format!("{:.1}", y_of(*v)) r="2">
                            <title>{format!("{label}: {v}")}</title>
                        </circle>
                    }
                })
                .collect_view();
            view! { <polyline points=path fill="none" stroke="currentColor" /> {dots} }.into_any()
        }
    };
    view! {
        <figure class="chart" id="query-chart">
            <figcaption>{title.to_string()}</figcaption>
            <div class="plot">
                <div class="axis-y" aria-hidden="true"><span>{axis_value(max)}</span><span>{axis_value(min)}</span></div>
                <svg viewBox=format!("0 0 {w} {h}") preserveAspectRatio="none" role="img" aria-label=summary>{marks}</svg>
            </div>
            <div class="axis-x" aria-hidden="true"><span>{first}</span><span>{last}</span></div>
        </figure>
    }
    .into_any()
}

//! Data: rows at the version being looked at, with a column picker (Flink's
//! `columnNames`), a SQL filter, a limit, more rows loaded while scrolling, and downloads
//! of the current result as CSV, Parquet or Arrow.

use std::collections::BTreeSet;
use std::rc::Rc;

use deltalens_core::predicate::Predicate;
use deltalens_core::scan::{ScanOptions, ScanProgress};
use deltalens_core::{Snapshot, VersionInfo};
use deltalens_present::loaded::Loaded;
use deltalens_present::{Format, schema_rows_of};
use leptos::prelude::*;

use crate::errors::explain;
use crate::grid::WindowGrid;
use crate::rows;
use crate::session::Session;
use crate::state::{Ctx, use_ctx, yield_to_browser};

/// The media type of a Parquet download.
const PARQUET_TYPE: &str = "application/vnd.apache.parquet";

/// Rows the first page loads unless the limit field says otherwise.
const STEP: usize = 100;
/// Rows each later page loads (while scrolling), at least.
const PAGE: usize = 1000;
/// Rows per decoded batch, and per resumed scan between which the tab yields to the
/// browser: a page of rows arrives in short tasks (no long task while scrolling).
const BATCH: usize = 256;

/// Where the loading of one result stands: the files gathered so far (a preview of a
/// big table gathers only the first ones), how far the scan got, and whether the end is
/// reached.
#[derive(Default)]
struct Pager {
    /// What the rows are of: version, filter, columns.
    key: Option<(u64, String, Option<Vec<String>>)>,
    snapshot: Option<Rc<Snapshot>>,
    /// The row count the snapshot's files were gathered for (`None`: every file).
    gathered_for: Option<usize>,
    progress: ScanProgress,
    done: bool,
    requests: u64,
    bytes: u64,
}

/// Marks the rows as loading while it lives.
struct Loading(RwSignal<bool>);

impl Drop for Loading {
    fn drop(&mut self) {
        let _ = self.0.try_set(false);
    }
}

#[component]
pub fn DataTab() -> impl IntoView {
    let ctx = use_ctx();
    let filter = RwSignal::new(String::new());
    let limit = RwSignal::new(STEP);
    let picked = RwSignal::new(None::<BTreeSet<String>>);
    let loaded = RwSignal::new(None::<Loaded>);
    let pager = StoredValue::new_local(Pager::default());
    let status = RwSignal::new((0u64, 0u64, false));
    let loading = RwSignal::new(false);
    // the skeleton until the first rows: a memo, so a page appended does not build the
    // grid again (the closure that chooses between them would run for each page)
    let waiting = Memo::new(move |_| loaded.with(|l| l.is_none()) && loading.get());

    // load `n` more rows of the current result (a new result when `fresh`)
    let load = move |n: usize, fresh: bool| {
        let (Some(sess), Some(info)) = (ctx.session.get_untracked(), ctx.info.get_untracked())
        else {
            return;
        };
        if loading.get_untracked() && !fresh {
            return;
        }
        let f = filter.get_untracked();
        let cols = picked.get_untracked().map(|c| {
            info.schema
                .fields()
                .iter()
                .map(|x| x.name.clone())
                .filter(|x| c.contains(x))
                .collect::<Vec<_>>()
        });
        let key = (info.version, f.clone(), cols.clone());
        if fresh || pager.with_value(|p| p.key.as_ref() != Some(&key)) {
            pager.set_value(Pager {
                key: Some(key),
                ..Default::default()
            });
            loaded.set(None);
        } else if pager.with_value(|p| p.done) {
            return;
        }
        loading.set(true);
        let have = loaded.with_untracked(|l| l.as_ref().map_or(0, |l| l.rows()));
        ctx.run(
            format!(
                "reading rows {}–{} of version {}",
                have + 1,
                have + n,
                info.version
            ),
            async move {
                // not loading any more however this ends: done, failed, cancelled or
                // replaced (the future dropped)
                let _loading = Loading(loading);
                let result = load_page(&sess, &info, &f, cols, n, have, pager, loaded).await;
                pager.with_value(|p| status.set((p.requests, p.bytes, p.done)));
                result
            },
        );
    };
    let run = move || load(limit.get_untracked().max(1), true);
    let more = Callback::new(move |_| {
        let n = limit.get_untracked().max(PAGE);
        load(n, false);
    });
    // run when the version changes (time travel changes the preview), beside the
    // counting of its files
    Effect::new(move || {
        if let Some(s) = ctx.info.get()
            && pager.with_value(|p| p.key.as_ref().is_none_or(|k| k.0 != s.version))
        {
            run();
        }
    });
    let download = move |parquet: bool, kind: Format| download_rows(ctx, loaded, parquet, kind);
    let types = column_types(ctx, loaded);
    view! {
        <section id="data">
            <form class="inline" on:submit=move |ev| { ev.prevent_default(); limit.set(limit.get_untracked().max(1)); run(); }>
                <input id="filter" type="text" aria-label="filter (SQL WHERE)" placeholder="filter, e.g. price > 10 AND brand = 'nars'"
                    prop:value=move || filter.get() on:input=move |ev| filter.set(event_target_value(&ev)) />
                <label>"first rows "<input id="limit" class="num" type="number" min="1"
                    prop:value=move || limit.get().to_string()
                    on:change=move |ev| limit.set(event_target_value(&ev).parse().unwrap_or(STEP)) /></label>
                <button id="run" type="submit">"Run"</button>
                <span class="downloads">"download: "
                    <button type="button" on:click=move |_| download(false, Format::Csv)>"CSV"</button>
                    <button type="button" on:click=move |_| download(true, Format::Arrow)>"Parquet"</button>
                    <button type="button" on:click=move |_| download(false, Format::Arrow)>"Arrow"</button>
                </span>
            </form>
            <ColumnPicker picked=picked />
            <p class="summary" id="data-summary">{move || {
                summary(loaded.with(|l| l.as_ref().map_or(0, |l| l.rows())), status.get())
            }}</p>
            {move || if waiting.get() {
                view! { <div class="skeleton" aria-hidden="true"><div></div><div></div><div></div><div></div></div> }.into_any()
            } else {
                view! { <WindowGrid loaded=loaded types=types near_end=more id="data-grid" /> }.into_any()
            }}
        </section>
    }
}

/// The Data tab's summary line: rows loaded, and the requests and bytes of the result.
fn summary(rows: usize, (requests, bytes, done): (u64, u64, bool)) -> String {
    let more = if done || rows == 0 {
        ""
    } else {
        " · scroll for more"
    };
    format!("{rows} rows · {requests} requests, {bytes} bytes for this result{more}")
}

/// Downloads the loaded rows as `kind`: CSV and Arrow written here; Parquet (`parquet`,
/// `kind` Arrow) by the codec module (fetched on the first Parquet download) from the rows
/// as an Arrow stream.
fn download_rows(ctx: Ctx, loaded: RwSignal<Option<Loaded>>, parquet: bool, kind: Format) {
    let v = ctx.shown_version().unwrap_or(0);
    let out = loaded.with_untracked(|l| match l {
        Some(l) => rows::file(kind, l.schema(), l.batches()).map(Some),
        None => Ok(None),
    });
    let data = match out {
        Ok(Some(d)) => d,
        Ok(None) => return,
        Err(e) => return ctx.error.set(Some(e)),
    };
    if !parquet {
        let name = format!("deltalens-v{v}.{}", kind.extension());
        if let Err(e) = rows::download(&name, kind.content_type(), &data) {
            ctx.error.set(Some(e));
        }
        return;
    }
    ctx.run("writing Parquet", async move {
        let file = crate::extras::parquet_from_ipc(&data).await?;
        rows::download(&format!("deltalens-v{v}.parquet"), PARQUET_TYPE, &file)
    });
}

/// The Delta type of each loaded column, once per result.
fn column_types(ctx: Ctx, loaded: RwSignal<Option<Loaded>>) -> Signal<Vec<String>> {
    Signal::from(Memo::new(move |_| {
        let Some(info) = ctx.info.get() else {
            return Vec::new();
        };
        let rows = schema_rows_of(&info.schema, info.partition_columns());
        loaded.with(|l| {
            l.as_ref().map_or(Vec::new(), |l| {
                l.schema()
                    .fields()
                    .iter()
                    .map(|f| {
                        rows.iter()
                            .find(|r| r.depth == 0 && r.name == *f.name())
                            .map_or_else(String::new, |r| r.delta_type.clone())
                    })
                    .collect()
            })
        })
    }))
}

/// The table's columns (Flink's `columnNames`): a box each, all ticked until one is
/// unticked; `picked` holds the ticked ones (`None`: all).
#[component]
fn ColumnPicker(picked: RwSignal<Option<BTreeSet<String>>>) -> impl IntoView {
    let ctx = use_ctx();
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
    let toggle = move |column: &String, on: bool| {
        let all: BTreeSet<String> = columns().into_iter().collect();
        picked.update(|p| {
            let set = p.get_or_insert_with(|| all.clone());
            if on {
                set.insert(column.clone());
            } else {
                set.remove(column);
            }
        });
    };
    view! {
        <details class="columns"><summary>"columns"</summary>
            {move || columns().into_iter().map(|c| {
                let shown = c.clone();
                let ticked = c.clone();
                view! { <label><input type="checkbox" class="col-pick"
                    prop:checked=move || picked.get().is_none_or(|p| p.contains(&ticked))
                    on:change=move |ev| toggle(&c, event_target_checked(&ev)) />{shown}</label> }
            }).collect_view()}
        </details>
    }
}

/// The files a page reads from: with no filter, those covering `rows` rows by their
/// statistics (a preview of a million-file table gathers a handful); with one, every
/// file the filter may match.
async fn gather(
    info: &VersionInfo,
    filter: &Option<Predicate>,
    columns: &Option<Vec<String>>,
    rows: Option<usize>,
) -> Result<Rc<Snapshot>, String> {
    let opts = ScanOptions {
        columns: columns.clone(),
        limit: rows,
        filter: filter.clone(),
        ..Default::default()
    };
    let s = info
        .snapshot_for_scan(&opts)
        .await
        .map_err(|e| explain(&e))?;
    Ok(Rc::new(s))
}

/// Load `n` more rows into `loaded` (which holds `have`), resuming where the last page
/// stopped, and gathering more of the version's files once those gathered are read.
#[allow(clippy::too_many_arguments)]
async fn load_page(
    sess: &Session,
    info: &VersionInfo,
    filter: &str,
    columns: Option<Vec<String>>,
    n: usize,
    have: usize,
    pager: StoredValue<Pager, LocalStorage>,
    loaded: RwSignal<Option<Loaded>>,
) -> Result<(), String> {
    let predicate = if filter.trim().is_empty() {
        None
    } else {
        Some(Predicate::parse(filter).map_err(|e| explain(&e))?)
    };
    let before = sess.stats();
    crate::extras::take_wanted();
    let mut got = 0usize;
    let mut stalls = 0;
    let result = async {
        loop {
            let snapshot = match pager.with_value(|p| p.snapshot.clone()) {
                Some(s) => s,
                None => {
                    let want = predicate.is_none().then_some(have + n);
                    let s = gather(info, &predicate, &columns, want).await?;
                    pager.update_value(|p| {
                        p.snapshot = Some(s.clone());
                        p.gathered_for = want;
                    });
                    s
                }
            };
            let mut progress = pager.with_value(|p| p.progress.clone());
            let got_before = got;
            let opts = ScanOptions {
                columns: columns.clone(),
                limit: Some((n - got).min(BATCH) + progress.rows_to_skip()),
                batch_size: BATCH,
                filter: predicate.clone(),
                ..Default::default()
            };
            let scan = snapshot.scan(opts).map_err(|e| explain(&e))?;
            if loaded.with_untracked(|l| l.is_none()) {
                loaded.set(Some(Loaded::new(scan.schema())));
            }
            let mut failed = None;
            let out = scan
                .execute_resuming(&mut progress, &mut |b| {
                    got += b.num_rows();
                    loaded.update(|l| {
                        if let Some(l) = l
                            && let Err(e) = l.append(b)
                        {
                            failed = Some(e.to_string());
                        }
                    });
                    Ok(failed.is_none())
                })
                .await;
            // what was delivered stays delivered: a run again resumes after it
            pager.update_value(|p| p.progress = progress);
            if let Some(e) = failed {
                return Err(e);
            }
            let done = match out {
                Ok((_, done)) => done,
                // a brotli or zstd page: fetch the codec module, then resume
                Err(_) if crate::extras::take_wanted() => {
                    crate::extras::load().await?;
                    continue;
                }
                Err(e) => return Err(explain(&e)),
            };
            if got >= n {
                return Ok(());
            }
            if !done {
                // each resumed scan returns rows or finishes; one that does neither twice
                // would loop: stop with a message instead
                stalls = if got == got_before { stalls + 1 } else { 0 };
                if stalls > 1 {
                    return Err("reading rows made no progress; reload the table".into());
                }
                yield_to_browser().await;
                continue;
            }
            // every gathered file is read: gather more, unless every file was
            let Some(gathered) = pager.with_value(|p| p.gathered_for) else {
                pager.update_value(|p| p.done = true);
                return Ok(());
            };
            let more = gathered.saturating_mul(4).max(have + n);
            let s = gather(info, &predicate, &columns, Some(more)).await?;
            if s.files.len() <= snapshot.files.len() {
                pager.update_value(|p| p.done = true);
                return Ok(());
            }
            pager.update_value(|p| {
                p.snapshot = Some(s);
                p.gathered_for = Some(more);
            });
        }
    }
    .await;
    let after = sess.stats();
    pager.update_value(|p| {
        p.requests += after.requests - before.requests;
        p.bytes += after.bytes - before.bytes;
    });
    result
}

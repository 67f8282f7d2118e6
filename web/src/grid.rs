//! The windowed grid of the Data tab: only the rows in view (and a few either side) are
//! in the DOM, formatted from the loaded batches when they scroll into view, so 100,000
//! loaded rows cost what 60 do. Headers show each column's type, nulls and range over
//! the loaded rows and sort them; a selected cell or its row copies as JSON; the arrow
//! keys move the selection.

use deltalens_present::loaded::Loaded;
use leptos::prelude::*;

/// Height of one row in CSS pixels (`.wbody .row` in style.css).
pub const ROW_PX: f64 = 26.0;
/// Rows rendered above and below the visible ones.
const OVERSCAN: usize = 6;
/// Rows a viewport is assumed to hold before it is measured.
const FIRST_VIEW: usize = 30;

/// Which rows to render: the display positions `[first, end)`.
pub fn window(scroll_top: f64, view_px: f64, rows: usize) -> (usize, usize) {
    let top = (scroll_top.max(0.0) / ROW_PX) as usize;
    let shown = if view_px > 0.0 {
        (view_px / ROW_PX).ceil() as usize
    } else {
        FIRST_VIEW
    };
    let first = top.saturating_sub(OVERSCAN).min(rows);
    let end = top.saturating_add(shown).saturating_add(OVERSCAN).min(rows);
    (first, end.max(first))
}

/// What the header of column `i` says under its type: nulls and the range of the loaded
/// rows.
fn column_note(l: &Loaded, i: usize) -> String {
    let Some(s) = l.stats().get(i) else {
        return String::new();
    };
    let nulls = format!("{} null{}", s.nulls, if s.nulls == 1 { "" } else { "s" });
    let range = match (&s.min, &s.max) {
        (Some(lo), Some(hi)) => {
            let lo = l.value_text(i, lo).unwrap_or_default();
            let hi = l.value_text(i, hi).unwrap_or_default();
            format!("{} … {}", clip(&lo), clip(&hi))
        }
        _ => String::new(),
    };
    if range.is_empty() {
        nulls
    } else {
        format!("{nulls} · {range}")
    }
}

/// A column's width in CSS pixels, from its type and name: the table's layout is fixed,
/// so columns keep their widths while rows scroll by and no row is measured.
pub fn column_px(name: &str, type_name: &str) -> u32 {
    let chars: u32 = match type_name {
        "boolean" => 8,
        "byte" | "short" | "integer" | "date" => 11,
        "long" | "float" | "double" => 14,
        "timestamp" | "timestamp_ntz" => 22,
        t if t.starts_with("decimal") => 14,
        t if t.starts_with("struct") || t.starts_with("array") || t.starts_with("map") => 32,
        _ => 24,
    };
    let name_chars = name.chars().count().min(40) as u32 + 3;
    chars.max(name_chars).min(40) * 8 + 14
}

/// At most 24 characters of a value for a header.
fn clip(s: &str) -> String {
    if s.chars().count() <= 24 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(23).collect::<String>())
    }
}

/// Mark the drawn cell at display position `pos`, column `col` of the grid in `el` as
/// selected or not (nothing when it is not drawn).
fn mark_cell(el: NodeRef<leptos::html::Div>, (pos, col): (usize, usize), on: bool) {
    let Some(el) = el.get_untracked() else { return };
    let css = format!(".row[aria-rowindex=\"{}\"] > [data-c=\"{col}\"]", pos + 2);
    let Ok(Some(td)) = el.query_selector(&css) else {
        return;
    };
    if on {
        let _ = td.set_attribute("class", "selected");
        let _ = td.set_attribute("aria-selected", "true");
    } else {
        let _ = td.remove_attribute("class");
        let _ = td.remove_attribute("aria-selected");
    }
}

/// Copy `text` to the clipboard; what to tell the user.
fn copy(text: String, what: &str) -> String {
    let Some(w) = web_sys::window() else {
        return "no window to copy from".into();
    };
    let _ = w.navigator().clipboard().write_text(&text);
    format!("copied the {what} as JSON")
}

/// The grid over `loaded`; `types` names each column's Delta type; `near_end` is called
/// when the view comes within a few screens of the last loaded row.
#[component]
pub fn WindowGrid(
    loaded: RwSignal<Option<Loaded>>,
    types: Signal<Vec<String>>,
    near_end: Callback<()>,
    id: &'static str,
) -> impl IntoView {
    let scroll_top = RwSignal::new(0.0f64);
    // the offset a scroll event saw, until the rows are drawn for it
    let next_top = StoredValue::new(None::<f64>);
    let view_px = RwSignal::new(0.0f64);
    let sort = RwSignal::new(None::<(usize, bool)>);
    let selected = RwSignal::new(None::<(usize, usize)>);
    let said = RwSignal::new(String::new());
    let el = NodeRef::<leptos::html::Div>::new();
    let rows = Memo::new(move |_| loaded.with(|l| l.as_ref().map_or(0, |l| l.rows())));
    // the order of the loaded rows: as loaded, or by the sorted column (again as pages
    // arrive)
    let order = Memo::new(move |_| {
        let _ = rows.get();
        let (col, desc) = sort.get()?;
        loaded.with_untracked(|l| l.as_ref().and_then(|l| l.order_by(col, desc).ok()))
    });
    let at = move |pos: usize| {
        order.with(|o| {
            o.as_ref()
                .map_or(pos, |o| o.get(pos).copied().unwrap_or(pos))
        })
    };
    let on_scroll = move |_| {
        if let Some(e) = el.get_untracked() {
            // the view's height is not read here (it is kept from the first result and
            // each resize): reading it while rows are being appended forces a layout
            // inside this handler, on every scroll step
            let (top, view) = (e.scroll_top() as f64, view_px.get_untracked());
            // the rows are drawn in a task of their own, not inside the frame that
            // scrolled: a big jump shows the margin for a frame, and no frame waits for
            // the new rows' script and their layout at once (a long task)
            let pending = next_top.get_value().is_some();
            next_top.set_value(Some(top));
            if !pending {
                set_timeout(
                    move || {
                        if let Some(t) = next_top.get_value() {
                            next_top.set_value(None);
                            scroll_top.set(t);
                        }
                    },
                    std::time::Duration::ZERO,
                );
            }
            if top + 3.0 * view >= rows.get_untracked() as f64 * ROW_PX {
                near_end.run(());
            }
        }
    };
    // a new result starts at the top, unsorted
    Effect::new(move |prev: Option<usize>| {
        let n = rows.get();
        if n < prev.unwrap_or(0) {
            sort.set(None);
            selected.set(None);
            if let Some(e) = el.get_untracked() {
                e.set_scroll_top(0);
            }
            scroll_top.set(0.0);
        }
        // the view's height once per result (reading it forces a layout: not on every
        // page appended; scrolling reads it too)
        if prev.unwrap_or(0) == 0
            && n > 0
            && let Some(e) = el.get_untracked()
        {
            view_px.set(e.client_height() as f64);
        }
        n
    });
    // the view's height (65vh) changes with the window's
    let on_resize = window_event_listener(leptos::ev::resize, move |_| {
        if let Some(e) = el.get_untracked() {
            view_px.set(e.client_height() as f64);
        }
    });
    on_cleanup(move || on_resize.remove());
    // the rows in view: a page appended below them changes nothing drawn but the body's
    // height
    let win = Memo::new(move |_| window(scroll_top.get(), view_px.get(), rows.get()));
    // the headers, once per change of the rows (the table's width reads them too)
    // the headers: built again only when the columns change; the notes (nulls and range
    // of the loaded rows) change as pages arrive, as text in headers that stay
    let head = Memo::new(move |_| {
        loaded.with(|l| {
            let Some(l) = l else { return Vec::new() };
            let types = types.get();
            l.schema()
                .fields()
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let ty = types.get(i).cloned().unwrap_or_default();
                    let px = column_px(f.name(), &ty);
                    (i, f.name().clone(), ty, px)
                })
                .collect::<Vec<_>>()
        })
    });
    let notes = Memo::new(move |_| {
        loaded.with(|l| {
            let Some(l) = l else { return Vec::new() };
            (0..l.schema().fields().len())
                .map(|i| column_note(l, i))
                .collect::<Vec<_>>()
        })
    });
    let note = move |i: usize| notes.with(|n| n.get(i).cloned().unwrap_or_default());
    // the rows in view, each keyed by the result, its position and the loaded row shown
    // there: a scroll step adds and removes a row or two and keeps the rest of the DOM;
    // a new result, a new order or a page appended out of view redraws nothing else
    let result = Memo::new(move |_| loaded.with(|l| l.as_ref().map_or(0, Loaded::id)));
    let keys = Memo::new(move |_| {
        let id = result.get();
        let (first, end) = win.get();
        (first..end)
            .map(|pos| (id, pos, at(pos)))
            .collect::<Vec<_>>()
    });
    let row = move |(_, pos, shown): (u64, usize, usize)| {
        let cells = loaded
            .with_untracked(|l| l.as_ref().map(|l| l.text(&[shown], "∅")))
            .unwrap_or(Ok(Vec::new()));
        // a cell is drawn selected if it is; later changes of the selection are made by
        // the effect below on the two cells concerned (no effect per cell: a scroll step
        // draws a screen of new cells)
        let picked = selected.get_untracked().filter(|s| s.0 == pos).map(|s| s.1);
        let tds = match cells {
            Err(e) => view! { <div role="gridcell" class="error">{e.to_string()}</div> }.into_any(),
            Ok(mut cells) => cells
                .pop()
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(c, text)| {
                    let on = picked == Some(c);
                    view! {
                        <div role="gridcell" data-c=c.to_string() class:selected=on
                            aria-selected=on.then_some("true")>{text}</div>
                    }
                })
                .collect_view()
                .into_any(),
        };
        let top = format!("top: {}px", pos as f64 * ROW_PX);
        view! { <div role="row" class="row" aria-rowindex=(pos + 2).to_string() style=top>{tds}</div> }
    };
    // the selection moves: unmark the cell it left and mark the one it reached, if they
    // are drawn
    Effect::new(move |prev: Option<Option<(usize, usize)>>| {
        let now = selected.get();
        if let Some(Some(was)) = prev {
            mark_cell(el, was, false);
        }
        if let Some(now) = now {
            mark_cell(el, now, true);
        }
        now
    });
    // one listener for every cell: the row says its position, the cell its column
    let on_click = move |ev: leptos::ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        let Some(td) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("[data-c]").ok().flatten())
        else {
            return;
        };
        let col = td
            .get_attribute("data-c")
            .and_then(|c| c.parse::<usize>().ok());
        let pos = td
            .parent_element()
            .and_then(|tr| tr.get_attribute("aria-rowindex"))
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| i.checked_sub(2));
        if let (Some(pos), Some(col)) = (pos, col) {
            selected.set(Some((pos, col)));
        }
    };
    // the body is as tall as every loaded row; each drawn row is placed at its offset
    let body = move || format!("height: {}px", rows.get() as f64 * ROW_PX);
    let copy_cell = move |_: ()| {
        let Some((pos, c)) = selected.get_untracked() else {
            return;
        };
        let out = loaded.with_untracked(|l| {
            let l = l.as_ref()?;
            let row = l.row_json(at(pos)).ok()?;
            let name = l.schema().fields().get(c)?.name().clone();
            Some(
                row.get(&name)
                    .cloned()
                    .unwrap_or(serde_json::Value::Null)
                    .to_string(),
            )
        });
        said.set(out.map_or("nothing to copy".into(), |t| copy(t, "cell")));
    };
    let copy_row = move |_: ()| {
        let Some((pos, _)) = selected.get_untracked() else {
            return;
        };
        let out =
            loaded.with_untracked(|l| l.as_ref()?.row_json(at(pos)).ok().map(|r| r.to_string()));
        said.set(out.map_or("nothing to copy".into(), |t| copy(t, "row")));
    };
    // keys on the grid: arrows move the selected cell (scrolling it into view), Home and
    // End go to the first and last row, c or Ctrl+C copies the cell, r its row
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let n = rows.get_untracked();
        let width = loaded.with_untracked(|l| l.as_ref().map_or(0, |l| l.schema().fields().len()));
        if n == 0 || width == 0 {
            return;
        }
        let (pos, col) = selected.get_untracked().unwrap_or((0, 0));
        let next = match ev.key().as_str() {
            "ArrowDown" => Some((pos.saturating_add(1).min(n - 1), col)),
            "ArrowUp" => Some((pos.saturating_sub(1), col)),
            "ArrowRight" => Some((pos, col.saturating_add(1).min(width - 1))),
            "ArrowLeft" => Some((pos, col.saturating_sub(1))),
            "Home" => Some((0, col)),
            "End" => Some((n - 1, col)),
            "c" if !ev.alt_key() => {
                copy_cell(());
                None
            }
            "r" if !ev.ctrl_key() && !ev.meta_key() => {
                copy_row(());
                None
            }
            _ => return,
        };
        ev.prevent_default();
        let Some((p, c)) = next else { return };
        selected.set(Some((p, c)));
        if let Some(e) = el.get_untracked() {
            let top = p as f64 * ROW_PX;
            let head = 3.0 * ROW_PX;
            let (st, ch) = (e.scroll_top() as f64, e.client_height() as f64);
            if top < st {
                e.set_scroll_top(top as i32);
            } else if top + ROW_PX + head > st + ch {
                e.set_scroll_top((top + ROW_PX + head - ch) as i32);
            }
            scroll_top.set(e.scroll_top() as f64);
            view_px.set(ch);
        }
    };
    view! {
        <div class="grid-tools">
            <button type="button" id="copy-cell" disabled=move || selected.get().is_none() on:click=move |_| copy_cell(())>"Copy cell"</button>
            <button type="button" id="copy-row" disabled=move || selected.get().is_none() on:click=move |_| copy_row(())>"Copy row"</button>
            <span class="muted">{move || if selected.get().is_some() { "arrows move, c copies the cell, r the row".to_string() } else { "select a cell (click, or focus the grid and use the arrows) to copy it or its row as JSON".into() }}</span>
            <span role="status" id="copy-said">{move || said.get()}</span>
        </div>
        <div class="scroll window grid" node_ref=el tabindex="0" role="region" aria-label="rows" on:scroll=on_scroll on:keydown=on_key>
            // divs, not a table: each row is laid out alone (contained, at its offset),
            // so a scroll step lays out the rows it adds and nothing else
            <div id=id class="wgrid" role="grid" aria-rowcount=move || (rows.get() + 1).to_string()
                aria-colcount=move || head.with(Vec::len).to_string()
                style=move || head.with(|h| format!("width: {}px; --cols: {}",
                    h.iter().map(|c| c.3).sum::<u32>().max(1),
                    h.iter().map(|c| format!("{}px", c.3)).collect::<Vec<_>>().join(" "))) >
                <div class="whead"><div role="row" class="hrow" aria-rowindex="1">
                    {move || head.get().into_iter().map(|(i, name, ty, _)| {
                        let state = move || match sort.get() {
                            Some((c, false)) if c == i => "ascending",
                            Some((c, true)) if c == i => "descending",
                            _ => "none",
                        };
                        view! {
                            <div role="columnheader" class="th" aria-sort=state>
                                <button type="button" class="sort" title="sort the loaded rows"
                                    on:click=move |_| sort.update(|s| *s = match *s {
                                        Some((c, false)) if c == i => Some((i, true)),
                                        Some((c, true)) if c == i => None,
                                        _ => Some((i, false)),
                                    })>
                                    <span class="name">{name}</span>
                                </button>
                                <span class="type">{ty}</span>
                                <span class="stats" title=move || note(i)>{move || note(i)}</span>
                            </div>
                        }
                    }).collect_view()}
                </div></div>
                <div class="wbody" style=body on:click=on_click>
                    <For each=move || keys.get() key=|k| *k children=row />
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[wasm_bindgen_test::wasm_bindgen_test]
    fn columns_are_as_wide_as_their_type_or_name() {
        assert_eq!(column_px("id", "long"), 14 * 8 + 14);
        assert_eq!(column_px("a_rather_long_column_name", "long"), 28 * 8 + 14);
        assert_eq!(column_px(&"x".repeat(500), "string"), 40 * 8 + 14);
        assert_eq!(column_px("s", "struct<a:int>"), 32 * 8 + 14);
    }

    #[wasm_bindgen_test::wasm_bindgen_test]
    fn the_window_covers_the_view_and_a_margin() {
        assert_eq!(window(0.0, 0.0, 0), (0, 0));
        assert_eq!(window(0.0, 0.0, 10), (0, 10));
        assert_eq!(window(0.0, 260.0, 100_000), (0, 10 + OVERSCAN));
        let (first, end) = window(26_000.0, 520.0, 100_000);
        assert_eq!(first, 1000 - OVERSCAN);
        assert_eq!(end, 1000 + 20 + OVERSCAN);
        // scrolled past the end (rows replaced by fewer): nothing, no panic
        assert_eq!(window(1e9, 520.0, 5), (5, 5));
        assert_eq!(window(-5.0, 520.0, 5), (0, 5));
    }
}

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

/// The grid's state: the loaded rows, where the view is, the sort and the selection
/// (signals: copied into every handler).
#[derive(Clone, Copy)]
struct Grid {
    loaded: RwSignal<Option<Loaded>>,
    el: NodeRef<leptos::html::Div>,
    scroll_top: RwSignal<f64>,
    /// The offset a scroll event saw, until the rows are drawn for it.
    next_top: StoredValue<Option<f64>>,
    view_px: RwSignal<f64>,
    /// The sorted column and whether descending.
    sort: RwSignal<Option<(usize, bool)>>,
    /// The selected cell: display position and column.
    selected: RwSignal<Option<(usize, usize)>>,
    /// What the last copy did.
    said: RwSignal<String>,
    rows: Memo<usize>,
    /// The order of the loaded rows: as loaded, or by the sorted column (again as pages
    /// arrive).
    order: Memo<Option<Vec<usize>>>,
}

impl Grid {
    fn new(loaded: RwSignal<Option<Loaded>>) -> Self {
        let rows = Memo::new(move |_| loaded.with(|l| l.as_ref().map_or(0, |l| l.rows())));
        let sort = RwSignal::new(None::<(usize, bool)>);
        let order = Memo::new(move |_| {
            let _ = rows.get();
            let (col, desc) = sort.get()?;
            loaded.with_untracked(|l| l.as_ref().and_then(|l| l.order_by(col, desc).ok()))
        });
        Grid {
            loaded,
            el: NodeRef::new(),
            scroll_top: RwSignal::new(0.0),
            next_top: StoredValue::new(None),
            view_px: RwSignal::new(0.0),
            sort,
            selected: RwSignal::new(None),
            said: RwSignal::new(String::new()),
            rows,
            order,
        }
    }

    /// The loaded row shown at display position `pos`.
    fn at(self, pos: usize) -> usize {
        self.order.with(|o| {
            o.as_ref()
                .map_or(pos, |o| o.get(pos).copied().unwrap_or(pos))
        })
    }

    /// Columns of the loaded rows.
    fn width(self) -> usize {
        self.loaded
            .with_untracked(|l| l.as_ref().map_or(0, |l| l.schema().fields().len()))
    }

    /// A scroll step: draw the rows for the new offset in a task of their own, and ask for
    /// more rows near the end.
    fn scrolled(self, near_end: Callback<()>) {
        let Some(e) = self.el.get_untracked() else {
            return;
        };
        // the view's height is not read here (it is kept from the first result and each
        // resize): reading it while rows are being appended forces a layout inside this
        // handler, on every scroll step
        let (top, view) = (e.scroll_top() as f64, self.view_px.get_untracked());
        // the rows are drawn in a task of their own, not inside the frame that scrolled:
        // a big jump shows the margin for a frame, and no frame waits for the new rows'
        // script and their layout at once (a long task)
        let pending = self.next_top.get_value().is_some();
        self.next_top.set_value(Some(top));
        if !pending {
            set_timeout(
                move || {
                    if let Some(t) = self.next_top.get_value() {
                        self.next_top.set_value(None);
                        self.scroll_top.set(t);
                    }
                },
                std::time::Duration::ZERO,
            );
        }
        if top + 3.0 * view >= self.rows.get_untracked() as f64 * ROW_PX {
            near_end.run(());
        }
    }

    /// A new result starts at the top, unsorted; the view's height is read once per result
    /// (reading it forces a layout: not on every page appended) and on every resize.
    fn follow_results_and_resizes(self) {
        Effect::new(move |prev: Option<usize>| {
            let n = self.rows.get();
            if n < prev.unwrap_or(0) {
                self.sort.set(None);
                self.selected.set(None);
                if let Some(e) = self.el.get_untracked() {
                    e.set_scroll_top(0);
                }
                self.scroll_top.set(0.0);
            }
            if prev.unwrap_or(0) == 0 && n > 0 {
                self.measure();
            }
            n
        });
        // the view's height (65vh) changes with the window's
        let on_resize = window_event_listener(leptos::ev::resize, move |_| self.measure());
        on_cleanup(move || on_resize.remove());
    }

    fn measure(self) {
        if let Some(e) = self.el.get_untracked() {
            self.view_px.set(e.client_height() as f64);
        }
    }

    /// The row drawn at `pos` (showing loaded row `shown`). A cell is drawn selected if it
    /// is; later changes of the selection are made on the two cells concerned
    /// ([`Grid::mark_selection`]: no effect per cell, a scroll step draws a screen of new
    /// cells).
    fn row(self, (_, pos, shown): (u64, usize, usize)) -> impl IntoView {
        let cells = self
            .loaded
            .with_untracked(|l| l.as_ref().map(|l| l.text(&[shown], "∅")))
            .unwrap_or(Ok(Vec::new()));
        let picked = self
            .selected
            .get_untracked()
            .filter(|s| s.0 == pos)
            .map(|s| s.1);
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
    }

    /// The selection moves: unmark the cell it left and mark the one it reached, if they
    /// are drawn.
    fn mark_selection(self) {
        Effect::new(move |prev: Option<Option<(usize, usize)>>| {
            let now = self.selected.get();
            if let Some(Some(was)) = prev {
                mark_cell(self.el, was, false);
            }
            if let Some(now) = now {
                mark_cell(self.el, now, true);
            }
            now
        });
    }

    /// One listener for every cell: the row says its position, the cell its column.
    fn clicked(self, ev: leptos::ev::MouseEvent) {
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
            self.selected.set(Some((pos, col)));
        }
    }

    /// Copies the selected cell, or its whole row, as JSON.
    fn copy_selected(self, whole_row: bool) {
        let Some((pos, c)) = self.selected.get_untracked() else {
            return;
        };
        let out = self.loaded.with_untracked(|l| {
            let l = l.as_ref()?;
            let row = l.row_json(self.at(pos)).ok()?;
            if whole_row {
                return Some(row.to_string());
            }
            let name = l.schema().fields().get(c)?.name().clone();
            Some(
                row.get(&name)
                    .cloned()
                    .unwrap_or(serde_json::Value::Null)
                    .to_string(),
            )
        });
        let what = if whole_row { "row" } else { "cell" };
        self.said
            .set(out.map_or("nothing to copy".into(), |t| copy(t, what)));
    }

    /// Keys on the grid ([`key_action`]).
    fn key(self, ev: leptos::ev::KeyboardEvent) {
        let (n, width) = (self.rows.get_untracked(), self.width());
        let at = self.selected.get_untracked().unwrap_or((0, 0));
        let modifiers = Modifiers {
            alt: ev.alt_key(),
            ctrl_or_meta: ev.ctrl_key() || ev.meta_key(),
        };
        let Some(action) = key_action(&ev.key(), modifiers, at, (n, width)) else {
            return;
        };
        ev.prevent_default();
        match action {
            KeyAction::Copy { whole_row } => self.copy_selected(whole_row),
            KeyAction::Select(p, c) => {
                self.selected.set(Some((p, c)));
                self.scroll_to(p);
            }
        }
    }

    /// Scrolls row `p` into view, below the sticky header.
    fn scroll_to(self, p: usize) {
        let Some(e) = self.el.get_untracked() else {
            return;
        };
        let top = p as f64 * ROW_PX;
        let head = 3.0 * ROW_PX;
        let (st, ch) = (e.scroll_top() as f64, e.client_height() as f64);
        if top < st {
            e.set_scroll_top(top as i32);
        } else if top + ROW_PX + head > st + ch {
            e.set_scroll_top((top + ROW_PX + head - ch) as i32);
        }
        self.scroll_top.set(e.scroll_top() as f64);
        self.view_px.set(ch);
    }
}

/// The modifier keys held with a key.
#[derive(Clone, Copy, Default)]
struct Modifiers {
    alt: bool,
    ctrl_or_meta: bool,
}

/// What a key on the grid does.
#[derive(Debug, PartialEq)]
enum KeyAction {
    /// Select this cell (display position, column).
    Select(usize, usize),
    /// Copy the selected cell, or its row.
    Copy { whole_row: bool },
}

/// The action of `key` with the cell `at` selected in a grid of `size` (rows, columns):
/// arrows move the selection, Home and End go to the first and last row, c or Ctrl+C
/// copies the cell, r its row; nothing for other keys or an empty grid.
fn key_action(
    key: &str,
    held: Modifiers,
    (pos, col): (usize, usize),
    (rows, columns): (usize, usize),
) -> Option<KeyAction> {
    if rows == 0 || columns == 0 {
        return None;
    }
    let select = |p: usize, c: usize| Some(KeyAction::Select(p, c));
    match key {
        "ArrowDown" => select(pos.saturating_add(1).min(rows - 1), col),
        "ArrowUp" => select(pos.saturating_sub(1), col),
        "ArrowRight" => select(pos, col.saturating_add(1).min(columns - 1)),
        "ArrowLeft" => select(pos, col.saturating_sub(1)),
        "Home" => select(0, col),
        "End" => select(rows - 1, col),
        "c" if !held.alt => Some(KeyAction::Copy { whole_row: false }),
        "r" if !held.ctrl_or_meta => Some(KeyAction::Copy { whole_row: true }),
        _ => None,
    }
}

/// Each column's position, name, Delta type and width: built again only when the columns
/// change.
fn column_heads(
    loaded: RwSignal<Option<Loaded>>,
    types: Signal<Vec<String>>,
) -> Memo<Vec<(usize, String, String, u32)>> {
    Memo::new(move |_| {
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
    })
}

/// Each column's note (nulls and range of the loaded rows): text that changes as pages
/// arrive, in headers that stay.
fn column_notes(loaded: RwSignal<Option<Loaded>>) -> Memo<Vec<String>> {
    Memo::new(move |_| {
        loaded.with(|l| {
            let Some(l) = l else { return Vec::new() };
            (0..l.schema().fields().len())
                .map(|i| column_note(l, i))
                .collect::<Vec<_>>()
        })
    })
}

/// The grid's CSS: its width and its columns' (`--cols`).
fn grid_style(heads: &[(usize, String, String, u32)]) -> String {
    format!(
        "width: {}px; --cols: {}",
        heads.iter().map(|c| c.3).sum::<u32>().max(1),
        heads
            .iter()
            .map(|c| format!("{}px", c.3))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// The copy buttons, the keys' hint and what the last copy did.
#[component]
fn GridTools(grid: Grid) -> impl IntoView {
    let none = move || grid.selected.get().is_none();
    let hint = move || {
        if none() {
            "select a cell (click, or focus the grid and use the arrows) to copy it or its row as JSON"
        } else {
            "arrows move, c copies the cell, r the row"
        }
    };
    view! {
        <div class="grid-tools">
            <button type="button" id="copy-cell" disabled=none on:click=move |_| grid.copy_selected(false)>"Copy cell"</button>
            <button type="button" id="copy-row" disabled=none on:click=move |_| grid.copy_selected(true)>"Copy row"</button>
            <span class="muted">{hint}</span>
            <span role="status" id="copy-said">{move || grid.said.get()}</span>
        </div>
    }
}

/// One column's header: a button that sorts the loaded rows by it (ascending, descending,
/// as loaded), its type and its note.
#[component]
fn ColumnHeader(
    grid: Grid,
    i: usize,
    name: String,
    ty: String,
    notes: Memo<Vec<String>>,
) -> impl IntoView {
    let sort = grid.sort;
    let state = move || match sort.get() {
        Some((c, false)) if c == i => "ascending",
        Some((c, true)) if c == i => "descending",
        _ => "none",
    };
    let next = move |s: Option<(usize, bool)>| match s {
        Some((c, false)) if c == i => Some((i, true)),
        Some((c, true)) if c == i => None,
        _ => Some((i, false)),
    };
    let note = move || notes.with(|n| n.get(i).cloned().unwrap_or_default());
    view! {
        <div role="columnheader" class="th" aria-sort=state>
            <button type="button" class="sort" title="sort the loaded rows"
                on:click=move |_| sort.update(|s| *s = next(*s))>
                <span class="name">{name}</span>
            </button>
            <span class="type">{ty}</span>
            <span class="stats" title=note>{note}</span>
        </div>
    }
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
    let grid = Grid::new(loaded);
    grid.follow_results_and_resizes();
    grid.mark_selection();
    let rows = grid.rows;
    // the rows in view: a page appended below them changes nothing drawn but the body's
    // height
    let win = Memo::new(move |_| window(grid.scroll_top.get(), grid.view_px.get(), rows.get()));
    let heads = column_heads(loaded, types);
    let notes = column_notes(loaded);
    // the rows in view, each keyed by the result, its position and the loaded row shown
    // there: a scroll step adds and removes a row or two and keeps the rest of the DOM;
    // a new result, a new order or a page appended out of view redraws nothing else
    let result = Memo::new(move |_| loaded.with(|l| l.as_ref().map_or(0, Loaded::id)));
    let keys = Memo::new(move |_| {
        let id = result.get();
        let (first, end) = win.get();
        (first..end)
            .map(|pos| (id, pos, grid.at(pos)))
            .collect::<Vec<_>>()
    });
    // the body is as tall as every loaded row; each drawn row is placed at its offset
    let body = move || format!("height: {}px", rows.get() as f64 * ROW_PX);
    view! {
        <GridTools grid=grid />
        <div class="scroll window grid" node_ref=grid.el tabindex="0" role="region" aria-label="rows"
            on:scroll=move |_| grid.scrolled(near_end) on:keydown=move |ev| grid.key(ev)>
            // divs, not a table: each row is laid out alone (contained, at its offset),
            // so a scroll step lays out the rows it adds and nothing else
            <div id=id class="wgrid" role="grid" aria-rowcount=move || (rows.get() + 1).to_string()
                aria-colcount=move || heads.with(Vec::len).to_string()
                style=move || heads.with(|h| grid_style(h))>
                <div class="whead"><div role="row" class="hrow" aria-rowindex="1">
                    {move || heads.get().into_iter().map(|(i, name, ty, _)| view! {
                        <ColumnHeader grid=grid i=i name=name ty=ty notes=notes />
                    }).collect_view()}
                </div></div>
                <div class="wbody" style=body on:click=move |ev| grid.clicked(ev)>
                    <For each=move || keys.get() key=|k| *k children=move |k| grid.row(k) />
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
    fn keys_move_the_selection_within_the_grid_and_copy() {
        let none = Modifiers::default();
        let size = (3, 2);
        let at = |key, pos| key_action(key, none, pos, size);
        assert_eq!(at("ArrowDown", (0, 0)), Some(KeyAction::Select(1, 0)));
        assert_eq!(at("ArrowDown", (2, 1)), Some(KeyAction::Select(2, 1)));
        assert_eq!(at("ArrowUp", (0, 1)), Some(KeyAction::Select(0, 1)));
        assert_eq!(at("ArrowRight", (1, 1)), Some(KeyAction::Select(1, 1)));
        assert_eq!(at("ArrowLeft", (1, 1)), Some(KeyAction::Select(1, 0)));
        assert_eq!(at("Home", (2, 1)), Some(KeyAction::Select(0, 1)));
        assert_eq!(at("End", (0, 1)), Some(KeyAction::Select(2, 1)));
        assert_eq!(at("c", (0, 0)), Some(KeyAction::Copy { whole_row: false }));
        assert_eq!(at("r", (0, 0)), Some(KeyAction::Copy { whole_row: true }));
        assert_eq!(at("x", (0, 0)), None);
        let alt = Modifiers { alt: true, ..none };
        assert_eq!(key_action("c", alt, (0, 0), size), None);
        let ctrl = Modifiers {
            ctrl_or_meta: true,
            ..none
        };
        assert_eq!(
            key_action("c", ctrl, (0, 0), size),
            Some(KeyAction::Copy { whole_row: false })
        );
        assert_eq!(key_action("r", ctrl, (0, 0), size), None);
        assert_eq!(key_action("ArrowDown", none, (0, 0), (0, 2)), None);
        assert_eq!(key_action("ArrowDown", none, (0, 0), (3, 0)), None);
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

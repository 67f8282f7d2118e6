//! Text for terminals and plain-text documents: aligned tables, key/value listings, and
//! escaping of the characters a terminal would act on or that would hide text
//! ([`terminal_safe`] for text, [`json_terminal_safe`] for JSON, [`TerminalWriter`] for a
//! stream of either).

use std::borrow::Cow;
use std::io::Write;

/// Render rows under `headers` as an aligned text table; headers and cells are shown
/// [`terminal_safe`] (escaped before they are measured, so the columns still line up).
/// The one aligned-text writer is [`TableStream`]: this is it with every row in one block.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = TableStream::new(headers).with_block(rows.len());
    let mut out: String = rows.iter().map(|r| t.push(r.clone())).collect();
    out.push_str(&t.finish());
    out
}

/// Cells as a table shows them: every character a terminal would act on, or that draws
/// nothing, escaped (a newline too: one row, one line).
fn safe_cells<'a>(cells: impl Iterator<Item = &'a str>) -> Vec<String> {
    cells
        .map(|c| terminal_safe(c, false).into_owned())
        .collect()
}

/// Columns `s` takes on a terminal: CJK and most emoji take two, combining marks none
/// (Unicode's East Asian Width, as terminals draw them). Every aligned table (these and
/// the row table of [`crate::rows`]) measures with it.
pub fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

fn width(s: &str) -> usize {
    display_width(s)
}

/// The widest cell of each column, headers included.
fn widths(headers: &[&str], rows: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(width(c));
            }
        }
    }
    widths
}

/// The header line and the rule under it.
fn head(headers: &[&str], widths: &[usize]) -> String {
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let mut out = line(widths, &mut headers.iter().copied());
    out.push_str(&line(widths, &mut rule.iter().map(|s| s.as_str())));
    out
}

/// One line: each cell but the last padded to its column's width.
fn line(widths: &[usize], cells: &mut dyn Iterator<Item = &str>) -> String {
    let mut s = String::new();
    for (i, c) in cells.enumerate() {
        let w = widths.get(i).copied().unwrap_or(0);
        if i > 0 {
            s.push_str("  ");
        }
        s.push_str(c);
        if i + 1 < widths.len() {
            s.push_str(&" ".repeat(w.saturating_sub(width(c))));
        }
    }
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

/// An aligned text table written as its rows arrive, for listings too long to hold: the
/// column widths are those of the first [`TableStream::BLOCK`] rows (or
/// [`TableStream::with_block`]; a longer cell later pushes the rest of its line right), so
/// memory holds one block, not the listing. Every aligned table of the CLI is one of these
/// ([`table`], the listings, and the row table of [`crate::rows`]): columns are measured
/// by [`display_width`], cells shown [`terminal_safe`].
#[derive(Debug)]
pub struct TableStream {
    headers: Vec<String>,
    widths: Option<Vec<usize>>,
    first: Vec<Vec<String>>,
    /// Rows whose cells set the column widths.
    block: usize,
    /// Cells wider than this are cut, with `…` (none: shown whole).
    max_cell: Option<usize>,
}

impl TableStream {
    /// Rows whose cells set the column widths, unless [`TableStream::with_block`] says.
    pub const BLOCK: usize = 1000;

    /// A table under `headers`, with no row yet.
    pub fn new(headers: &[&str]) -> Self {
        TableStream {
            headers: safe_cells(headers.iter().copied()),
            widths: None,
            first: Vec::new(),
            block: Self::BLOCK,
            max_cell: None,
        }
    }

    /// Set the column widths by the first `rows` rows (at least one).
    pub fn with_block(mut self, rows: usize) -> Self {
        self.block = rows.max(1);
        self
    }

    /// Cut cells wider than `columns` terminal columns, ending them with `…`.
    pub fn with_max_cell(mut self, columns: usize) -> Self {
        self.max_cell = Some(columns.max(1));
        self
    }

    /// Add a row; returns the text ready to write (empty while the first block fills).
    /// Its cells are shown [`terminal_safe`], as in [`table`].
    pub fn push(&mut self, row: Vec<String>) -> String {
        let mut row = safe_cells(row.iter().map(|c| c.as_str()));
        if let Some(max) = self.max_cell {
            row.iter_mut().for_each(|c| cut(c, max));
        }
        if let Some(w) = &self.widths {
            return line(w, &mut row.iter().map(|s| s.as_str()));
        }
        self.first.push(row);
        if self.first.len() < self.block {
            return String::new();
        }
        self.flush_first()
    }

    /// The text not written yet (the whole table when it has fewer rows than a block).
    pub fn finish(mut self) -> String {
        if self.widths.is_some() {
            return String::new();
        }
        self.flush_first()
    }

    fn flush_first(&mut self) -> String {
        let headers: Vec<&str> = self.headers.iter().map(|h| h.as_str()).collect();
        let rows = std::mem::take(&mut self.first);
        let widths = widths(&headers, &rows);
        let mut out = head(&headers, &widths);
        for r in &rows {
            out.push_str(&line(&widths, &mut r.iter().map(|s| s.as_str())));
        }
        self.widths = Some(widths);
        out
    }
}

/// `s` cut to `max` terminal columns, ending with `…`, when it is wider.
fn cut(s: &mut String, max: usize) {
    if display_width(s) <= max {
        return;
    }
    let mut t = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw > max - 1 {
            break;
        }
        w += cw;
        t.push(c);
    }
    t.push('…');
    *s = t;
}

/// Two-column key/value listing; the values shown [`terminal_safe`] (one line each).
pub fn pairs(rows: &[(&str, String)]) -> String {
    let rows: Vec<(Cow<'_, str>, Cow<'_, str>)> = rows
        .iter()
        .map(|(k, v)| (terminal_safe(k, false), terminal_safe(v, false)))
        .collect();
    let w = rows.iter().map(|(k, _)| width(k)).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| {
            let pad = " ".repeat(w.saturating_sub(width(k)));
            format!("{k}{pad}  {v}\n")
        })
        .collect()
}

/// Whether `c` must not reach a terminal as is: C0/C1 controls and DEL (ESC starts the
/// sequences that move the cursor, retitle the window or — OSC 52 — write the
/// clipboard; BS and CR overwrite what was drawn), the bidirectional controls that make
/// text display in another order (overrides, embeddings, isolates, marks), the line and
/// paragraph separators, and the characters that draw nothing (zero-width spaces and
/// joiners, the byte order mark, fillers, tags, variation selectors): text made of them
/// looks like other text (`pay\u{200b}pal`, `invoice\u{202e}fdp.exe`). Newlines and tabs
/// pass when `keep_newlines`.
pub fn needs_escape(c: char, keep_newlines: bool) -> bool {
    if c.is_control() {
        return !(keep_newlines && (c == '\n' || c == '\t'));
    }
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// `s` with every character [`needs_escape`] names written as a visible escape (`\x1b`,
/// `\u{202e}`, `\n`): table text, metadata and values from a table are data, never
/// commands to the terminal, and nothing in them is hidden. Newlines and tabs are kept
/// when `keep_newlines` (whole documents). Not reversible: a literal `\x1b` in the text
/// reads the same (a terminal view, not the data; a pipe gets the data).
pub fn terminal_safe(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c, keep_newlines)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !needs_escape(c, keep_newlines) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// JSON text `json` with every character [`needs_escape`] names (but the newlines and
/// tabs of its layout) written as JSON's own `\uXXXX` escape (a surrogate pair above
/// U+FFFF): still valid JSON, parsing to the same value, and safe on a terminal. In valid
/// JSON such a character can only be inside a string, where the escape means the same.
pub fn json_terminal_safe(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| needs_escape(c, true)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if !needs_escape(c, true) {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{u:04x}"));
        }
    }
    Cow::Owned(out)
}

/// How a stream is made safe for a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// [`terminal_safe`] (newlines and tabs kept): text, CSV, TSV. The terminal shows the
    /// escapes; the bytes are no longer the data (CSV and TSV have no escape of their own).
    Visible,
    /// [`json_terminal_safe`]: JSON and JSON lines, still valid, the same values.
    Json,
}

/// A writer that passes everything written to it on [`Escape`]d for a terminal: the
/// streaming form of [`terminal_safe`] and [`json_terminal_safe`]. Characters split
/// across writes are joined first; bytes that are not UTF-8 are written `\xNN` (as
/// `\ufffd` in JSON). [`TerminalWriter::finish`] writes what is left and flushes.
#[derive(Debug)]
pub struct TerminalWriter<W: Write> {
    out: W,
    escape: Escape,
    /// The start of a character whose other bytes have not come yet.
    partial: Vec<u8>,
}

impl<W: Write> TerminalWriter<W> {
    /// A writer into `out`, escaping as `escape` says.
    pub fn new(out: W, escape: Escape) -> Self {
        TerminalWriter {
            out,
            escape,
            partial: Vec::new(),
        }
    }

    /// Write the incomplete character left at the end (as bytes that are not UTF-8),
    /// flush, and give the destination back.
    pub fn finish(mut self) -> std::io::Result<W> {
        let rest = std::mem::take(&mut self.partial);
        self.invalid(&rest)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn text(&mut self, s: &str) -> std::io::Result<()> {
        let safe = match self.escape {
            Escape::Visible => terminal_safe(s, true),
            Escape::Json => json_terminal_safe(s),
        };
        self.out.write_all(safe.as_bytes())
    }

    fn invalid(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        for b in bytes {
            match self.escape {
                Escape::Visible => write!(self.out, "\\x{b:02x}")?,
                Escape::Json => self.out.write_all(b"\\ufffd")?,
            }
        }
        Ok(())
    }
}

impl<W: Write> Write for TerminalWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let joined;
        let mut rest: &[u8] = if self.partial.is_empty() {
            buf
        } else {
            let mut p = std::mem::take(&mut self.partial);
            p.extend_from_slice(buf);
            joined = p;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.text(s)?;
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.text(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        Some(n) => {
                            let (bad, next) = after.split_at(n.min(after.len()));
                            self.invalid(bad)?;
                            rest = next;
                        }
                        None => {
                            // the start of a character: its other bytes come next
                            self.partial = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn wide_characters_align_by_display_width() {
        let rows = vec![
            vec!["日本語".to_string(), "x".to_string()],
            vec!["ab".to_string(), "y".to_string()],
            vec!["🦀é".to_string(), "z".to_string()],
        ];
        let out = table(&["name", "v"], &rows);
        let cols: Vec<usize> = out
            .lines()
            .map(|l| width(&l[..l.rfind(' ').map_or(0, |i| i + 1)]))
            .collect();
        // every row's second column starts at the same terminal column
        assert!(cols.windows(2).all(|w| w[0] == w[1]), "{out}");
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("e\u{301}"), 1);
    }

    use super::*;

    fn rows(n: usize, wide_after: usize) -> Vec<Vec<String>> {
        (0..n)
            .map(|i| {
                let name = if i >= wide_after {
                    "a-much-longer-name"
                } else {
                    "x"
                };
                vec![name.to_string(), i.to_string()]
            })
            .collect()
    }

    fn streamed(rows: &[Vec<String>]) -> String {
        let mut t = TableStream::new(&["name", "n"]);
        let mut out = String::new();
        for r in rows {
            out.push_str(&t.push(r.clone()));
        }
        out + &t.finish()
    }

    #[test]
    fn a_streamed_table_of_one_block_is_the_table() {
        for n in [0, 1, 999, 1000] {
            let r = rows(n, usize::MAX);
            assert_eq!(streamed(&r), table(&["name", "n"], &r), "{n} rows");
        }
    }

    #[test]
    fn a_streamed_table_keeps_the_first_blocks_widths() {
        let r = rows(2500, 1500);
        let out = streamed(&r);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2 + 2500);
        // aligned by the first 1,000 rows: "name" (4 wide), then longer names push right
        assert_eq!(lines[0], "name  n");
        assert_eq!(lines[2], "x     0");
        assert_eq!(lines[1002], "x     1000");
        assert_eq!(lines[1502], "a-much-longer-name  1500");
    }

    #[test]
    fn aligned_table() {
        let t = table(&["a", "bb"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "a    bb\n---  --\nxyz  1\n");
    }

    /// Characters that draw nothing or reorder the line (lookalike names: `pay\u{200b}pal`,
    /// `invoice\u{202e}fdp.exe`) are shown as escapes too.
    #[test]
    fn invisible_and_bidi_characters_are_shown() {
        for c in [
            '\u{200b}', '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{61c}', '\u{2028}',
            '\u{2029}', '\u{feff}', '\u{2066}', '\u{202a}', '\u{85}', '\u{7f}',
        ] {
            let s = format!("a{c}b");
            let safe = terminal_safe(&s, true);
            assert!(!safe.contains(c), "{:x} kept", c as u32);
            let want = if (c as u32) < 0x100 {
                format!("a\\x{:02x}b", c as u32)
            } else {
                format!("a\\u{{{:x}}}b", c as u32)
            };
            assert_eq!(safe, want);
        }
    }

    /// The aligned tables escape names and cells before measuring them: nothing hidden,
    /// and the columns still line up.
    #[test]
    fn text_tables_show_hidden_characters_and_stay_aligned() {
        let rows = vec![
            vec!["pay\u{200b}pal".to_string(), "1".to_string()],
            vec!["\u{1b}[2Jx".to_string(), "2".to_string()],
        ];
        let headers = ["name\u{202e}", "n"];
        let mut stream = TableStream::new(&headers);
        let mut streamed = String::new();
        for r in &rows {
            streamed.push_str(&stream.push(r.clone()));
        }
        streamed.push_str(&stream.finish());
        for out in [table(&headers, &rows), streamed] {
            assert!(!out.chars().any(|c| needs_escape(c, true)), "{out:?}");
            assert!(out.contains("pay\\u{200b}pal"), "{out}");
            assert!(out.contains("name\\u{202e}"), "{out}");
            let cols: Vec<usize> = out
                .lines()
                .map(|l| width(&l[..l.rfind(' ').map_or(0, |i| i + 1)]))
                .collect();
            assert!(cols.windows(2).all(|w| w[0] == w[1]), "{out}");
        }
    }

    const HOSTILE: &str = "a\u{1b}]52;c;ZXZpbA==\u{7}b\u{9b}2J\u{202e}fdp.exe\u{200b}\u{2028}\u{feff}\u{7f}\r\u{8}\u{e0041}日本\n\t\\x1b\"";

    /// JSON escaped for a terminal is still JSON, and reads back to the same strings.
    #[test]
    fn json_escaped_for_a_terminal_is_the_same_json() {
        let doc = serde_json::json!({ HOSTILE: [HOSTILE, 1, null] });
        for json in [
            serde_json::to_string(&doc).unwrap(),
            serde_json::to_string_pretty(&doc).unwrap(),
        ] {
            let safe = json_terminal_safe(&json);
            assert!(!safe.chars().any(|c| needs_escape(c, true)), "{safe}");
            assert!(
                safe.contains("\\u202e") && safe.contains("\\udb40\\udc41"),
                "{safe}"
            );
            let back: serde_json::Value = deltalens_json::from_str(&safe).unwrap();
            assert_eq!(back, doc);
        }
    }

    /// The streaming writer escapes as the one-shot functions do, however the bytes are
    /// cut into writes (a character split across two), and shows bytes that are not UTF-8.
    #[test]
    fn the_terminal_writer_escapes_however_the_bytes_come() {
        let json = serde_json::to_string(&serde_json::json!([HOSTILE])).unwrap();
        for (escape, text, want) in [
            (Escape::Visible, HOSTILE, terminal_safe(HOSTILE, true)),
            (Escape::Json, json.as_str(), json_terminal_safe(&json)),
        ] {
            for chunk in [1, 2, 3, 5, 1000] {
                let mut w = TerminalWriter::new(Vec::new(), escape);
                for piece in text.as_bytes().chunks(chunk) {
                    w.write_all(piece).unwrap();
                }
                let got = String::from_utf8(w.finish().unwrap()).unwrap();
                assert_eq!(got, want, "{escape:?} in writes of {chunk}");
            }
        }
        let mut w = TerminalWriter::new(Vec::new(), Escape::Visible);
        w.write_all(b"a\xff\x1bb\xe6\x97").unwrap();
        assert_eq!(w.finish().unwrap(), b"a\\xff\\x1bb\\xe6\\x97");
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        // OSC 52 (clipboard write), a colour, a title, C1 CSI, a bidi override
        let hostile = "a\u{1b}]52;c;ZXZpbA==\u{7}b\u{1b}[31mred\u{9b}2J\u{202e}txt.exe";
        let safe = terminal_safe(hostile, false);
        assert!(
            !safe.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{safe}"
        );
        assert_eq!(
            safe,
            "a\\x1b]52;c;ZXZpbA==\\x07b\\x1b[31mred\\x9b2J\\u{202e}txt.exe"
        );
        assert_eq!(terminal_safe("x\ny\tz", false), "x\\ny\\tz");
        assert_eq!(terminal_safe("x\ny\tz", true), "x\ny\tz");
        assert!(matches!(
            terminal_safe("plain é", false),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

//! Text for terminals and plain-text documents: aligned tables, key/value listings, and
//! escaping of the characters a terminal would act on.

/// Render rows under `headers` as an aligned text table.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let widths = widths(headers, rows);
    let mut out = head(headers, &widths);
    for r in rows {
        out.push_str(&line(&widths, &mut r.iter().map(|s| s.as_str())));
    }
    out
}

/// The widest cell of each column, headers included.
/// Columns a cell takes on a terminal: CJK and most emoji take two, combining marks none
/// (Unicode's East Asian Width, as terminals draw them).
fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

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
/// column widths are those of the first [`TableStream::BLOCK`] rows (a longer cell later
/// pushes the rest of its line right), so memory holds one block, not the listing.
#[derive(Debug)]
pub struct TableStream {
    headers: Vec<String>,
    widths: Option<Vec<usize>>,
    first: Vec<Vec<String>>,
}

impl TableStream {
    /// Rows whose cells set the column widths.
    pub const BLOCK: usize = 1000;

    /// A table under `headers`, with no row yet.
    pub fn new(headers: &[&str]) -> Self {
        TableStream {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            widths: None,
            first: Vec::new(),
        }
    }

    /// Add a row; returns the text ready to write (empty while the first block fills).
    pub fn push(&mut self, row: Vec<String>) -> String {
        if let Some(w) = &self.widths {
            return line(w, &mut row.iter().map(|s| s.as_str()));
        }
        self.first.push(row);
        if self.first.len() < Self::BLOCK {
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

/// Two-column key/value listing.
pub fn pairs(rows: &[(&str, String)]) -> String {
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<w$}  {v}\n"))
        .collect()
}

/// Whether `c` must not reach a terminal as is: C0/C1 controls and DEL (ESC starts the
/// sequences that move the cursor, retitle the window or — OSC 52 — write the
/// clipboard) and the bidirectional overrides that make text display in another order.
fn unsafe_char(c: char, keep_newlines: bool) -> bool {
    (c.is_control() && !(keep_newlines && (c == '\n' || c == '\t')))
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character a terminal would act on written as an escape (`\x1b`,
/// `\u{202e}`): table text, metadata and values from a table are data, never commands
/// to the terminal. Newlines and tabs are kept when `keep_newlines` (whole documents).
pub fn terminal_safe(s: &str, keep_newlines: bool) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c, keep_newlines)) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !unsafe_char(c, keep_newlines) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
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

//! The status line's texts: I/O counters and the Range warning. Pure functions: no state,
//! no rendering (byte sizes and times are `deltalens_present::value`'s, as everywhere).

/// Requests made and bytes read since the table was opened.
pub fn fmt_io(requests: u64, bytes: u64) -> String {
    format!(
        "{requests} requests, {} read",
        deltalens_present::value::bytes(bytes as i64)
    )
}

/// Digits grouped by thousands (`1000250` → `1,000,250`) in whole numbers within `text`
/// of five digits or more (a year, a version of four digits stays as it is; digits after
/// a decimal point are not grouped).
pub fn group_digits(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 5 {
            let n = run.len();
            for (i, c) in run.chars().enumerate() {
                if i > 0 && (n - i).is_multiple_of(3) {
                    out.push(',');
                }
                out.push(c);
            }
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    let mut fraction = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if fraction {
                out.push(c);
            } else {
                run.push(c);
            }
        } else {
            fraction = c == '.' && !run.is_empty();
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The warning for reads a server answered with the whole file (it ignores Range).
pub fn fmt_ranges_ignored(reads: u64) -> String {
    format!(" · the server ignores Range: {reads} reads downloaded whole files (slower; correct)")
}

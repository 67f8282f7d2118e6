//! The status line's texts: I/O counters and the Range warning. Pure functions: no state,
//! no rendering (byte sizes and times are `deltalens_present::value`'s, as everywhere).

/// Requests made and bytes read since the table was opened.
pub fn fmt_io(requests: u64, bytes: u64) -> String {
    format!(
        "{requests} requests, {} read",
        deltalens_present::value::bytes(bytes as i64)
    )
}

/// The warning for reads a server answered with the whole file (it ignores Range).
pub fn fmt_ranges_ignored(reads: u64) -> String {
    format!(" · the server ignores Range: {reads} reads downloaded whole files (slower; correct)")
}

//! Paths taken from the log (data files, deletion vectors, sidecars) stay inside the
//! table: after percent-decoding, a path must be relative, with no `.` or `..` segment, no
//! empty segment, no backslash and no control character. Every backend resolves paths
//! against the table root, and HTTP clients (the browser's `fetch` among them) normalise
//! `a/../b`: without this check a crafted log could make a reader fetch objects outside
//! the table, or outside the prefix a server allows.

/// Why a path from the log was refused.
pub(crate) fn check(decoded: &str) -> Result<(), &'static str> {
    if decoded.is_empty() {
        return Err("the path is empty");
    }
    if decoded.starts_with('/') {
        return Err("the path is absolute");
    }
    if decoded.contains('\\') {
        return Err("the path holds a backslash");
    }
    if decoded.chars().any(char::is_control) {
        return Err("the path holds a control character");
    }
    for segment in decoded.split('/') {
        match segment {
            ".." => return Err("the path climbs out of the table with '..'"),
            "." => return Err("the path has a '.' segment"),
            "" => return Err("the path has an empty segment ('//')"),
            _ => {}
        }
    }
    Ok(())
}

/// `raw` percent-decoded (Delta writes paths URL-encoded), then [`check`]ed.
pub(crate) fn decode_checked(raw: &str) -> Result<String, String> {
    let decoded = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_err(|e| format!("the path is not UTF-8 after percent-decoding: {e}"))?;
    check(&decoded).map_err(str::to_string)?;
    Ok(decoded.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn paths_stay_inside_the_table() {
        for ok in [
            "part-0.parquet",
            "year=2024/part-0.parquet",
            "a%20b/c.parquet",
            "dir/..name/x",
            "deletion_vector_x.bin",
        ] {
            assert!(decode_checked(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../x.parquet",
            "a/../../x",
            "%2e%2e/x",
            "a/%2E%2E/%2e%2e/b",
            "..%2fsecret",
            "/etc/passwd",
            "%2fetc/passwd",
            "a\\..\\b",
            "a%5c..%5cb",
            "./x",
            "a//b",
            "a/%00b",
            "a\nb",
            "%ff%fe",
        ] {
            assert!(decode_checked(bad).is_err(), "{bad}");
        }
    }
}

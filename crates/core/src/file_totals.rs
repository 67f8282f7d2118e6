//! Totals over a version's active files — counts, bytes, rows, deleted rows — added up one
//! file at a time (from a snapshot's list or from the stream of
//! [`crate::active_files`]), with checked arithmetic: a corrupt log's sums are reported as
//! an overflow, never as wrapped numbers.

use crate::actions::Add;
use crate::error::Error;

/// Files under this size count as small (the overview suggests OPTIMIZE when most are).
pub const SMALL_FILE_BYTES: i64 = 1024 * 1024;

/// Sums over active files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileTotals {
    /// Active files counted.
    pub files: u64,
    /// Their size in bytes; `None` once the sum overflows 64 bits.
    pub size_bytes: Option<i64>,
    /// Rows by statistics (`numRecords`) minus deletion-vector cardinalities; `None` once a
    /// file has no `numRecords` or the sum overflows.
    pub rows: Option<i64>,
    /// Whether `rows` is `None` because a sum overflowed (not for want of statistics).
    pub rows_overflowed: bool,
    /// Files without `numRecords` in their statistics.
    pub files_without_stats: u64,
    /// Files with a deletion vector.
    pub files_with_deletion_vectors: u64,
    /// Rows deleted by deletion vectors (their cardinalities); `None` once the sum overflows.
    pub deleted_rows: Option<i64>,
    /// Files under [`SMALL_FILE_BYTES`].
    pub small_files: u64,
}

impl FileTotals {
    /// Nothing counted yet.
    pub fn new() -> FileTotals {
        FileTotals {
            size_bytes: Some(0),
            rows: Some(0),
            deleted_rows: Some(0),
            ..FileTotals::default()
        }
    }

    /// The totals of `files`.
    pub fn of<'a>(files: impl IntoIterator<Item = &'a Add>) -> FileTotals {
        let mut t = FileTotals::new();
        for f in files {
            t.add(f);
        }
        t
    }

    /// Count one more file.
    pub fn add(&mut self, f: &Add) {
        self.files += 1;
        self.size_bytes = self.size_bytes.and_then(|s| s.checked_add(f.size));
        let deleted = f.deletion_vector.as_ref().map(|d| d.cardinality);
        if deleted.is_some() {
            self.files_with_deletion_vectors += 1;
        }
        self.deleted_rows = self
            .deleted_rows
            .and_then(|d| d.checked_add(deleted.unwrap_or(0)));
        match f.num_records() {
            None => {
                self.files_without_stats += 1;
                self.rows = None;
            }
            Some(n) => {
                if let Some(rows) = self.rows {
                    self.rows = n
                        .checked_sub(deleted.unwrap_or(0))
                        .and_then(|live| rows.checked_add(live));
                    self.rows_overflowed |= self.rows.is_none();
                }
            }
        }
        if f.size < SMALL_FILE_BYTES {
            self.small_files += 1;
        }
    }

    /// The overflow errors behind `None` sums, as the snapshot reports them.
    pub fn overflows(&self) -> Vec<Error> {
        let mut e = Vec::new();
        if self.size_bytes.is_none() {
            e.push(Error::Overflow { what: "size" });
        }
        if self.rows_overflowed {
            e.push(Error::Overflow { what: "row count" });
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn add(size: i64, rows: Option<i64>, deleted: Option<i64>) -> Add {
        let mut a: Add = deltalens_json::from_value(serde_json::json!({
            "path": "p", "partitionValues": {}, "size": size, "modificationTime": 0,
            "dataChange": true,
        }))
        .unwrap();
        a.stats = rows.map(|n| format!("{{\"numRecords\":{n}}}"));
        if let Some(c) = deleted {
            a.deletion_vector = Some(
                deltalens_json::from_value(serde_json::json!({
                    "storageType": "u", "pathOrInlineDv": "x", "sizeInBytes": 1,
                    "cardinality": c,
                }))
                .unwrap(),
            );
        }
        a
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn sums() {
        let t = FileTotals::of(&[add(10, Some(5), None), add(2 << 20, Some(7), Some(2))]);
        assert_eq!(t.files, 2);
        assert_eq!(t.size_bytes, Some(10 + (2 << 20)));
        assert_eq!(t.rows, Some(10));
        assert_eq!(t.deleted_rows, Some(2));
        assert_eq!(t.files_with_deletion_vectors, 1);
        assert_eq!(t.small_files, 1);
        assert!(t.overflows().is_empty());
        let t = FileTotals::of(&[add(1, None, None), add(1, Some(3), None)]);
        assert_eq!(
            (t.rows, t.files_without_stats, t.rows_overflowed),
            (None, 1, false)
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn overflows_are_reported_not_wrapped() {
        let big = i64::MAX;
        let t = FileTotals::of(&[add(big, Some(big), None), add(big, Some(big), None)]);
        assert_eq!((t.size_bytes, t.rows), (None, None));
        assert!(t.rows_overflowed);
        let e: Vec<String> = t.overflows().iter().map(|e| e.to_string()).collect();
        assert_eq!(e.len(), 2, "{e:?}");
    }
}

//! One data file of a scan: its storage path (from the path the log writes), the rows
//! to return from it (a deletion vector's mask), and once its footer is read, its layout
//! (how the scan's columns map onto the file's).

use std::sync::Arc;

use arrow_schema::Schema;
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::file::metadata::ParquetMetaData;
use roaring::RoaringTreemap;

use crate::actions::StringMap;
use crate::deletion_vector::relative_to_table;
use crate::error::{Error, Result};

/// The storage path of a data file named in the log: percent-decoded, relative to the
/// table root (absolute URIs inside the table are made relative), and refused when it
/// would leave the table (see [`crate::table_path`]).
pub fn data_file_path(path: &str, table_location: &str) -> Result<String> {
    let refused = |message: String| Error::DataFile {
        path: path.to_string(),
        message,
    };
    if path.contains("://") || path.starts_with("file:") {
        let rel = relative_to_table(path, table_location).ok_or_else(|| {
            refused(format!(
                "absolute path outside the table at {table_location}"
            ))
        })?;
        crate::table_path::check(&rel).map_err(|m| refused(m.to_string()))?;
        return Ok(rel);
    }
    crate::table_path::decode_checked(path).map_err(refused)
}

/// Which rows of a data file to return.
#[derive(Debug, Clone, Default)]
pub enum RowMask {
    /// Every row.
    #[default]
    All,
    /// Every row but these (a deletion vector).
    Without(RoaringTreemap),
    /// Only these rows (rows a deletion vector newly deleted, for change data).
    Only(RoaringTreemap),
    /// The rows from this position on (a resumed scan): the rows before it are left out
    /// by the decoder's row selection, never decoded.
    From(u64),
}

impl RowMask {
    /// Every row but `deleted` (every row when it is empty).
    pub fn without(deleted: RoaringTreemap) -> RowMask {
        if deleted.is_empty() {
            RowMask::All
        } else {
            RowMask::Without(deleted)
        }
    }

    pub(super) fn keeps(&self, row: u64) -> bool {
        match self {
            RowMask::All => true,
            RowMask::Without(d) => !d.contains(row),
            RowMask::Only(k) => k.contains(row),
            RowMask::From(p) => row >= *p,
        }
    }

    /// True when no row of `rows` is kept.
    pub(super) fn skips_all(&self, rows: std::ops::Range<u64>) -> bool {
        let n = rows.end - rows.start;
        match self {
            RowMask::All => n == 0,
            RowMask::Without(d) => d.range_cardinality(rows) == n,
            RowMask::Only(k) => k.range_cardinality(rows) == 0,
            RowMask::From(p) => rows.end <= *p,
        }
    }
}

/// One data (or change data) file to read.
#[derive(Debug, Clone)]
pub struct FileRead<'f> {
    /// The path as written in the log.
    pub path: &'f str,
    /// The file's size in bytes, as in the log.
    pub size: i64,
    /// The file's partition values (column to serialized value, `None` for null).
    pub partition_values: &'f StringMap,
    /// Which of the file's rows to return.
    pub rows: RowMask,
}

/// A data file's footer and how the scan's columns map onto the file's.
pub(super) struct FileLayout {
    /// The storage path.
    pub(super) path: String,
    /// The footer as the decoders read it, with the file's own Arrow schema.
    pub(super) reader: ArrowReaderMetadata,
    /// The file's tail fetched with the footer: (offset, bytes).
    pub(super) prefetched: (u64, Bytes),
    /// Which of the file's root columns each data column reads, and which roots to decode.
    pub(super) columns: Columns,
    /// The decoded roots, as a Parquet projection.
    pub(super) mask: ProjectionMask,
}

impl FileLayout {
    /// The footer.
    pub(super) fn metadata(&self) -> &Arc<ParquetMetaData> {
        self.reader.metadata()
    }

    /// The file's own Arrow schema (as decoded: see `parquet_read::reader_metadata`).
    pub(super) fn file_schema(&self) -> &Schema {
        self.reader.schema()
    }

    /// Rows in row group `rg` (a negative count reads as none).
    pub(super) fn rows_in(&self, rg: usize) -> u64 {
        self.metadata().row_group(rg).num_rows().max(0) as u64
    }
}

/// How the scan's columns map onto a file, worked out once per file: each batch then
/// takes every column from where it is without a search.
pub(super) struct Columns {
    /// Where each of the scan's fields is, in the scan's order.
    pub(super) sources: Vec<Source>,
    /// The file's root columns to decode, ascending (the decoded batch's column order).
    pub(super) root_idx: Vec<usize>,
}

/// Where one of the scan's columns comes from in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// The decoded batch's column at this position.
    Decoded(usize),
    /// Not in the file (an older file, before the column was added): nulls.
    Missing,
    /// The file's partition values.
    Partition,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn data_paths_are_decoded() {
        assert_eq!(
            data_file_path("a%20b/c%252F.parquet", "t").unwrap(),
            "a b/c%2F.parquet"
        );
        assert_eq!(
            data_file_path("s3://b/t/x.parquet", "s3://b/t").unwrap(),
            "x.parquet"
        );
        assert!(data_file_path("s3://elsewhere/x.parquet", "s3://b/t").is_err());
    }

    #[wasm_bindgen_test::wasm_bindgen_test(unsupported = test)]
    fn data_paths_cannot_leave_the_table() {
        for bad in [
            "../secret.parquet",
            "%2e%2e/%2e%2e/secret.parquet",
            "a/%2E%2E/%2E%2E/x",
            "%2fetc%2fpasswd",
            "a%5c..%5cb",
            "s3://b/t/../other/x.parquet",
            "s3://b/t/a/%2e%2e/%2e%2e/x.parquet",
            "https://h/t/../../x",
        ] {
            let e = data_file_path(bad, "s3://b/t").unwrap_err();
            assert!(matches!(e, Error::DataFile { .. }), "{bad}: {e}");
        }
    }
}

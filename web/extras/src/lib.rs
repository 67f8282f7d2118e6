//! The explorer's writer module, fetched the first time the Data tab downloads Parquet and
//! never on the first load: the Parquet writer (the CLI's `--format parquet`), ~100 KB of
//! the main module's gzipped wasm before.
//!
//! [`parquet_from_ipc`] is plain Rust (tested natively); the `#[wasm_bindgen]` export
//! wraps it for the page's JavaScript (`web/src/extras.rs` calls it).

use arrow_ipc::reader::StreamReader;
use deltalens_present::Format;

/// An Arrow IPC stream (the rows of a result) as a Parquet file, written by the CLI's
/// `--format parquet` writer (snappy).
pub fn parquet_from_ipc(ipc: &[u8]) -> Result<Vec<u8>, String> {
    let reader = StreamReader::try_new(ipc, None).map_err(|e| format!("reading the rows: {e}"))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("reading the rows: {e}"))?;
    deltalens_present::encode(Format::Parquet, &schema, &batches).map_err(|e| e.to_string())
}

#[cfg(target_arch = "wasm32")]
mod exports {
    use wasm_bindgen::prelude::*;

    /// `parquet_from_ipc` for JavaScript.
    #[wasm_bindgen(js_name = parquetFromIpc)]
    pub fn js_parquet_from_ipc(ipc: &[u8]) -> Result<Vec<u8>, JsError> {
        super::parquet_from_ipc(ipc).map_err(|e| JsError::new(&e))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may
    use super::*;
    use std::sync::Arc;

    #[test]
    fn parquet_downloads_read_back_equal() {
        use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(3)]));
        let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "ß"]));
        let batch = RecordBatch::try_from_iter([("id", ids), ("name", names)]).unwrap();
        let mut ipc = Vec::new();
        {
            let mut w =
                arrow_ipc::writer::StreamWriter::try_new(&mut ipc, &batch.schema()).unwrap();
            w.write(&batch).unwrap();
            w.write(&batch).unwrap();
            w.finish().unwrap();
        }
        let file = parquet_from_ipc(&ipc).unwrap();
        assert_eq!(&file[..4], b"PAR1");
        let r = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
            bytes::Bytes::from(file),
            1024,
        )
        .unwrap();
        let back: Vec<RecordBatch> = r.collect::<Result<_, _>>().unwrap();
        let rows: usize = back.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 6);
        assert_eq!(back[0].slice(0, 3), batch);
        assert!(
            parquet_from_ipc(b"not arrow")
                .unwrap_err()
                .contains("reading the rows")
        );
    }
}

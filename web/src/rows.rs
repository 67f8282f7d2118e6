//! Arrow batches as text cells for the page (always rendered as text, never HTML), and
//! as downloadable CSV, Parquet or an Arrow IPC stream — through `deltalens_present`, so
//! they read as the CLI's and the worker's.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltalens_present::Format;
use deltalens_present::cell::text_rows;

/// Rows as strings, with the column names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Format `batches` (all of `schema`) as text cells with the one cell formatter every
/// front end uses; nulls are `∅`.
pub fn grid(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Grid, String> {
    let mut rows = Vec::new();
    for b in batches {
        rows.extend(text_rows(b, "∅").map_err(|e| e.to_string())?);
    }
    Ok(Grid {
        columns: schema.fields().iter().map(|f| f.name().clone()).collect(),
        rows,
    })
}

/// The rows as a file in `format` (the same writer as the CLI's `--format` and the
/// worker's `format=`).
pub fn file(
    format: Format,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<Vec<u8>, String> {
    deltalens_present::encode(format, schema, batches).map_err(|e| e.to_string())
}

/// Offer `data` as a file download.
pub fn download(name: &str, mime: &str, data: &[u8]) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let err = |e: wasm_bindgen::JsValue| format!("download failed: {e:?}");
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(data));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts).map_err(err)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(err)?;
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(err)?
        .dyn_into()
        .map_err(|_| "not an anchor".to_string())?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

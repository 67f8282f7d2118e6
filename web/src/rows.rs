//! Arrow batches as text cells for the page (always rendered as text, never HTML), and
//! as downloadable CSV, Parquet or Arrow IPC.

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::SchemaRef;

/// Rows as strings, with the column names.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Every row of `batches` as text cells, nulls shown as `null`.
fn text_rows(batches: &[RecordBatch], null: &str) -> Vec<Vec<String>> {
    let opts = FormatOptions::default().with_null(null);
    let mut rows = Vec::new();
    for b in batches {
        let fmts: Vec<Option<ArrayFormatter>> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).ok())
            .collect();
        for i in 0..b.num_rows() {
            rows.push(
                fmts.iter()
                    .map(|f| {
                        f.as_ref()
                            .map_or_else(String::new, |f| f.value(i).to_string())
                    })
                    .collect(),
            );
        }
    }
    rows
}

/// Format `batches` (all of `schema`) as text cells; nulls are `∅`.
pub fn grid(schema: &SchemaRef, batches: &[RecordBatch]) -> Grid {
    Grid {
        columns: schema.fields().iter().map(|f| f.name().clone()).collect(),
        rows: text_rows(batches, "∅"),
    }
}

fn csv_line<'a>(cells: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = cells
        .map(|s| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        })
        .collect();
    quoted.join(",") + "\n"
}

/// CSV with a header line (nulls empty).
pub fn csv(schema: &SchemaRef, batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = csv_line(schema.fields().iter().map(|f| f.name().as_str()));
    for r in text_rows(batches, "") {
        out.push_str(&csv_line(r.iter().map(String::as_str)));
    }
    out.into_bytes()
}

/// A Parquet file of the rows.
pub fn parquet(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema.clone(), None)
        .map_err(|e| e.to_string())?;
    for b in batches {
        w.write(b).map_err(|e| e.to_string())?;
    }
    w.close().map_err(|e| e.to_string())?;
    Ok(buf)
}

/// An Arrow IPC file of the rows.
pub fn arrow(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    let mut w =
        arrow_ipc::writer::FileWriter::try_new(&mut buf, schema).map_err(|e| e.to_string())?;
    for b in batches {
        w.write(b).map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())?;
    drop(w);
    Ok(buf)
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

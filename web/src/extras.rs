//! The modules fetched on demand, so the first load carries none of them: the codec
//! module (`web/codecs`: brotli and zstd page decoders) the first time a page needs one,
//! the writer module (`web/extras`: Parquet) on the first Parquet download.
//!
//! Reading: the main module's Parquet reader is built without brotli and zstd; its codec
//! hook ([`install`], vendor/parquet patch 12) calls the codec module when it is loaded.
//! When it is not, the hook notes that it was wanted and fails the read; [`with_codecs`]
//! then loads the module and runs the read again (the Data tab resumes where it stopped
//! instead). The page says where the modules are (`globalThis.deltalensExtras`, written by
//! `web/dist_index.py`).

use std::cell::Cell;
use std::future::Future;

use parquet::errors::ParquetError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
const mods = {};
const loading = {};
export function extras_loaded(which) { return which in mods; }
export function load_extras(which) {
  if (!loading[which]) {
    const where = (globalThis.deltalensExtras || {})[which];
    if (!where) return Promise.reject(new Error(`this build of the explorer has no ${which} module`));
    loading[which] = import(where.js).then(async (m) => { await m.default({ module_or_path: where.wasm }); mods[which] = m; });
    loading[which].catch(() => { delete loading[which]; });
  }
  return loading[which];
}
export function extras_decompress(codec, input, size) { return mods.codecs.decompress(codec, input, size); }
export function extras_parquet(ipc) { return mods.extras.parquetFromIpc(ipc); }
"#)]
extern "C" {
    fn extras_loaded(which: &str) -> bool;
    fn load_extras(which: &str) -> js_sys::Promise;
    #[wasm_bindgen(catch)]
    fn extras_decompress(codec: &str, input: &[u8], size: f64) -> Result<Vec<u8>, JsValue>;
    #[wasm_bindgen(catch)]
    fn extras_parquet(ipc: &[u8]) -> Result<Vec<u8>, JsValue>;
}

/// The codec module's name in `globalThis.deltalensExtras`.
const CODECS: &str = "codecs";
/// The writer module's.
const WRITER: &str = "extras";

thread_local! {
    /// A read failed for want of the module since [`with_codecs`] last looked.
    static WANTED: Cell<bool> = const { Cell::new(false) };
}

fn js_error(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| js_sys::Error::from(e.clone()).message().as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// The Parquet reader's decoder of the codecs built out (vendor/parquet patch 12).
fn decompress(
    codec: &'static str,
    input: &[u8],
    output: &mut Vec<u8>,
    size: Option<usize>,
) -> parquet::errors::Result<usize> {
    if !extras_loaded(CODECS) {
        WANTED.set(true);
        return Err(ParquetError::General(format!(
            "{codec} pages are decoded by the codec module, which is not loaded yet"
        )));
    }
    let size = size.map_or(-1.0, |s| s as f64);
    let bytes =
        extras_decompress(codec, input, size).map_err(|e| ParquetError::General(js_error(&e)))?;
    output.extend_from_slice(&bytes);
    Ok(bytes.len())
}

/// Route the reader's brotli and zstd pages to the codec module (once, at start).
pub fn install() {
    parquet::set_external_decompressor(decompress);
}

/// Fetch and start module `which` (once; a failed fetch is tried again next time).
async fn load_module(which: &str) -> Result<(), String> {
    wasm_bindgen_futures::JsFuture::from(load_extras(which))
        .await
        .map(|_| ())
        .map_err(|e| format!("loading the {which} module failed: {}", js_error(&e)))
}

/// Fetch and start the codec module.
pub async fn load() -> Result<(), String> {
    load_module(CODECS).await
}

/// Whether a read failed for want of the module since the last call (and forget it).
pub fn take_wanted() -> bool {
    WANTED.replace(false)
}

/// Run `op`; when it failed for want of the codec module, load the module and run it once
/// more (`op` starts over: for reads that keep nothing of a failed run).
pub async fn with_codecs<T, Fut>(op: impl Fn() -> Fut) -> Result<T, String>
where
    Fut: Future<Output = Result<T, String>>,
{
    take_wanted();
    match op().await {
        Err(_) if take_wanted() => {
            load().await?;
            op().await
        }
        other => other,
    }
}

/// An Arrow IPC stream of rows as a Parquet file, written in the writer module.
pub async fn parquet_from_ipc(ipc: &[u8]) -> Result<Vec<u8>, String> {
    load_module(WRITER).await?;
    extras_parquet(ipc).map_err(|e| format!("writing Parquet failed: {}", js_error(&e)))
}

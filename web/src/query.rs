//! The query module's Web Worker, seen from the page (the Query tab calls it).
//!
//! The SQL parser and the query engine (`deltalens-api`) live in the query module
//! (`web/query`), fetched the first time a query runs and run in a Web Worker the page
//! starts from its own origin (`globalThis.deltalensExtras.query`, written by
//! `web/dist_index.py`): the page's first load carries none of it, and a query never
//! blocks the page. [`run`] sends a [`protocol::Request`] and awaits its
//! [`protocol::Answer`]; [`stop`] ends the worker (Cancel, a time budget), which aborts
//! its requests; the next query starts a new one.

#[path = "../query/src/protocol.rs"]
pub mod protocol;

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use protocol::{Answer, Progress, Request};

#[wasm_bindgen(inline_js = r#"
let worker = null;
let next = 1;
const waiting = new Map();
let progress = '';
function failAll(message) {
  for (const w of waiting.values()) w.reject(new Error(message));
  waiting.clear();
}
function start() {
  if (worker) return worker;
  const where = (globalThis.deltalensExtras || {}).query;
  if (!where || !where.worker) throw new Error('this build of the explorer has no query module');
  worker = new Worker(where.worker, { type: 'module', name: 'deltalens query' });
  worker.onmessage = (ev) => {
    const m = ev.data || {};
    const w = waiting.get(m.id);
    if (!w) return;
    if (m.progress !== undefined) { progress = m.progress; return; }
    waiting.delete(m.id);
    if (m.error !== undefined) w.reject(new Error(m.error)); else w.resolve(m.answer);
  };
  worker.onerror = (ev) => {
    ev.preventDefault();
    failAll('the query worker stopped: ' + (ev.message || 'its script could not be loaded'));
    worker.terminate();
    worker = null;
  };
  worker.postMessage({ init: { js: where.js, wasm: where.wasm } });
  return worker;
}
export function query_send(message) {
  const w = start();
  const id = next++;
  progress = '';
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    message.id = id;
    w.postMessage(message);
  });
}
export function query_progress() { return progress; }
export function query_stop(why) {
  if (worker) { worker.terminate(); worker = null; }
  failAll(why);
}
"#)]
extern "C" {
    #[wasm_bindgen(catch)]
    fn query_send(message: &JsValue) -> Result<js_sys::Promise, JsValue>;
    fn query_progress() -> String;
    fn query_stop(why: &str);
}

fn js_error(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| js_sys::Error::from(e.clone()).message().as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Send `{key: value}` to the worker and await its answer.
async fn send(key: &str, value: &str) -> Result<JsValue, String> {
    let message = Object::new();
    Reflect::set(&message, &key.into(), &value.into()).map_err(|e| js_error(&e))?;
    let promise = query_send(&message).map_err(|e| js_error(&e))?;
    JsFuture::from(promise).await.map_err(|e| js_error(&e))
}

/// Ends the worker when dropped unless [`Running::done`]: a query whose future is dropped
/// (Cancel, a newer operation) stops reading at once.
struct Running(bool);

impl Running {
    fn done(mut self) {
        self.0 = true;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.0 {
            query_stop("Cancelled.");
        }
    }
}

/// Run `request` in the query worker.
pub async fn run(request: &Request) -> Result<Answer, String> {
    let json = serde_json::to_string(request).map_err(|e| e.to_string())?;
    let running = Running(false);
    let answer = send("request", &json).await;
    running.done();
    let text = answer?
        .as_string()
        .ok_or("the query worker answered something that is not text")?;
    deltalens_json::from_str(&text)
        .map_err(|e| format!("the query worker's answer is not one this page reads: {e}"))
}

/// What the running query has read so far.
pub fn progress() -> Option<Progress> {
    deltalens_json::from_str(&query_progress()).ok()
}

/// End the worker (and the query it runs, which fails with `why`).
pub fn stop(why: &str) {
    query_stop(why);
}

/// The last result as a file in `format` (csv, tsv, json, jsonl, arrow).
pub async fn download(format: &str) -> Result<Vec<u8>, String> {
    let bytes = send("download", format).await?;
    bytes
        .dyn_into::<Uint8Array>()
        .map(|b| b.to_vec())
        .map_err(|_| "the query worker's file is not bytes".to_string())
}

// deltalens for browsers and bundlers: the wasm module is fetched beside this file on the
// first call (new URL(…, import.meta.url), which bundlers follow).
import init, * as wasm from './pkg/deltalens_js.js';
import { api, DeltaLensError } from './api.js';

let ready;
// (a failed download is tried again on the next call, not kept)
const load = () => (ready ??= init({ module_or_path: new URL('./pkg/deltalens_js_bg.wasm', import.meta.url) })
  .then(() => wasm, (e) => { ready = undefined; throw e; }));
const { openTable, Table } = api(load);
export { openTable, Table, DeltaLensError };

// deltalens for Cloudflare Workers: the wasm module is imported as a module (wrangler and
// miniflare compile `.wasm` imports), since a worker cannot fetch or read it.
import module from './pkg/deltalens_js_bg.wasm';
import { initSync } from './pkg/deltalens_js.js';
import * as wasm from './pkg/deltalens_js.js';
import { api, DeltaLensError } from './api.js';

let ready;
const load = async () => {
  if (!ready) {
    initSync({ module });
    ready = wasm;
  }
  return ready;
};
const { openTable, Table } = api(load);
export { openTable, Table, DeltaLensError };

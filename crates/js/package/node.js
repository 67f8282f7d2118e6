// deltalens for Node (20 and later): the wasm module is read from beside this file.
import { readFileSync } from 'node:fs';
import { initSync } from './pkg/deltalens_js.js';
import * as wasm from './pkg/deltalens_js.js';
import { api, DeltaLensError } from './api.js';

let ready;
const load = async () => {
  if (!ready) {
    initSync({ module: readFileSync(new URL('./pkg/deltalens_js_bg.wasm', import.meta.url)) });
    ready = wasm;
  }
  return ready;
};
const { openTable, Table } = api(load);
export { openTable, Table, DeltaLensError };

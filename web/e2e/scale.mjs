// The explorer on a large table (scripts/explorer-scale): a table of N files served by
// `deltalens serve` on 127.0.0.1, opened in Debian's Chromium. Measured: navigation →
// schema tab visible, navigation → overview totals complete (and equal to N + the tail's),
// the tab's wasm memory at the end (WebAssembly.Memory buffer), requests and bytes.
// Goals (issue #12): schema <= 1 s, totals complete, wasm memory <= 256 MB.
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(new URL('../../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const BASE = process.env.BASE;
const TABLE = process.env.TABLE; // the name deltalens serve gives it
const FILES = Number(process.env.FILES); // active files expected
const GOALS = process.env.GOALS === '1';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
const page = await browser.newPage();
page.on('dialog', (d) => d.dismiss());
const url = `${BASE}/tables/${TABLE}`;
const t0 = Date.now();
await page.goto(`${BASE}/?table=${encodeURIComponent(url)}&tab=schema`);
await page.waitForSelector('#schema tr[data-path]', { timeout: 120000 });
const schemaMs = Date.now() - t0;
await page.click('#tab-overview');
await page.waitForFunction((n) => {
  const el = document.querySelector('#overview td[data-key="files"]');
  return el && el.innerText === String(n);
}, FILES, { timeout: 600000 });
const totalsMs = Date.now() - t0;
const overviewBytes = await page.evaluate(() => window.deltalensWasmMemory?.buffer.byteLength ?? -1);
// the Files tab: $partitions and the first page of files from one pass over the stream
const t1 = Date.now();
await page.click('#tab-files');
await page.waitForFunction((n) => {
  const el = document.querySelector('#file-page');
  return el && el.innerText.includes(`of ${n}`);
}, FILES, { timeout: 600000 });
const filesMs = Date.now() - t1;
const listed = await page.locator('#file-list tbody tr').count();
assert.equal(listed, Math.min(100, FILES), 'a page of files');
const wasmBytes = await page.evaluate(() => window.deltalensWasmMemory?.buffer.byteLength ?? -1);
const io = await page.locator('#io').innerText().catch(() => '');
console.log(JSON.stringify({ table: TABLE, files: FILES, schema_visible_ms: schemaMs, totals_complete_ms: totalsMs,
  wasm_memory_after_overview_mb: +(overviewBytes / 2 ** 20).toFixed(1), files_tab_ms: filesMs,
  wasm_memory_mb: +(wasmBytes / 2 ** 20).toFixed(1), io }));
await browser.close();
assert.ok(wasmBytes > 0, 'the page exposes its wasm memory');
assert.ok(wasmBytes <= 256 * 2 ** 20, `wasm memory ${wasmBytes} bytes (goal 256 MB)`);
// time depends on the build (release wasm) and the machine: checked on request
if (GOALS) assert.ok(schemaMs <= 1000, `schema visible after ${schemaMs} ms (goal 1 s)`);

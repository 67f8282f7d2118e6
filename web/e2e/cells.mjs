// Every cell of every corpus table in the explorer's grid (headless Chromium, the wasm
// build) equals the CLI's rendering of the same value (`deltalens scan --format tsv`,
// the native build): the same text cells as the aligned table, escaped for TSV; a null
// value is `\N` there and `∅` in the grid. Rows are compared as multisets (the CLI may
// read files in another order). A table the CLI refuses must show an error, no rows. Reads the whole grid by scrolling its window (only the
// rows in view are in the DOM). Prints the count of cells compared.
// EXTRA=dir,dir adds tables outside the corpus (tests/fixtures/codecs: a file per Parquet
// codec). The codec module (web/extras: brotli, zstd) must be fetched by the pages of
// tables with brotli or zstd pages (CODEC_TABLES=name,…) and by no other page.
//
//   BASE=http://127.0.0.1:PORT CORPUS=../shared/conformance DELTALENS_BIN=… node web/e2e/cells.mjs
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';

const require = createRequire(new URL('../../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const { BASE, CORPUS, DELTALENS_BIN } = process.env;
const only = process.env.TABLES ? process.env.TABLES.split(',') : null;
const dirs = new Map(fs.readdirSync(path.join(CORPUS, 'tables')).map((t) => [t, path.join(CORPUS, 'tables', t)]));
for (const d of (process.env.EXTRA || '').split(',').filter(Boolean)) dirs.set(path.basename(d), d);
const tables = [...dirs.keys()].filter((t) => !only || only.includes(t)).sort();
const codecTables = new Set((process.env.CODEC_TABLES || '').split(',').filter(Boolean));
const fetchedCodecs = [];
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });

const esc = (s) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
const tsvRow = (cells) => cells.map((c) => (c === '∅' ? '\\N' : esc(c))).join('\t');

async function gridRows(page) {
  const total = Number(await page.locator('#data-grid').getAttribute('aria-rowcount')) - 1;
  const rows = new Map();
  await page.locator('#data .scroll').evaluate((el) => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); });
  for (let guard = 0; rows.size < total && guard < total + 10; guard++) {
    // (the grid draws the rows for a scroll in a task after it: read after that task)
    const got = await page.evaluate(() => new Promise((resolve) => setTimeout(() => requestAnimationFrame(() => {
      const out = [...document.querySelectorAll('#data-grid .row')].map((tr) => [Number(tr.getAttribute('aria-rowindex')),
        [...tr.children].map((td) => td.textContent)]);
      const el = document.querySelector('#data .scroll');
      el.scrollTop += el.clientHeight;
      el.dispatchEvent(new Event('scroll'));
      resolve(out);
    }), 0)));
    for (const [i, cells] of got) rows.set(i, cells);
  }
  assert.equal(rows.size, total, `read ${rows.size} of ${total} rows from the grid`);
  return [...rows.values()];
}

let cells = 0;
let rowsCompared = 0;
let compared = 0;
const refused = [];
const failures = [];
for (const name of tables) {
  const dir = dirs.get(name);
  let tsv;
  try {
    tsv = execFileSync(DELTALENS_BIN, ['scan', dir, '--format', 'tsv'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
  } catch (e) {
    // the CLI refuses the table (an unsupported feature, a broken log): the page must
    // refuse it too, with an error, not show rows
    refused.push(name);
    const page = await browser.newPage();
    try {
      await page.goto(`${BASE}/?table=${encodeURIComponent(`${BASE}/tables/${name}`)}&tab=data`);
      await page.waitForSelector('#error', { timeout: 60000 });
      assert.equal(await page.locator('#data-grid .row').count(), 0, 'rows shown for a refused table');
    } catch (err) {
      failures.push(name);
      console.log(`FAIL ${name} (refused by the CLI): ${err.message.split('\n')[0]}`);
    } finally {
      await page.close();
    }
    continue;
  }
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let codecFetches = 0;
  page.on('request', (r) => { if (/\/deltalens-codecs-[0-9a-f]+_bg\.wasm$/.test(r.url())) codecFetches++; });
  try {
    const [header, ...lines] = tsv.replace(/\n$/, '').split('\n');
    await page.goto(`${BASE}/?table=${encodeURIComponent(`${BASE}/tables/${name}`)}&tab=data`);
    await page.waitForSelector('#limit', { timeout: 60000 });
    await page.fill('#limit', '100000');
    await page.dispatchEvent('#limit', 'change');
    await page.click('#run');
    await page.waitForFunction(() => {
      const s = document.querySelector('#data-summary')?.innerText || '';
      return /^\d+ rows/.test(s) && !/scroll for more/.test(s) && !document.querySelector('.status .busy');
    }, null, { timeout: 120000 });
    const err = await page.locator('pre.error').count();
    assert.equal(err, 0, err ? await page.locator('pre.error').first().innerText() : '');
    const names = await page.locator('#data-grid .th .name').allTextContents();
    assert.equal(names.map(esc).join('\t'), header, 'column names');
    const grid = (await gridRows(page)).map(tsvRow).sort();
    const cli = [...lines].sort();
    assert.equal(grid.length, cli.length, `${grid.length} rows in the grid, ${cli.length} from the CLI`);
    for (let i = 0; i < cli.length; i++) assert.equal(grid[i], cli[i], `row ${i} (sorted)`);
    // the codec module: fetched once by a table with brotli or zstd pages, never otherwise
    assert.equal(codecFetches, codecTables.has(name) ? 1 : 0, `codec module fetched ${codecFetches} times`);
    if (codecFetches) fetchedCodecs.push(name);
    rowsCompared += cli.length;
    cells += cli.length * names.length;
    compared++;
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e.message.split('\n').slice(0, 6).join('\n')}`);
  } finally {
    await page.close();
  }
}
await browser.close();
console.log(`cells: ${cells} cells in ${rowsCompared} rows of ${compared} corpus tables equal the CLI's rendering (${failures.length} tables differ; ${refused.length} the CLI refuses, and so does the page: ${refused.join(', ') || 'none'})`);
console.log(`codec module (brotli, zstd) fetched by ${fetchedCodecs.length} tables (${fetchedCodecs.join(', ') || 'none'}), by none of the other ${compared - fetchedCodecs.length}`);
process.exit(failures.length ? 1 : 0);

// End-to-end tests of the explorer against `deltalens serve` in Debian's Chromium,
// driven by playwright-core. Expected values come from expect.py (deltalake and the
// conformance corpus), never from deltalens itself. Screenshots of every tab go to
// $ARTIFACTS. Prints budgets: page load → overview, requests/bytes for the first 100 rows.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';

// playwright-core lives with the other npm tools in tools/
const require = createRequire(new URL('../../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const BASE = process.env.BASE;
const EXPECT = JSON.parse(fs.readFileSync(process.env.EXPECT, 'utf8'));
const ART = process.env.ARTIFACTS || 'target/e2e';
fs.mkdirSync(ART, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
let passed = 0;
const failures = [];
const budgets = {};
// the read-only proof (scripts/web-test): every request the pages send to the server, one
// JSON line each ({"method", "target", "status"}: tests/harness/readonly.py reads it);
// `deltalens serve` keeps no access log, so this is the browser's side of the record
const REQUEST_LOG = process.env.REQUEST_LOG ? fs.openSync(process.env.REQUEST_LOG, 'a') : null;
function record(req, status) {
  if (REQUEST_LOG === null || !req.url().startsWith(`${BASE}/`)) return;
  const u = new URL(req.url());
  fs.writeSync(REQUEST_LOG, JSON.stringify({ method: req.method(), target: u.pathname + u.search, status }) + '\n');
}

async function check(name, fn) {
  // ONLY=<text>: run only the checks whose name holds it (while working on one)
  if (process.env.ONLY && !name.includes(process.env.ONLY)) return;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('pageerror', (e) => dialogs.push('pageerror: ' + e.message));
  page.on('requestfinished', async (r) => {
    let status = 0;
    try { status = (await r.response())?.status() ?? 0; } catch { /* the page closed */ }
    record(r, status);
  });
  page.on('requestfailed', (r) => record(r, 0));
  try {
    await fn(page, dialogs);
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e.stack || e}`);
    await page.screenshot({ path: `${ART}/FAILED-${name.replace(/\W+/g, '_')}.png`, fullPage: true }).catch(() => {});
  } finally {
    await page.close();
  }
}

const tableUrl = (name) => `${BASE}/tables/${name}`;
const open = (page, name, extra = '') => page.goto(`${BASE}/?table=${encodeURIComponent(tableUrl(name))}${extra}`);
const text = (page, sel) => page.locator(sel).first().innerText({ timeout: 30000 });
async function idle(page) {
  // nothing running: the status line has no busy marker
  await page.waitForFunction(() => !document.querySelector('.status .busy'), null, { timeout: 60000 });
}
async function tab(page, name) {
  await page.click(`#tab-${name}`);
  await idle(page);
}
async function waitText(page, sel, re) {
  await page.waitForFunction(([s, r]) => {
    const el = document.querySelector(s);
    return el && new RegExp(r).test(el.innerText);
  }, [sel, re.source], { timeout: 60000 });
}

const demo = EXPECT.demo;
// counts as the overview shows them: digits grouped by thousands from five digits on
const grouped = (n) => (String(n).length >= 5 ? Number(n).toLocaleString('en-US') : String(n));

await check('demo: overview', async (page) => {
  const t0 = Date.now();
  await open(page, 'demo');
  await waitText(page, '#overview td[data-key="version"]', new RegExp(`^${demo.version}$`));
  budgets.load_to_overview_ms = Date.now() - t0;
  budgets.load_to_overview_in_page_ms = await page.evaluate(() => Math.round(performance.now()));
  // the version shows at once, its file totals when they have streamed in
  await waitText(page, '#overview td[data-key="files"]', new RegExp(`^${grouped(demo.files)}$`));
  assert.equal(await text(page, '#overview td[data-key="rows"]'), grouped(demo.rows_latest));
  assert.equal(await text(page, '#overview td[data-key="partition columns"]'), 'event_date');
  assert.match(await text(page, '#properties'), /delta\.enableChangeDataFeed\s+true/);
  assert.match(await text(page, '#overview td[data-key="commit time"]'), /^\d{4}-\d\d-\d\d/);
  // cards at a glance
  assert.equal(await text(page, '#card-version .value'), String(demo.version));
  assert.equal(await text(page, '#card-files .value'), grouped(demo.files));
  assert.equal(await text(page, '#card-rows .value'), grouped(demo.rows_latest));
  assert.match(await text(page, '#card-commit .value'), / ago$/);
  // the health report equals `deltalens health --json` of the same table: every finding's
  // severity and summary (those with an age aside: the clocks differ), the histogram, the
  // partitions
  await page.waitForSelector('#health li.finding', { timeout: 60000 });
  const cli = JSON.parse(execFileSync(process.env.DELTALENS_BIN, ['health', `${process.env.FIXTURES}/demo`, '--json']).toString());
  const shown = await page.locator('#health li.finding').evaluateAll((lis) => lis.map((li) => ({
    id: li.dataset.id, severity: li.querySelector('.badge').innerText.toLowerCase(), summary: li.querySelector('summary').innerText })));
  assert.deepEqual(shown.map((f) => f.id), cli.findings.map((f) => f.id));
  let compared = 0;
  for (const [i, f] of cli.findings.entries()) {
    assert.equal(shown[i].severity, f.severity, f.id);
    if (/ ago/.test(f.summary)) continue;
    assert.ok(shown[i].summary.endsWith(`${f.title}: ${f.summary}`), `${f.id}: ${shown[i].summary} vs ${f.summary}`);
    compared++;
  }
  assert.ok(compared >= 5, `${compared} findings compared`);
  const buckets = await page.locator('#chart-file-sizes li .label').allInnerTexts();
  assert.deepEqual(buckets, cli.size_histogram.map((b) => b.label));
  const parts = await page.locator('#chart-partitions li .label').allInnerTexts();
  assert.deepEqual(parts, cli.partitions.top.map((p) => p.partition));
  // a finding opens on what it means and the usual remedy
  await page.click('#health li[data-id="small_files"] summary');
  assert.match(await text(page, '#health li[data-id="small_files"]'), /Usual remedy: .*OPTIMIZE/);
  // health over history, on demand: the same points as `deltalens health --series 8`
  await page.click('#read-health-series');
  await page.waitForSelector('#health-series-table tbody tr', { timeout: 60000 });
  const series = JSON.parse(execFileSync(process.env.DELTALENS_BIN, ['health', `${process.env.FIXTURES}/demo`, '--series', '8', '--json']).toString());
  const seriesRows = await page.locator('#health-series-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText)));
  assert.ok(series.points.length >= 2, `${series.points.length} points`);
  assert.deepEqual(seriesRows.map((r) => r[0]), series.points.map((p) => String(p.version)));
  assert.deepEqual(seriesRows.map((r) => r[1]), series.points.map((p) => grouped(p.files)));
  assert.deepEqual(seriesRows.map((r) => r[8]), series.points.map((p) => grouped(p.tombstones)));
  assert.equal(await page.locator('#chart-series-files svg rect').count(), series.points.length);
  await page.screenshot({ path: `${ART}/demo-overview.png`, fullPage: true });
});

await check('demo: schema', async (page) => {
  await open(page, 'demo', '&tab=schema');
  await idle(page);
  await page.waitForSelector('#schema tbody tr');
  const names = await page.locator('#schema tbody tr[data-path] .field').allInnerTexts();
  assert.deepEqual(names, demo.columns);
  const part = await page.locator('#schema tr[data-path="event_date"]').innerText();
  assert.match(part, /partition/);
  assert.match(await page.locator('#schema tr[data-path="price"]').innerText(), /decimal\(5,2\)\s+Decimal128\(5, 2\)/);
  // schema change since version 4: the referrer column
  await page.fill('#schema-compare', '4');
  await page.press('#schema-compare', 'Enter');
  await waitText(page, '#schema-changes', /referrer\s+added/);
  await page.screenshot({ path: `${ART}/demo-schema.png`, fullPage: true });
});

await check('demo: history and time travel by click', async (page) => {
  await open(page, 'demo', '&tab=history');
  await page.waitForSelector('#history-table tbody tr');
  await idle(page);
  const ops = await page.locator('#history-table tbody td.op').allInnerTexts();
  assert.deepEqual(ops, demo.operations);
  assert.equal(await page.locator('#chart-files rect').count(), demo.operations.length);
  const heights = await page.locator('#chart-rows rect').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('height'))));
  assert.ok(heights.filter((h) => h > 0).length >= demo.operations.length - 1, `row bars ${heights}`);
  await page.screenshot({ path: `${ART}/demo-history.png`, fullPage: true });
  // click version 1: time travel
  await page.locator('#history-table button.version', { hasText: /^1$/ }).click();
  await waitText(page, '#overview td[data-key="version"]', /^1$/);
  await waitText(page, '#overview td[data-key="rows"]', new RegExp(`^${grouped(demo.rows_v1)}$`));
  assert.match(page.url(), /version=1/);
});

await check('demo: data, time travel, filter, first 100 rows', async (page) => {
  // the writer module (Parquet downloads) is fetched on the first Parquet download only
  let writerFetches = 0;
  page.on('request', (r) => { if (/\/deltalens-extras-[0-9a-f]+_bg\.wasm$/.test(r.url())) writerFetches++; });
  await open(page, 'demo', '&tab=data');
  await waitText(page, '#data-summary', /^100 rows/);
  const s = await text(page, '#data-summary');
  const m = s.match(/(\d+) requests, (\d+) bytes/);
  budgets.first_100_rows = { requests: Number(m[1]), bytes: Number(m[2]) };
  // everything since the page loaded: opening the table (no listing over HTTP) + the rows
  budgets.page_load_to_100_rows = await text(page, '#io');
  // a windowed grid: 100 rows loaded, only those in view (and a margin) in the DOM
  assert.equal(await page.locator('#data-grid').getAttribute('aria-rowcount'), '101');
  const domRows = await page.locator('#data-grid .row').count();
  assert.ok(domRows >= 10 && domRows < 100, `${domRows} rows in the DOM`);
  const headers = await page.locator('#data-grid .th .name').allInnerTexts();
  assert.deepEqual(headers, demo.columns);
  // headers: the Delta type, nulls and the range of the loaded rows
  const ti0 = demo.columns.indexOf('event_time');
  assert.equal(await page.locator(`#data-grid .th:nth-child(${ti0 + 1}) .type`).innerText(), 'timestamp');
  assert.match(await page.locator(`#data-grid .th:nth-child(${ti0 + 1}) .stats`).innerText(), /^0 nulls · \d{4}-.* … \d{4}-/);
  await page.screenshot({ path: `${ART}/demo-data.png`, fullPage: true });
  // scrolling to the bottom loads the next page, appended
  await page.locator('#data .scroll').evaluate((el) => { el.scrollTop = el.scrollHeight; el.dispatchEvent(new Event('scroll')); });
  await page.waitForFunction(() => parseInt(document.querySelector('#data-summary').innerText, 10) > 100, null, { timeout: 30000 });
  await idle(page);
  const loadedRows = parseInt(await text(page, '#data-summary'), 10);
  assert.equal(await page.locator('#data-grid').getAttribute('aria-rowcount'), String(loadedRows + 1));
  assert.ok(await page.locator('#data-grid .row').count() < 100, 'still windowed');
  // sort the loaded rows by a column, both ways
  const idCol = demo.columns.indexOf('event_time') + 1;
  await page.click(`#data-grid .th:nth-child(${idCol}) button.sort`);
  await page.locator('#data .scroll').evaluate((el) => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); });
  // (rows are drawn in a task after the scroll)
  await page.waitForFunction(() => document.querySelector('#data-grid .row')?.getAttribute('aria-rowindex') === '2');
  assert.equal(await page.locator(`#data-grid .th:nth-child(${idCol})`).getAttribute('aria-sort'), 'ascending');
  const asc = await page.locator(`#data-grid .row > :nth-child(${idCol})`).allInnerTexts();
  assert.deepEqual(asc, [...asc].sort(), 'ascending event_time');
  await page.click(`#data-grid .th:nth-child(${idCol}) button.sort`);
  const desc = await page.locator(`#data-grid .row > :nth-child(${idCol})`).allInnerTexts();
  assert.deepEqual(desc, [...desc].sort().reverse(), 'descending event_time');
  await page.click(`#data-grid .th:nth-child(${idCol}) button.sort`);
  // copy a cell and its row as JSON
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.locator(`#data-grid .row >> nth=0 >> [role=gridcell] >> nth=${idCol - 1}`).click();
  await page.click('#copy-row');
  await waitText(page, '#copy-said', /copied the row/);
  const row = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.deepEqual(Object.keys(row), demo.columns);
  await page.click('#copy-cell');
  await waitText(page, '#copy-said', /copied the cell/);
  assert.equal(JSON.parse(await page.evaluate(() => navigator.clipboard.readText())), row.event_time);
  // the selection is drawn on the one cell selected, follows the arrow keys, and holds
  // when its row scrolls out of the window and back (the row is drawn again)
  const marked = () => page.evaluate(() => [...document.querySelectorAll('#data-grid .selected, #data-grid [aria-selected]')]
    .map((td) => `${td.parentElement.getAttribute('aria-rowindex')}:${td.dataset.c}:${td.getAttribute('aria-selected')}`));
  assert.deepEqual(await marked(), [`2:${idCol - 1}:true`]);
  await page.focus('#data .scroll');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await marked(), [`3:${idCol}:true`]);
  await page.locator('#data .scroll').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.waitForFunction(() => !document.querySelector('#data-grid .row[aria-rowindex="3"]'));
  assert.deepEqual(await marked(), []);
  await page.locator('#data .scroll').evaluate((el) => { el.scrollTop = 0; });
  await page.waitForFunction(() => document.querySelector('#data-grid .row[aria-rowindex="3"]'));
  assert.deepEqual(await marked(), [`3:${idCol}:true`]);
  // downloads of the current result
  for (const [label, check] of [
    ['CSV', (buf) => assert.equal(buf.toString('utf8').trim().split('\n').length, loadedRows + 1)],
    // written by the writer module (fetched now, not before), read back by pyarrow
    ['Parquet', (buf) => {
      assert.equal(buf.subarray(0, 4).toString(), 'PAR1');
      const f = `${ART}/download.parquet`;
      fs.writeFileSync(f, buf);
      const n = execFileSync('python3', ['-c', 'import sys, pyarrow.parquet as pq; print(pq.read_table(sys.argv[1]).num_rows)', f]).toString().trim();
      assert.equal(Number(n), loadedRows);
      assert.equal(writerFetches, 1, 'the writer module is fetched once');
    }],
    // an Arrow IPC stream (as the CLI and the worker write): a continuation marker, then
    // the schema message; not the file format's `ARROW1` magic
    ['Arrow', (buf) => assert.equal(buf.readUInt32LE(0), 0xffffffff)],
  ]) {
    if (label === 'Parquet') assert.equal(writerFetches, 0, 'the writer module was fetched before a Parquet download needed it');
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`.downloads button:has-text("${label}")`)]);
    const chunks = [];
    for await (const c of await dl.createReadStream()) chunks.push(c);
    check(Buffer.concat(chunks));
    const ext = { CSV: '.csv', Parquet: '.parquet', Arrow: '.arrows' }[label];
    assert.ok(dl.suggestedFilename().endsWith(ext), dl.suggestedFilename());
  }
  // timestamps (UTC) read as the CLI prints them, not blank cells
  const ti = demo.columns.indexOf('event_time');
  assert.ok(ti >= 0, `the demo table has an event_time column: ${demo.columns}`);
  const cell = await page.locator(`#data-grid .row >> nth=0 >> [role=gridcell] >> nth=${ti}`).innerText();
  assert.match(cell, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/, `event_time cell ${JSON.stringify(cell)}`);
  // all rows, then at version 1 (the slider), then filtered
  await page.fill('#limit', '10000');
  await page.dispatchEvent('#limit', 'change');
  await page.click('#run');
  await waitText(page, '#data-summary', new RegExp(`^${demo.rows_latest} rows`));
  await page.locator('#version-slider').evaluate((el) => { el.value = '1'; el.dispatchEvent(new Event('change', { bubbles: true })); });
  await waitText(page, '#version', /^1$/);
  await waitText(page, '#data-summary', new RegExp(`^${demo.rows_v1} rows`));
  await page.click('button:has-text("Latest")');
  await waitText(page, '#version', new RegExp(`^${demo.version}$`));
  await page.fill('#filter', "event_date = '2019-10-01'");
  await page.click('#run');
  await waitText(page, '#data-summary', new RegExp(`^${demo.filtered_rows} rows`));
  const dates = new Set(await page.locator('#data-grid .row > :nth-child(10)').allInnerTexts());
  assert.deepEqual([...dates], ['2019-10-01']);
  // TIMESTAMP AS OF a date before the table existed: a readable error
  await page.fill('#timestamp', '2001-01-01');
  await page.press('#timestamp', 'Enter');
  await page.waitForSelector('#error');
  assert.match(await text(page, '#error'), /before|earliest|range/i);
});

await check('demo: change data feed', async (page) => {
  await open(page, 'demo', '&tab=changes');
  await idle(page);
  await page.fill('#changes-from', '1');
  await page.fill('#changes-to', String(demo.version));
  await page.click('#changes-run');
  await page.waitForSelector('#changes-grid');
  await idle(page);
  for (const [type, n] of Object.entries(demo.cdf_1_latest)) {
    assert.equal(await text(page, `#changes-counts span[data-type="${type}"]`), String(n), type);
  }
  // update pre-/post-images are paired: each preimage row is followed by its postimage
  const types = await page.locator('#changes-grid tbody tr').evaluateAll((rows) => rows.map((r) => r.className));
  for (let i = 0; i < types.length; i++) {
    if (types[i] === 'update_preimage') assert.equal(types[i + 1], 'update_postimage', `row ${i}`);
  }
  assert.ok(await page.locator('#chart-changes rect').count() >= 1);
  await page.screenshot({ path: `${ART}/demo-changes.png`, fullPage: true });
});

await check('demo: diff', async (page) => {
  await open(page, 'demo', '&tab=diff');
  await idle(page);
  await page.fill('#diff-a', '0');
  await page.fill('#diff-b', String(demo.version));
  await page.click('#diff-run');
  await page.waitForSelector('#diff-added');
  await idle(page);
  assert.match(await text(page, '#diff-schema'), /referrer\s+added/);
  assert.ok(await page.locator('#diff-added tr').count() >= 1);
  await page.screenshot({ path: `${ART}/demo-diff.png`, fullPage: true });
});

await check('demo: files and $partitions', async (page) => {
  await open(page, 'demo', '&tab=files');
  await page.waitForSelector('#partitions tbody tr');
  assert.equal(await page.locator('#partitions tbody tr').count(), demo.partitions);
  assert.equal(await page.locator('#file-list tbody tr').count(), demo.files);
  await page.screenshot({ path: `${ART}/demo-files.png`, fullPage: true });
});

for (const c of EXPECT.conformance) {
  await check(`conformance ${c.name}`, async (page) => {
    await open(page, c.name, '&tab=data');
    await waitText(page, '#version', new RegExp(`^${c.version}$`));
    await waitText(page, '#data-summary', new RegExp(`^${c.rows} rows`));
    if (!c.cdf) {
      // no change data feed: the Changes tab falls back to the row-level diff
      await tab(page, 'changes');
      await page.fill('#changes-from', '1');
      await page.fill('#changes-to', String(c.version));
      await page.click('#changes-run');
      await page.waitForSelector('#changes-grid');
      await idle(page);
      assert.match(await text(page, '#changes-note'), /row-level diff/);
    }
    if (c.cdf) {
      await tab(page, 'changes');
      await page.fill('#changes-from', String(c.cdf.from));
      await page.fill('#changes-to', String(c.cdf.to));
      await page.click('#changes-run');
      await page.waitForSelector('#changes-grid');
      await idle(page);
      for (const [type, n] of Object.entries(c.cdf.totals)) {
        assert.equal(await text(page, `#changes-counts span[data-type="${type}"]`), String(n), type);
      }
    }
    await page.screenshot({ path: `${ART}/${c.name}.png`, fullPage: true });
  });
}

if (process.env.LIVE_TABLE_DIR) {
  await check('live: following the table shows new commits without reload', async (page) => {
    const { execFileSync } = await import('node:child_process');
    await open(page, 'demo_live', '&tab=history');
    await page.waitForSelector('#history-table tbody tr');
    await idle(page);
    const before = await page.locator('#history-table tbody tr').count();
    await page.check('#follow');
    await page.fill('.versionbar input.num', '1');
    await page.dispatchEvent('.versionbar input.num', 'change');
    // another writer commits (deltalake appends to this test's own copy of the table)
    execFileSync('python3', ['-c', `
import pyarrow as pa, sys
from deltalake import DeltaTable, write_deltalake
dt = DeltaTable(sys.argv[1])
t = dt.to_pyarrow_dataset().head(3)
write_deltalake(sys.argv[1], t, mode="append")
`, process.env.LIVE_TABLE_DIR]);
    await waitText(page, '.versionbar', new RegExp(` of ${demo.version + 1}`));
    await page.waitForFunction((n) => document.querySelectorAll('#history-table tbody tr').length === n, before + 1, { timeout: 60000 });
    assert.equal(await text(page, '#history-table tbody tr td.op'), 'WRITE');
    await page.screenshot({ path: `${ART}/live.png`, fullPage: true });
  });
}

await check('a bad URL shows a readable error', async (page) => {
  await page.goto(`${BASE}/`);
  await page.fill('#table-url', `${BASE}/tables/no-such-table`);
  await page.click('#open');
  await page.waitForSelector('#error', { timeout: 60000 });
  const e = await text(page, '#error');
  assert.match(e, /no Delta table found/);
  assert.match(e, /table root/);
  await page.fill('#table-url', 'ftp://example.com/t');
  await page.click('#open');
  await waitText(page, '#error', /the scheme ftp:\/\/ is not supported/);
  await page.screenshot({ path: `${ART}/error.png`, fullPage: true });
});

await check('HTML in column names and values renders as text', async (page, dialogs) => {
  await open(page, 'xss', '&tab=data');
  await waitText(page, '#data-summary', /^2 rows/);
  const headers = await page.locator('#data-grid .th .name').allInnerTexts();
  assert.deepEqual(headers, ['<img src=x onerror=alert(1)>', 'name']);
  const cells = await page.locator('#data-grid [role=gridcell]').allInnerTexts();
  assert.ok(cells.includes("<script>alert('xss')</script>"), cells.join('|'));
  assert.equal(await page.locator('#data-grid img, #data-grid script, #data-grid b').count(), 0);
  await tab(page, 'schema');
  assert.equal(await page.locator('main img').count(), 0);
  assert.deepEqual(dialogs, []);
  await page.screenshot({ path: `${ART}/xss.png`, fullPage: true });
});

await check('credentials never reach the page URL', async (page) => {
  await page.goto(`${BASE}/`);
  await page.click('details.options summary');
  await page.fill('#s3-key', 'AKIAEXAMPLEKEY');
  await page.fill('#s3-secret', 'super-secret-value');
  await page.fill('#table-url', tableUrl('demo'));
  await page.click('#open');
  await waitText(page, '#overview td[data-key="version"]', new RegExp(`^${demo.version}$`));
  assert.ok(!page.url().includes('super-secret'), page.url());
  const stored = await page.evaluate(() => JSON.stringify(localStorage));
  assert.ok(!stored.includes('super-secret'), 'stored without "remember"');
});

await check('a shared link opens without remembered credentials that are not for its origin', async (page) => {
  await page.goto(`${BASE}/`);
  await page.click('details.options summary');
  await page.fill('#azure-sas', 'sv=1&sig=remembered-secret');
  await page.check('details.options input[type=checkbox] >> nth=-1');
  await page.fill('#table-url', tableUrl('demo'));
  await page.click('#open');
  await waitText(page, '#overview td[data-key="version"]', new RegExp(`^${demo.version}$`));
  // an https table takes no SAS: it stays bound to nothing (the form says so)
  assert.match(await text(page, '#azure-bound'), /next Open/);
  await page.waitForSelector('#health li.finding', { timeout: 60000 });
  const requests = [];
  page.on('request', (r) => requests.push(r.url() + JSON.stringify(r.headers())));
  await open(page, 'demo');
  await waitText(page, '#overview td[data-key="version"]', new RegExp(`^${demo.version}$`));
  assert.equal(await page.locator('#confirm-open').count(), 0, 'asked for a secret that would not go');
  assert.ok(!requests.some((u) => u.includes('remembered-secret')), requests.join(' '));
  await page.evaluate(() => localStorage.clear());
});

// The Query tab: run `sql` as the user does and wait for its result (the summary names the
// SQL it is of) or its error.
async function runQuery(page, sql) {
  await page.fill('#sql', sql);
  await page.click('#run-query');
  await page.waitForFunction((q) => ['#query-summary', '#query-error'].some((s) => document.querySelector(s)?.dataset.sql === q), sql, { timeout: 120000 });
  const err = await page.locator('#query-error').count();
  return err ? { error: await text(page, '#query-error') } : {
    summary: await text(page, '#query-summary'),
    head: await page.locator('#query-grid thead th').allInnerTexts(),
    rows: await page.locator('#query-grid tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText))),
  };
}

// `deltalens query --format tsv` of `sql` with the served table's URL `url` read from the
// local directory `local`, as the grid shows it (nulls as ∅).
function cliQuery(sql, url, local) {
  const out = execFileSync(process.env.DELTALENS_BIN, ['query', sql.split(url).join(local), '--format', 'tsv']).toString();
  const [head, ...rows] = out.split('\n').filter((l) => l.length);
  return { head: head.split('\t'), rows: rows.map((r) => r.split('\t').map((c) => (c === '\\N' ? '∅' : c))) };
}

// The Query tab: the SQL of `deltalens query` in the query module's Web Worker (fetched on
// the first query, never on the first load), equal to the CLI's answers; a chart of a
// grouped result; the query in the URL (Back, Forward, a shared link); the open table
// only; budgets that stop a query with their names.
await check('demo: query tab (Web Worker, equal to deltalens query, chart, URL, budgets)', async (page) => {
  const url = tableUrl('demo');
  const local = `${process.env.FIXTURES}/demo`;
  await open(page, 'demo', '&tab=query');
  await idle(page);
  await page.waitForSelector('#sql');
  assert.equal(await page.inputValue('#sql'), `SELECT * FROM '${url}' LIMIT 100`);
  const fetched = () => page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /deltalens-query-|query-worker-/.test(n)));
  assert.deepEqual(await fetched(), [], 'the query module was fetched before any query');
  const run = (sql) => runQuery(page, sql);
  const cli = (sql) => cliQuery(sql, url, local);
  const cases = [
    `SELECT event_type, COUNT(*) AS n, SUM(price) AS total FROM '${url}' GROUP BY event_type ORDER BY event_type`,
    `SELECT brand, MAX(price) AS top FROM '${url}' WHERE price > 10 GROUP BY brand ORDER BY top DESC, brand LIMIT 5`,
    `SELECT COUNT(*) AS n FROM '${url}' VERSION AS OF 2`,
    `SELECT event_date, AVG(price) AS avg_price, MIN(price) AS lo FROM '${url}' GROUP BY event_date ORDER BY event_date`,
    `SELECT _change_type, COUNT(*) AS n FROM table_changes('${url}', 0) GROUP BY _change_type ORDER BY _change_type`,
    `SELECT product_id, price FROM '${url}' WHERE brand = 'nars' ORDER BY product_id, price LIMIT 7`,
  ];
  for (const sql of cases) {
    const got = await run(sql);
    assert.ok(!got.error, `${sql}: ${got.error}`);
    const want = cli(sql);
    assert.deepEqual(got.head, want.head, sql);
    assert.deepEqual(got.rows, want.rows, sql);
    assert.match(got.summary, new RegExp(`^${want.rows.length} rows`), sql);
  }
  // one worker ran every query, started from the page's own origin
  const workers = page.workers().map((w) => w.url());
  assert.equal(workers.length, 1, workers.join(' '));
  assert.ok(workers[0].startsWith(`${BASE}/query-worker-`), workers[0]);
  // the grouped result charts: bars by default, a line on demand, the columns chosen
  const grouped = await run(cases[0]);
  assert.equal(await page.locator('#query-chart svg rect').count(), grouped.rows.length);
  assert.match(await page.locator('#query-chart svg').getAttribute('aria-label'), /total by event_type/);
  await page.selectOption('#chart-y', { label: 'n' });
  assert.match(await page.locator('#query-chart svg').getAttribute('aria-label'), /n by event_type/);
  await page.check('#chart-line');
  assert.equal(await page.locator('#query-chart polyline').count(), 1);
  assert.equal(await page.locator('#query-chart circle').count(), grouped.rows.length);
  await page.screenshot({ path: `${ART}/demo-query.png`, fullPage: true });
  // downloads of the whole result: the CLI's CSV byte for byte; Parquet (the page's writer
  // module, from the worker's Arrow stream) read back by pyarrow
  const save = async (label) => {
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 60000 }), page.click(`#query .downloads button:text-is("${label}")`)]);
    const chunks = [];
    for await (const c of await dl.createReadStream()) chunks.push(c);
    return Buffer.concat(chunks);
  };
  const csv = (await save('CSV')).toString('utf8');
  assert.equal(csv, execFileSync(process.env.DELTALENS_BIN, ['query', cases[0].split(url).join(local), '--format', 'csv']).toString());
  const pq = `${ART}/query.parquet`;
  fs.writeFileSync(pq, await save('Parquet'));
  const pqRows = execFileSync('python3', ['-c', 'import sys, pyarrow.parquet as pq; print(pq.read_table(sys.argv[1]).num_rows)', pq]).toString().trim();
  assert.equal(Number(pqRows), grouped.rows.length);
  // the query is in the URL: Back shows the one before, Forward this one again
  assert.ok(new URL(page.url()).searchParams.get('q') === cases[0], page.url());
  await run(cases[2]);
  await page.goBack();
  await page.waitForFunction((q) => document.querySelector('#query-summary')?.dataset.sql === q, cases[0], { timeout: 60000 });
  await page.goForward();
  await page.waitForFunction((q) => document.querySelector('#query-summary')?.dataset.sql === q, cases[2], { timeout: 60000 });
  // a shared link runs its query on the table it opens
  await open(page, 'demo', `&tab=query&q=${encodeURIComponent(cases[1])}`);
  await page.waitForFunction((q) => document.querySelector('#query-summary')?.dataset.sql === q, cases[1], { timeout: 60000 });
  assert.deepEqual(await page.locator('#query-grid tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText))), cli(cases[1]).rows);
  // the open table only: SQL naming another table (or host) is refused before it is opened
  const other = await run(`SELECT * FROM 'http://127.0.0.1:9/elsewhere'`);
  assert.match(other.error, /the Query tab reads the open table only/);
  // budgets: each hit stops the query with an error naming it
  await page.click('details.budgets summary');
  await page.fill('#budget-max_rows', '10');
  await page.dispatchEvent('#budget-max_rows', 'change');
  const rows = await run(`SELECT * FROM '${url}'`);
  assert.match(rows.error, /10/, rows.error);
  assert.match(rows.error, /row/i, rows.error);
  await page.fill('#budget-max_rows', '100000');
  await page.dispatchEvent('#budget-max_rows', 'change');
  await page.fill('#budget-max_requests', '1');
  await page.dispatchEvent('#budget-max_requests', 'change');
  const reqs = await run(`SELECT COUNT(*) FROM '${url}' VERSION AS OF 1`);
  assert.match(reqs.error, /request/i, reqs.error);
  // a budget is never raised past the tab's own
  await page.fill('#budget-max_millis', '999999999');
  await page.dispatchEvent('#budget-max_millis', 'change');
  assert.equal(await page.inputValue('#budget-max_millis'), '300000');
});

// The pool: with 4 cores (pinned), a grouped query over a 39 MB table (bench/pool_table.py)
// is planned by the query worker, read in 4 splits by 4 workers it starts, and merged by
// the fan-out's code; equal to the CLI's answer, each worker's busy time reported.
await check('pool: queries over a 39 MB table read in splits by 4 workers, equal to deltalens query', async (page) => {
  assert.ok(process.env.POOL_TABLE, 'POOL_TABLE (bench/pool_table.py) is not set');
  await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 4 }));
  const url = tableUrl('pool');
  await open(page, 'pool', '&tab=query');
  await idle(page);
  await page.waitForSelector('#sql');
  for (const sql of [
    `SELECT category, COUNT(*) AS n, SUM(price) AS s, AVG(price) AS a, MIN(price) AS lo, MAX(id) AS hi FROM '${url}' GROUP BY category ORDER BY category`,
    `SELECT id, price FROM '${url}' WHERE price > 999.9 ORDER BY price DESC, id LIMIT 5`,
    `SELECT COUNT(*) AS n FROM '${url}' WHERE category = 'c3'`,
  ]) {
    const got = await runQuery(page, sql);
    assert.ok(!got.error, `${sql}: ${got.error}`);
    const want = cliQuery(sql, url, process.env.POOL_TABLE);
    assert.deepEqual(got.head, want.head, sql);
    // sums and averages of doubles merged from partial sums may differ in the last digits
    const close = (a, b) => a === b || Math.abs(Number(a) - Number(b)) <= 1e-9 * Math.max(1, Math.abs(Number(b)));
    assert.equal(got.rows.length, want.rows.length, sql);
    got.rows.forEach((r, i) => r.forEach((c, j) => assert.ok(close(c, want.rows[i][j]), `${sql}: row ${i} column ${j}: ${c} vs ${want.rows[i][j]}`)));
    const m = got.summary.match(/read in (\d+) splits by (\d+) workers \(busy ([^)]*)\)/);
    assert.ok(m, got.summary);
    assert.equal(Number(m[1]), 4, got.summary);
    assert.equal(Number(m[2]), 4, got.summary);
    const busy = m[3].split(', ').map((b) => Number(b.replace(' ms', '')));
    assert.ok(busy.every((b) => b > 0), `a worker of the pool was never busy: ${m[3]}`);
    console.log(`  pool: ${got.summary}`);
  }
  // the coordinator and the 4 workers of its pool
  assert.equal(page.workers().length, 5, page.workers().map((w) => w.url()).join(' '));
});

await browser.close();
console.log(`explorer e2e: ${passed} passed, ${failures.length} failed`);
console.log(`budgets: ${JSON.stringify(budgets)}`);
fs.writeFileSync(`${ART}/budgets.json`, JSON.stringify(budgets, null, 1));
process.exit(failures.length ? 1 : 0);

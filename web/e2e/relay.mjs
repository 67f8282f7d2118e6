// The explorer on private tables through `deltalens serve`'s relay (headless Chromium).
//
// One `deltalens serve` holds each table three ways: the local directory (/tables/NAME,
// read directly by the tab), a private moto bucket and a private azurite container (no
// CORS rule, credentials only in the server's environment) relayed with `via=/`. Every tab
// of every table, the Query tab's answers included, must read the same through the relay
// (and through the edge worker, with WORKER) as directly; no request of the page
// may go anywhere but the server, none may carry a credential, and nothing the page stores
// may hold one. A direct open of the private bucket fails in the tab (no CORS rule): the
// relay is what makes it readable.
//
//   BASE=http://127.0.0.1:P TABLES=demo,kr_cdf-table-with-dv SECRETS=key,secret,sig \
//     S3_URL=s3://private/tables AZ_URL=az://private/tables MOTO=http://127.0.0.1:Q node relay.mjs
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const BASE = process.env.BASE;
const TABLES = process.env.TABLES.split(',');
const SECRETS = process.env.SECRETS.split(',').filter((s) => s.length >= 6);
const STORES = { s3: process.env.S3_URL, azure: process.env.AZ_URL, uc: process.env.UC_URL };
// a store's table URL: a path under a bucket root, or a name in a catalog schema
const tableAt = (store, name) => (store === 'uc' ? `${STORES.uc}.${name.replaceAll('-', '_')}` : `${STORES[store]}/${name}`);
const ART = process.env.ARTIFACTS || 'target/e2e';
const WORKER = process.env.WORKER;
const WORKER_TOKEN = process.env.WORKER_TOKEN;
const TABS = ['overview', 'schema', 'history', 'data', 'changes', 'diff', 'files'];
// every tab above, and the Query tab's answers (its Web Worker reads through the same relay)
const COMPARED = [...TABS, 'query'];
fs.mkdirSync(ART, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
let passed = 0;
const failures = [];
const requests = [];

async function check(name, fn) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('request', (r) => requests.push({ url: r.url(), headers: r.headers(), method: r.method() }));
  try {
    await fn(page);
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e.stack || e}`);
    await page.screenshot({ path: `${ART}/FAILED-relay-${name.replace(/\W+/g, '_')}.png`, fullPage: true }).catch(() => {});
  } finally {
    await page.close();
  }
}

async function idle(page) {
  await page.waitForFunction(() => !document.querySelector('.status .busy'), null, { timeout: 60000 });
  // totals and $partitions stream in after the overview
  await page.waitForFunction(() => !/counting/i.test(document.querySelector('main')?.innerText || ''), null, { timeout: 60000 });
}

// what a tab says, with the table's own URL (which differs by design) taken out
async function tabText(page, tab, url) {
  await page.click(`#tab-${tab}`);
  await idle(page);
  if (tab === 'changes') { await page.click('#changes-run'); await idle(page); }
  if (tab === 'diff') { await page.click('#diff-run'); await idle(page); }
  // history loads beside the rest, without the busy marker: every table has a commit
  if (tab === 'history') await page.waitForFunction(() => document.querySelectorAll('#history-table tr').length > 1, null, { timeout: 60000 });
  const text = await page.locator('main').innerText({ timeout: 30000 });
  return text.split(url).join('TABLE');
}

// open `url` in the page (through `via` with `token`), waiting for nothing
async function openTable(page, url, via, token) {
  if (token) {
    // a relay that needs a token: typed into the form (a link never carries one)
    await page.goto(`${BASE}/`);
    await page.fill('#table-url', url);
    await page.click('details.options summary');
    await page.fill('#relay', via);
    await page.fill('#relay-token', token);
    await page.click('#open');
  } else {
    const q = new URLSearchParams({ table: url });
    if (via) q.set('via', via);
    await page.goto(`${BASE}/?${q}`);
  }
}

// The Query tab's answers to a few questions any table can be asked, as the grid shows
// them: run in the query module's Web Worker, which reads through the page's relay.
async function queryText(page, url) {
  await page.click('#tab-query');
  await page.waitForSelector('#sql', { timeout: 60000 });
  const out = [];
  for (const sql of [`SELECT COUNT(*) AS n FROM '${url}'`, `SELECT * FROM '${url}' LIMIT 20`]) {
    await page.fill('#sql', sql);
    await page.click('#run-query');
    await page.waitForFunction((q) => ['#query-summary', '#query-error'].some((s) => document.querySelector(s)?.dataset.sql === q), sql, { timeout: 120000 });
    if (await page.locator('#query-error').count()) {
      throw new Error(`query tab: ${sql}: ${await page.locator('#query-error').innerText()}`);
    }
    const head = await page.locator('#query-grid thead th').allInnerTexts();
    const rows = await page.locator('#query-grid tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.innerText).join('\t')));
    // an empty grid would compare equal to another empty grid: every table here has rows
    if (!head.length || !rows.length || (sql.includes('COUNT') && !(Number(rows[0]) > 0))) {
      throw new Error(`query tab: ${sql}: no rows (${head.join(',')}: ${rows.length} rows)`);
    }
    out.push(sql, head.join('\t'), ...rows);
  }
  return out.join('\n').split(url).join('TABLE');
}

async function readAll(page, url, via, token) {
  await openTable(page, url, via, token);
  await page.waitForSelector('#tab-overview', { timeout: 60000 });
  await idle(page);
  const err = await page.locator('.error').count();
  if (err) throw new Error(`opening ${url}: ${await page.locator('.error').first().innerText()}`);
  const out = {};
  for (const t of TABS) out[t] = await tabText(page, t, url);
  out.query = await queryText(page, url);
  return out;
}

// A commit without commitInfo is dated by its file's modification time (history, and the
// change feed's _commit_timestamp), which the store copy (uploaded now) and the local file
// do not share, and `serve` does not send for local files: a time where the direct read
// has none is the one difference allowed.
function sameFileTimes(direct, relayed) {
  const d = direct.split('\n');
  return relayed.split('\n').map((line, i) => {
    const dc = (d[i] || '').split('\t');
    const cells = line.split('\t');
    if (dc.length !== cells.length) return line;
    return cells.map((c, j) => (['', '∅'].includes(dc[j]) && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(c) ? dc[j] : c)).join('\t');
  }).join('\n');
}

const directRead = {};
for (const name of TABLES) {
  await check(`direct ${name}`, async (page) => {
    directRead[name] = await readAll(page, `${BASE}/tables/${name}`, null);
  });
  for (const store of Object.keys(STORES)) {
    await check(`${store} relay ${name}: every tab equals the direct read`, async (page) => {
      if (!directRead[name]) throw new Error('no direct read to compare with');
      const url = tableAt(store, name);
      const relayed = await readAll(page, url, '/');
      for (const t of COMPARED) relayed[t] = sameFileTimes(directRead[name][t], relayed[t]);
      for (const t of COMPARED) {
        if (relayed[t] !== directRead[name][t]) {
          fs.writeFileSync(`${ART}/relay-${store}-${name}-${t}.txt`, `direct:\n${directRead[name][t]}\n\nrelayed:\n${relayed[t]}\n`);
          throw new Error(`tab ${t} differs (see ${ART}/relay-${store}-${name}-${t}.txt)`);
        }
      }
      const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
      for (const s of SECRETS) if (storage.includes(s)) throw new Error('a credential is in the page storage');
    });
    if (WORKER) {
      await check(`${store} through the worker ${name}: every tab equals the direct read`, async (page) => {
        if (!directRead[name]) throw new Error('no direct read to compare with');
        const relayed = await readAll(page, tableAt(store, name), WORKER, WORKER_TOKEN);
        for (const t of COMPARED) relayed[t] = sameFileTimes(directRead[name][t], relayed[t]);
        for (const t of COMPARED) {
          if (relayed[t] !== directRead[name][t]) {
            fs.writeFileSync(`${ART}/worker-${store}-${name}-${t}.txt`, `direct:\n${directRead[name][t]}\n\nthrough the worker:\n${relayed[t]}\n`);
            throw new Error(`tab ${t} differs (see ${ART}/worker-${store}-${name}-${t}.txt)`);
          }
        }
        if (!new URL(page.url()).searchParams.get('via')) throw new Error('the page URL does not name the relay');
        if (page.url().includes(WORKER_TOKEN)) throw new Error('the relay token is in the page URL');
      });
    }
  }
}

await check('without the relay the private bucket cannot be read by the tab', async (page) => {
  await page.goto(`${BASE}/`);
  await page.fill('#table-url', `${STORES.s3}/${TABLES[0]}`);
  await page.click('details.options summary');
  await page.fill('#s3-endpoint', process.env.MOTO);
  await page.click('#open');
  await page.waitForSelector('.error', { timeout: 60000 });
});

if (WORKER) {
  await check('the worker refuses a tab without its token, and tables outside its allowlist', async (page) => {
    // (an open that fails shows its error: waiting for the tabs would only time out)
    await openTable(page, tableAt('s3', TABLES[0]), WORKER, 'wrong-token');
    const msg = await page.locator('.error').first().innerText({ timeout: 60000 });
    if (!/denied|refused|401|token/i.test(msg)) throw new Error(`unclear error: ${msg}`);
    await openTable(page, 's3://elsewhere/t', WORKER, WORKER_TOKEN);
    const msg2 = await page.locator('.error').first().innerText({ timeout: 60000 });
    if (!/denied|refused|403|allow/i.test(msg2)) throw new Error(`unclear error: ${msg2}`);
  });
}

// the catalog browser: catalog -> schema -> table, through serve and through the worker
async function browse(page, via, token) {
  if (token) {
    await page.goto(`${BASE}/`);
    await page.fill('#table-url', 'uc://main');
    await page.click('details.options summary');
    await page.fill('#relay', via);
    await page.fill('#relay-token', token);
    await page.click('#open');
  } else {
    await page.goto(`${BASE}/?${new URLSearchParams({ table: 'uc://main', via })}`);
  }
  await page.waitForSelector('#catalog-entries', { timeout: 60000 });
  await page.click('#catalog-entries button:text-is("uc://main.azure")');
  await page.waitForFunction(() => document.querySelector('#catalog-title')?.innerText === 'uc://main.azure', null, { timeout: 60000 });
  const table = tableAt('uc', TABLES[0]);
  await page.waitForSelector(`#catalog-entries button:text-is("${table}")`, { timeout: 60000 });
  await page.click(`#catalog-entries button:text-is("${table}")`);
  await page.waitForSelector('#tab-overview', { timeout: 60000 });
  await idle(page);
  const got = await tabText(page, 'schema', table);
  if (got !== directRead[TABLES[0]].schema) throw new Error('the table opened from the catalog differs');
}
if (STORES.uc) {
  await check('catalog browser through deltalens serve: uc://main -> schema -> table', (page) => browse(page, '/'));
  if (WORKER) await check('catalog browser through the worker', (page) => browse(page, WORKER, WORKER_TOKEN));
}

await check('a table the server does not relay is refused with its list', async (page) => {
  const q = new URLSearchParams({ table: 's3://someone-else/t', via: '/' });
  await page.goto(`${BASE}/?${q}`);
  await page.waitForSelector('.error', { timeout: 60000 });
  const msg = await page.locator('.error').first().innerText();
  if (!/relay/.test(msg)) throw new Error(`unclear error: ${msg}`);
});

// no credential ever reaches the tab: every relayed request went to the server only
const base = new URL(BASE);
const moto = new URL(process.env.MOTO);
const relayed = requests.filter((r) => new URL(r.url).pathname.startsWith('/v1/')).length;
const viaWorker = WORKER ? requests.filter((r) => new URL(r.url).host === new URL(WORKER).host).length : 0;
let leaks = 0;
let strays = 0;
for (const r of requests) {
  const text = r.url + JSON.stringify(r.headers);
  const host = new URL(r.url).host;
  const toWorker = WORKER && host === new URL(WORKER).host;
  // the only authorization a request may carry: the relay token typed for the worker,
  // to the worker; no storage or catalog secret, anywhere
  const auth = r.headers.authorization;
  if (SECRETS.some((s) => text.includes(s)) || (auth && !toWorker)) {
    leaks += 1;
    console.log(`credential in a request to ${r.url}`);
  }
  if (host !== base.host && host !== moto.host && !toWorker) strays += 1;
}
const direct = requests.filter((r) => new URL(r.url).host === moto.host).length;
console.log(`relay: ${requests.length} page requests, ${relayed} through a relay (${viaWorker} of them the worker's), ${direct} to the store (the refused direct open), ${strays} elsewhere, ${leaks} carrying a credential`);
if (leaks) failures.push('credentials reached the tab');
if (strays) failures.push('requests went to a third host');
if (relayed === 0) failures.push('nothing went through the relay');

await browser.close();
console.log(`relay e2e: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);

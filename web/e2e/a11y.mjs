// Accessibility and navigation of the explorer (headless Chromium, against the same
// `deltalens serve` as explorer.mjs):
// - axe-core (npm) on every tab of 3 tables: no serious or critical violation;
// - Back/Forward and reload restore table, version and tab (real history entries);
// - keys: arrows move between tabs (focus follows), `/` focuses the filter, `[`/`]` step
//   versions.
//   BASE=http://127.0.0.1:P TABLES=demo,… ARTIFACTS=target/e2e node web/e2e/a11y.mjs
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');
const AXE = require.resolve('axe-core/axe.min.js');

const BASE = process.env.BASE;
const TABLES = process.env.TABLES.split(',');
const ART = process.env.ARTIFACTS || 'target/e2e';
const TABS = ['overview', 'schema', 'history', 'data', 'changes', 'diff', 'files', 'query'];
fs.mkdirSync(ART, { recursive: true });
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
let passed = 0;
const failures = [];

async function check(name, fn, colorScheme = 'light') {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, colorScheme });
  try {
    await fn(page);
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e.stack || e}`);
    await page.screenshot({ path: `${ART}/FAILED-a11y-${name.replace(/\W+/g, '_')}.png`, fullPage: true }).catch(() => {});
  } finally {
    await page.close();
  }
}
const idle = (page) => page.waitForFunction(() => !document.querySelector('.status .busy'), null, { timeout: 60000 });
const open = (page, name, extra = '') => page.goto(`${BASE}/?table=${encodeURIComponent(`${BASE}/tables/${name}`)}${extra}`);
const param = (page, k) => new URL(page.url()).searchParams.get(k);

let audited = 0;
const seen = {};
for (const [name, scheme] of [...TABLES.map((t) => [t, 'light']), [TABLES[0], 'dark']]) {
  await check(`axe: every tab of ${name} (${scheme} mode; screenshots)`, async (page) => {
    await open(page, name);
    await page.waitForSelector('#tab-overview', { timeout: 60000 });
    await page.addScriptTag({ path: AXE });
    for (const t of TABS) {
      await page.click(`#tab-${t}`);
      await idle(page);
      if (t === 'query') {
        // audited with a result in the grid (the starter query, the first 100 rows)
        await page.click('#run-query');
        await page.waitForSelector('#query-summary, #query-error', { timeout: 60000 });
      }
      const result = await page.evaluate(async () => {
        const r = await window.axe.run(document, { resultTypes: ['violations'] });
        return r.violations.filter((v) => ['serious', 'critical'].includes(v.impact))
          .map((v) => `${v.id} (${v.impact}): ${v.help} [${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}]`);
      });
      audited += 1;
      await page.screenshot({ path: `${ART}/tab-${name}-${t}-${scheme}.png`, fullPage: true });
      for (const v of result) seen[v] = (seen[v] || 0) + 1;
      if (result.length) throw new Error(`tab ${t}: ${result.join('\n  ')}`);
    }
  }, scheme);
}

await check('the landing view lists the served tables and the URL forms; axe; a listed table opens', async (page) => {
  await page.goto(`${BASE}/`);
  await page.waitForSelector('#landing-tables a', { timeout: 30000 });
  const listed = await page.locator('#landing-tables a').allInnerTexts();
  for (const t of TABLES) if (!listed.includes(t)) throw new Error(`${t} not listed: ${listed}`);
  if ((await page.locator('#landing ul.examples li').count()) < 5) throw new Error('no URL examples');
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations
    .filter((v) => ['serious', 'critical'].includes(v.impact)).map((v) => `${v.id}: ${v.help}`));
  audited += 1;
  await page.screenshot({ path: `${ART}/landing-light.png`, fullPage: true });
  if (result.length) throw new Error(`landing: ${result.join('; ')}`);
  // an example fills the box
  await page.locator('#landing ul.examples button').first().click();
  if (!/^s3:\/\//.test(await page.inputValue('#table-url'))) throw new Error('the example did not fill the URL box');
  await page.locator('#landing-tables a', { hasText: new RegExp(`^${TABLES[0]}$`) }).click();
  await page.waitForSelector('#card-version', { timeout: 60000 });
  if ((await page.locator('#landing').count()) !== 0) throw new Error('the landing view stayed');
});

await check('Back and Forward step through tabs and versions; reload restores them', async (page) => {
  await open(page, TABLES[0]);
  await page.waitForSelector('#tab-overview', { timeout: 60000 });
  await idle(page);
  await page.click('#tab-schema');
  await page.click('#tab-history');
  await idle(page);
  await page.waitForSelector('#history-table button.version', { timeout: 60000 });
  await page.locator('#history-table button.version', { hasText: /^1$/ }).click();
  await idle(page);
  if (param(page, 'version') !== '1' || param(page, 'tab') !== 'overview') throw new Error(`after a version click: ${page.url()}`);
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('#tab-history')?.getAttribute('aria-selected') === 'true', null, { timeout: 30000 });
  await idle(page);
  if (param(page, 'version') !== null) throw new Error(`Back kept the version: ${page.url()}`);
  if ((await page.textContent('#version')) === '1') throw new Error('Back did not leave version 1');
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('#tab-schema')?.getAttribute('aria-selected') === 'true', null, { timeout: 30000 });
  await page.goForward();
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('#version')?.innerText === '1', null, { timeout: 30000 });
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#version')?.innerText === '1', null, { timeout: 60000 });
  if ((await page.getAttribute('#tab-overview', 'aria-selected')) !== 'true') throw new Error('reload lost the tab');
});

await check('keys: arrows between tabs, / focuses the filter, [ and ] step versions', async (page) => {
  await open(page, TABLES[0]);
  await page.waitForSelector('#tab-overview', { timeout: 60000 });
  await idle(page);
  await page.focus('#tab-overview');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.id === 'tab-schema' && document.querySelector('#tab-schema').getAttribute('aria-selected') === 'true');
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.activeElement?.id === 'tab-query');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.id === 'tab-overview');
  const latest = Number(await page.textContent('#version'));
  await page.keyboard.press('[');
  await page.waitForFunction((v) => document.querySelector('#version')?.innerText === String(v - 1), latest);
  await page.keyboard.press(']');
  await page.waitForFunction((v) => document.querySelector('#version')?.innerText === String(v), latest);
  await page.keyboard.press('/');
  await page.waitForFunction(() => document.activeElement?.id === 'filter');
  // typing in a field is typing, not a shortcut
  await page.keyboard.type('[');
  if ((await page.inputValue('#filter')) !== '[') throw new Error('a key typed into the filter was taken as a shortcut');
});

await check('the Changes tab shows the latest commit at once, and empty charts say so', async (page) => {
  await open(page, TABLES[0], '&tab=changes');
  await page.waitForSelector('#changes-counts li', { timeout: 60000 });
  await open(page, TABLES[0], '&tab=history');
  await idle(page);
  const boxes = await page.evaluate(() => [...document.querySelectorAll('figure.chart')]
    .filter((f) => !f.classList.contains('empty') && !f.querySelector('svg rect')).length);
  if (boxes) throw new Error(`${boxes} charts drawn without data`);
});

await browser.close();
console.log(`a11y: axe-core ${require('axe-core/package.json').version} on ${audited} tab views of ${TABLES.length} tables: ${Object.keys(seen).length} kinds of serious/critical violation`);
console.log(`a11y e2e: ${passed} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);

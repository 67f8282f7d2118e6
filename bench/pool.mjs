// The Query tab's pool of Web Workers (issue #35 item 3), in headless Chromium: one
// aggregate over a table, with `navigator.hardwareConcurrency` pinned to each of WIDTHS
// (1 = the query worker alone), RUNS rounds interleaved (each width once per round, a fresh
// page each time). Per run: the first query (cold: the workers start and compile the query
// module) and the same query again (warm), from the click on Run to the result on screen,
// and each worker's busy time. Prints the medians, the spread, and each width's speed-up
// over width 1 (warm). Figures, no goals asserted: the goal (>= 1.6x on 2 cores)
// is read from the output on a quiet machine.
//
//   BASE=http://127.0.0.1:PORT TABLE=scan5m [WIDTHS=1,2,4] [RUNS=3] [SQL=…] node bench/pool.mjs
import { createRequire } from 'node:module';

const require = createRequire(new URL('../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const { BASE, TABLE } = process.env;
const WIDTHS = (process.env.WIDTHS || '1,2,4').split(',').map(Number);
const RUNS = Number(process.env.RUNS || 3);
const url = `${BASE}/tables/${TABLE}`;
const SQL = process.env.SQL
  || `SELECT category, COUNT(*) AS n, SUM(price) AS s, AVG(qty) AS q, MAX(ts) AS t FROM '${url}' GROUP BY category ORDER BY category`;

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });

// Run SQL in the open page's Query tab: milliseconds from the click to the result, and
// its summary.
async function timed(page) {
  return page.evaluate(async (sql) => {
    const box = document.querySelector('#sql');
    box.value = sql;
    box.dispatchEvent(new Event('input', { bubbles: true }));
    const before = document.querySelector('#query-summary');
    const start = performance.now();
    document.querySelector('#run-query').click();
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      const err = document.querySelector('#query-error');
      if (err) throw new Error(err.innerText);
      const s = document.querySelector('#query-summary');
      if (s && s !== before && s.dataset.sql === sql) return { ms: performance.now() - start, summary: s.innerText };
    }
  }, SQL);
}

const results = Object.fromEntries(WIDTHS.map((w) => [w, { cold: [], warm: [], busy: [] }]));
for (let r = 0; r < RUNS; r++) {
  for (const w of WIDTHS) {
    const page = await browser.newPage();
    await page.addInitScript((n) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n }), w);
    await page.goto(`${BASE}/?table=${encodeURIComponent(url)}&tab=query`);
    await page.waitForSelector('#sql', { timeout: 60000 });
    await page.waitForFunction(() => !document.querySelector('.status .busy'), null, { timeout: 120000 });
    const cold = await timed(page);
    const warm = await timed(page);
    const busy = (warm.summary.match(/busy ([^)]*)\)/) || [, ''])[1];
    results[w].cold.push(cold.ms);
    results[w].warm.push(warm.ms);
    results[w].busy.push(busy);
    console.log(`run ${r + 1}, ${w} worker(s): cold ${cold.ms.toFixed(0)} ms, warm ${warm.ms.toFixed(0)} ms · ${warm.summary}`);
    await page.close();
  }
}
await browser.close();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(results[WIDTHS[0]].warm);
console.log(`\n${TABLE}: ${SQL}`);
console.log('workers | cold median (min–max) ms | warm median (min–max) ms | warm speed-up vs ' + WIDTHS[0]);
for (const w of WIDTHS) {
  const { cold, warm } = results[w];
  console.log(`${w} | ${median(cold).toFixed(0)} (${Math.min(...cold).toFixed(0)}–${Math.max(...cold).toFixed(0)}) | ${median(warm).toFixed(0)} (${Math.min(...warm).toFixed(0)}–${Math.max(...warm).toFixed(0)}) | ${(base / median(warm)).toFixed(2)}x`);
}

// Relay overhead: opening a table and its first 100 rows in the explorer (headless
// Chromium) directly from a bucket with a CORS rule, and through `deltalens serve`'s
// relay and the worker's, side by side in one run. Counts the requests, response body
// bytes and round trips (the longest chain of requests each sent after another's answer)
// that reached storage or a relay; the explorer's own files are not counted. Prints one
// line per way and the ratios to the direct read; with GOALS=1 exits 1 unless the relays
// stay within 1.2x the bytes and 1 extra round trip. Round trips come from the browser's
// timings and vary by one or two on a loaded machine, and so does what the session cache
// saves when the totals pass and the preview read a file at once: CI prints the figures,
// GOALS=1 is for a quiet one.
//
//   BASE=… TABLES=demo,… DIRECT=s3://public/tables MOTO=http://… RELAYED=s3://private/tables \
//     WORKER=http://… WORKER_TOKEN=… [GOALS=1] node bench/relay.mjs
import { createRequire } from 'node:module';

const require = createRequire(new URL('../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const { BASE, MOTO, WORKER, WORKER_TOKEN } = process.env;
const TABLES = process.env.TABLES.split(',');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });

async function measure(table, how) {
  const page = await browser.newPage();
  const reqs = [];
  page.on('requestfinished', async (r) => {
    const u = new URL(r.url());
    const counted = u.pathname.startsWith('/v1/') || u.host === new URL(MOTO).host;
    if (!counted || r.method() === 'OPTIONS') return;
    const t = r.timing();
    const sizes = await r.sizes().catch(() => ({ responseBodySize: 0 }));
    // a negative size: answered from the browser's HTTP cache (no bytes over the network)
    reqs.push({ start: t.startTime, end: t.startTime + t.responseEnd, bytes: Math.max(0, sizes.responseBodySize),
      what: `${r.method()} ${decodeURIComponent(u.pathname + u.search)} ${r.headers().range || ''}` });
  });
  await page.goto(`${BASE}/`);
  await page.fill('#table-url', table);
  await page.click('details.options summary');
  if (how.endpoint) {
    await page.fill('#s3-endpoint', how.endpoint);
    await page.fill('#s3-key', 'bench-key');
    await page.fill('#s3-secret', 'bench-secret');
  }
  if (how.relay) await page.fill('#relay', how.relay);
  if (how.token) await page.fill('#relay-token', how.token);
  await page.click('#open');
  await page.waitForSelector('#tab-data', { timeout: 60000 });
  await page.click('#tab-data');
  await page.waitForFunction(() => /^\d+ rows/.test(document.querySelector('#data-summary')?.innerText || ''), null, { timeout: 60000 });
  await page.waitForFunction(() => !document.querySelector('.status .busy'), null, { timeout: 60000 });
  await page.waitForTimeout(300); // the last requestfinished events
  await page.close();
  reqs.sort((a, b) => a.start - b.start);
  const depth = [];
  for (let i = 0; i < reqs.length; i++) {
    let d = 1;
    for (let j = 0; j < i; j++) if (reqs[j].end <= reqs[i].start) d = Math.max(d, depth[j] + 1);
    depth.push(d);
  }
  if (process.env.LOG) for (const r of reqs) console.log(`  ${r.bytes}\t${r.what}`);
  return { requests: reqs.length, bytes: reqs.reduce((s, r) => s + r.bytes, 0), round_trips: Math.max(0, ...depth) };
}

const ways = {
  direct: (t) => [`${process.env.DIRECT}/${t}`, { endpoint: MOTO }],
  serve: (t) => [`${process.env.RELAYED}/${t}`, { relay: '/' }],
};
if (WORKER) ways.worker = (t) => [`${process.env.RELAYED}/${t}`, { relay: WORKER, token: WORKER_TOKEN }];

let missed = 0;
console.log('table                      way      requests      bytes  round trips   bytes ratio  extra round trips');
for (const t of TABLES) {
  const direct = await measure(...ways.direct(t));
  for (const [way, f] of Object.entries(ways)) {
    const m = way === 'direct' ? direct : await measure(...f(t));
    const ratio = m.bytes / direct.bytes;
    const extra = m.round_trips - direct.round_trips;
    console.log(`${t.padEnd(26)} ${way.padEnd(8)} ${String(m.requests).padStart(8)} ${String(m.bytes).padStart(10)} ${String(m.round_trips).padStart(12)} ${ratio.toFixed(3).padStart(13)} ${String(extra).padStart(18)}`);
    if (way !== 'direct' && (ratio > 1.2 || extra > 1)) {
      missed += 1;
      console.log(`goal missed: ${t} through ${way}: ${ratio.toFixed(2)}x the bytes, ${extra} extra round trips (goal <= 1.2x, <= 1)`);
    }
  }
}
await browser.close();
console.log(missed ? `relay overhead: ${missed} goals missed` : 'relay overhead: every goal met (<= 1.2x bytes, <= 1 extra round trip)');
process.exit(process.env.GOALS && missed ? 1 : 0);

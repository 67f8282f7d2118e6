// A link can never move a secret (headless Chromium, playwright-core).
//
// The user enters three kinds of secret through the form and saves them ("remember"),
// each with an Open of their own: S3 keys for an S3 endpoint (origin C), an Azure SAS for
// an Azure endpoint (origin D), and a relay token for the team's relay, this
// `deltalens serve` (origin A). Then links arrive — every URL parameter (table, via,
// version, tab), pointing at an attacker (origin B), at the same server under another
// origin (localhost), relative and protocol-relative relays, the user's own origins —
// and each is answered every way the page allows (with credentials, without, no answer),
// followed by an ordinary Open of what the link left in the form, Back, Forward and a
// reload. Every request the page makes is recorded (Playwright, and the origins B, C and
// D log what reached them): no secret may ever reach an origin other than the one it was
// entered for, and what the device stores may not change (the ordinary Open is the only
// save, and it saves what the user entered).
//
//   BASE=http://127.0.0.1:A node web/e2e/secrets.mjs
import http from 'node:http';
import fs from 'node:fs';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tools/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const BASE = process.env.BASE;
const ART = process.env.ARTIFACTS || 'target/e2e';
fs.mkdirSync(ART, { recursive: true });
const A = new URL(BASE).origin;

// origins B (attacker), C (S3 endpoint), D (Azure endpoint): every request is logged and
// answered 404 with permissive CORS, so that a request carrying a secret is really sent
// (a refused preflight would hide a leak)
const reached = [];
function logger() {
  const server = http.createServer((req, res) => {
    // labelled by the Host the request named (a virtual-hosted bucket is another origin)
    reached.push({ origin: `http://${req.headers.host}`, url: req.url, headers: req.headers });
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] || '*');
    res.setHeader('Access-Control-Expose-Headers', 'Content-Range, Content-Length, ETag');
    res.statusCode = req.method === 'OPTIONS' ? 204 : 404;
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
const servers = [await logger(), await logger(), await logger()];
const [B, C, D] = servers.map((s) => `http://127.0.0.1:${s.address().port}`);

const SECRETS = {
  token: { value: 'relaytoken-5f1e9c0d7a', origin: A },
  s3key: { value: 'AKIAMATRIXKEY4242', origin: C },
  s3secret: { value: 's3-secret-never-sent-77', origin: null },
  s3session: { value: 's3session-token-9931', origin: C },
  sas: { value: 'sig=sas-signature-3141', origin: D },
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const context = await browser.newContext();
const seen = [];
// every header, the security-related ones included (allHeaders, not headers)
const pendingHeaders = [];
context.on('request', (r) => {
  const entry = { url: r.url(), headers: r.headers(), where: 'page' };
  seen.push(entry);
  pendingHeaders.push(r.allHeaders().then((h) => { entry.headers = h; }).catch(() => {}));
});

let passed = 0;
const failures = [];
async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

async function settle(page) {
  await page.waitForTimeout(400);
  await page.waitForFunction(() => !document.querySelector('.status .busy'), null, { timeout: 30000 }).catch(() => {});
  await page.waitForTimeout(300);
}

const stored = (page) => page.evaluate(() => localStorage.getItem('deltalens.credentials'));

// every secret seen anywhere but at its own origin
async function leaks(from = 0, fromReached = 0) {
  await Promise.all(pendingHeaders);
  const out = [];
  const all = [
    ...seen.slice(from).map((r) => ({ origin: new URL(r.url).origin, text: r.url + ' ' + JSON.stringify(r.headers), where: 'page' })),
    ...reached.slice(fromReached).map((r) => ({ origin: r.origin, text: r.url + ' ' + JSON.stringify(r.headers), where: 'server' })),
  ];
  for (const r of all) {
    for (const [kind, s] of Object.entries(SECRETS)) {
      if (r.text.includes(s.value) && r.origin !== s.origin) out.push(`${kind} reached ${r.origin} (${r.where}): ${r.text.slice(0, 200)}`);
    }
  }
  return out;
}

// the user's own entries: each secret typed, then an Open that uses it, "remember" ticked
const page = await context.newPage();
await check('the user enters and saves S3 keys, a SAS and a relay token', async () => {
  await page.goto(`${BASE}/`);
  await page.click('details.options summary');
  await page.check('details.options input[type=checkbox] >> nth=-1');
  await page.fill('#s3-endpoint', C);
  await page.fill('#s3-key', SECRETS.s3key.value);
  await page.fill('#s3-secret', SECRETS.s3secret.value);
  await page.fill('#s3-token', SECRETS.s3session.value);
  await page.fill('#table-url', 's3://teambucket/sales');
  await page.click('#open');
  await settle(page);
  await page.fill('#azure-endpoint', `${D}/devstoreaccount1`);
  await page.fill('#azure-sas', SECRETS.sas.value);
  await page.fill('#table-url', 'az://teamcontainer/sales');
  await page.click('#open');
  await settle(page);
  await page.fill('#relay', A);
  await page.fill('#relay-token', SECRETS.token.value);
  await page.fill('#table-url', 's3://teambucket/sales');
  await page.click('#open');
  await settle(page);
  assert.ok(await stored(page), 'nothing stored');
  assert.deepEqual(await leaks(), []);
});
const saved = await stored(page);
await page.close();

const q = (p) => `${BASE}/?${new URLSearchParams({ ...p, version: '1', tab: 'history' })}`;
const links = {
  'the issue: s3 table, attacker relay': { table: 's3://anything/t', via: `${B}/`, reaches: B },
  'attacker relay as a bare origin': { table: 's3://anything/t', via: B },
  'the same server under another origin': { table: 's3://anything/t', via: A.replace('127.0.0.1', 'localhost'), reaches: A.replace('127.0.0.1', 'localhost') },
  'protocol-relative attacker relay': { table: 's3://anything/t', via: `//${new URL(B).host}/` },
  'attacker relay for a catalog name': { table: 'uc://main.s.t', via: B },
  'attacker http table': { table: `${B}/t` },
  'attacker http table under the S3 endpoint origin': { table: `${C}/bkt/t` },
  // the user's own origins: the page asks first, naming the origin
  'another bucket on the remembered S3 endpoint': { table: 's3://anything/t' },
  'the remembered bucket': { table: 's3://teambucket/other', asks: `${C}/teambucket` },
  'any container on the remembered Azure endpoint': { table: 'az://anycontainer/t', asks: D },
  'the team relay, relative': { table: 's3://anything/t', via: '/', asks: A },
  'the team relay, absolute': { table: 's3://anything/t', via: A, asks: A },
};

for (const [name, link] of Object.entries(links)) {
  for (const answer of ['with', 'without', 'none']) {
    await check(`${name} (${link.table}${link.via ? ' via ' + link.via : ''}), answer ${answer}, then Open, Back, Forward, reload`, async () => {
      const from = seen.length;
      const fromReached = reached.length;
      const p = await context.newPage();
      try {
        await p.goto(`${BASE}/`);
        await p.evaluate((v) => localStorage.setItem('deltalens.credentials', v), saved);
        await p.goto(q(link));
        await settle(p);
        const asked = (await p.locator('#confirm-open').count()) > 0;
        // asked exactly when a secret would go with the link, naming where
        if (process.env.OLD_EXPLORER !== '1') {
          assert.equal(asked, Boolean(link.asks), 'asked');
          if (asked) assert.equal(await p.locator('#confirm-origin').innerText(), link.asks);
        }
        if (asked && answer !== 'none') await p.click(answer === 'with' ? '#confirm-with' : '#confirm-without');
        if (!asked && answer !== 'without') return; // the same page as the 'without' row
        await settle(p);
        await p.click('#open');
        await settle(p);
        await p.goBack();
        await settle(p);
        await p.goForward();
        await settle(p);
        await p.reload();
        await settle(p);
        if (await p.locator('#confirm-open').count()) await p.click('#confirm-with');
        await settle(p);
        assert.deepEqual(await leaks(from, fromReached), []);
        assert.equal(await stored(p), saved, 'what the device stores changed');
        // the page did read through the link's relay: the check above had requests to see
        if (link.reaches) {
          assert.ok(seen.slice(from).some((r) => new URL(r.url).origin === link.reaches), `nothing went to ${link.reaches}`);
        }
      } finally {
        await p.close();
      }
    });
  }
}

// declined, then Back and Forward: the entry is a link again, asked again, not opened
// with the secret; a fragment navigation while the page asks opens nothing with it either
for (const [name, nav] of [['Back, Forward', async (p) => { await p.goBack(); await settle(p); await p.goForward(); }],
  ['a fragment navigation while asking', async (p) => { await p.goto(q({ table: 's3://anything/t', via: '/' })); await settle(p); await p.evaluate(() => { location.hash = 'x'; }); }]]) {
  await check(`the team relay declined, then ${name}: no token goes`, async () => {
    const from = seen.length;
    const fromReached = reached.length;
    const p = await context.newPage();
    try {
      await p.goto(`${BASE}/`);
      await p.evaluate((v) => localStorage.setItem('deltalens.credentials', v), saved);
      await p.goto(q({ table: 's3://anything/t', via: '/' }));
      await settle(p);
      await p.click('#confirm-without');
      await settle(p);
      await nav(p);
      await settle(p);
      assert.ok(!seen.slice(from).some((r) => JSON.stringify(r.headers).includes(SECRETS.token.value)), 'the token went without consent');
      assert.deepEqual(await leaks(from, fromReached), []);
    } finally {
      await p.close();
    }
  });
}

// a secret typed while a link's table is in the field: the Open of what the link put
// there binds nothing (the user did not type that URL) and stores nothing
await check('keys typed after a link prefilled the field are not bound to its bucket', async () => {
  const from = seen.length;
  const p = await context.newPage();
  try {
    await p.goto(`${BASE}/`);
    await p.evaluate((v) => localStorage.setItem('deltalens.credentials', v), saved);
    await p.goto(`${BASE}/?${new URLSearchParams({ table: 's3://attackerbucket/t' })}`);
    await settle(p);
    await p.click('details.options summary');
    await p.fill('#relay', ''); // straight to storage: keys would go with the read
    await p.fill('#s3-key', 'AKIATYPEDLATER123');
    await p.fill('#s3-secret', 'typed-later-secret');
    await p.click('#open');
    await settle(p);
    assert.ok(!seen.slice(from).some((r) => JSON.stringify(r.headers).includes('AKIATYPEDLATER123')), 'the typed key went to the link\'s bucket');
    assert.equal(await stored(p), saved, 'stored');
  } finally {
    await p.close();
  }
});

// a last sweep: requests that came late in the last checks
await new Promise((r) => setTimeout(r, 500));
await check('no secret reached another origin at any time', async () => assert.deepEqual(await leaks(0, 0), []));

await browser.close();
for (const s of servers) s.close();
console.log(`secrets: ${passed} passed, ${failures.length} failed; ${seen.length} page requests, ${reached.length} reached B/C/D`);
process.exit(failures.length ? 1 : 0);

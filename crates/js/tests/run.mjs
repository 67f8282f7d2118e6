// The npm package (built by scripts/build-js into target/js/package) in its three
// runtimes, on corpus tables served over HTTP with Range by a server of its own on
// 127.0.0.1: Node (node.js), headless Chromium (index.js, through Playwright) and workerd
// (workerd.js, through miniflare). Each answers the checks of checks.mjs; the answers
// are written to OUT/<runtime>/<table>/ (info.json, schema.json, history.json,
// files.json, files_v0.json, diff.json, scan.arrow, scan.json) for tests/tests/js_package.rs to
// compare with the native reads and the corpus, and checked here with apache-arrow's
// tableFromIPC (rows, column names) and for the package's errors and fetch hook.
//
//   node crates/js/tests/run.mjs PACKAGE_DIR CONFORMANCE_TABLES_DIR OUT_DIR TABLE...
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { cpSync, createReadStream, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '../../../tools/package.json'));
const { tableFromIPC } = require('apache-arrow');
const { chromium } = require('playwright-core');
const { Miniflare } = require('miniflare');

const [pkgDir, tablesDir, outDir, ...tables] = process.argv.slice(2).map((a, i) => (i < 3 ? resolve(a) : a));
assert.ok(tables.length >= 10, 'at least 10 corpus tables');
const stop = setTimeout(() => { console.error('js package tests: not done after 15 min'); process.exit(1); }, 15 * 60 * 1000);

// a copy of the package beside the test modules (the page and the worker import both)
const site = join(outDir, 'site');
// (only a directory of answers this script made before is removed)
if (existsSync(outDir) && !existsSync(join(outDir, 'site', 'checks.mjs'))) throw new Error(`${outDir} exists and is not a previous run's: choose another`);
rmSync(outDir, { recursive: true, force: true });
mkdirSync(site, { recursive: true });
cpSync(pkgDir, site, { recursive: true });
for (const f of ['checks.mjs', 'worker.mjs']) cpSync(join(here, f), join(site, f));
writeFileSync(join(site, 'index.html'), '<!doctype html><title>deltalens package test</title>');
// a hostile table (hand-written: a writer would not make it): its statistics hold a
// `__proto__` key, which must arrive as an own key, not as the object's prototype
const hostile = join(site, 'hostile', 'proto', '_delta_log');
mkdirSync(hostile, { recursive: true });
const schema = JSON.stringify({ type: 'struct', fields: [{ name: 'id', type: 'long', nullable: true, metadata: {} }] });
writeFileSync(join(hostile, '00000000000000000000.json'), [
  { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
  { metaData: { id: 'p', format: { provider: 'parquet', options: {} }, schemaString: schema, partitionColumns: [], configuration: {}, createdTime: 0 } },
  { add: { path: 'a.parquet', partitionValues: {}, size: 1, modificationTime: 0, dataChange: true, stats: '{"numRecords":1,"minValues":{"__proto__":{"polluted":1}}}' } },
].map((a) => JSON.stringify(a)).join('\n') + '\n');

// the server: /tables/<name>/… from the corpus (GET, HEAD, one Range), the rest from site/
let hooked = 0;
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };
const server = createServer((req, res) => {
  if (req.headers['x-deltalens-hook']) hooked++;
  const url = new URL(req.url, 'http://x');
  let rel;
  try {
    rel = decodeURIComponent(url.pathname);
  } catch {
    res.writeHead(400).end();
    return;
  }
  const [root, sub] = rel.startsWith('/tables/') ? [tablesDir, rel.slice('/tables/'.length)] : [site, rel.slice(1) || 'index.html'];
  const file = normalize(join(root, sub));
  if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404).end();
    return;
  }
  const size = statSync(file).size;
  const type = types[file.slice(file.lastIndexOf('.'))] || 'application/octet-stream';
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || '');
  let [start, end] = [0, size - 1];
  if (m) {
    if (m[1] === '') [start, end] = [Math.max(0, size - Number(m[2])), size - 1];
    else [start, end] = [Number(m[1]), m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)];
    if (start >= size || start > end) {
      res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
  }
  const headers = { 'content-type': type, 'content-length': end - start + 1, 'accept-ranges': 'bytes' };
  if (m) headers['content-range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(m ? 206 : 200, headers);
  if (req.method === 'HEAD' || size === 0) res.end();
  else createReadStream(file, { start, end }).on('error', () => res.destroy()).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

function record(runtime, got) {
  let n = 0;
  let batches = 0;
  for (const [name, a] of Object.entries(got.answers)) {
    const dir = join(outDir, runtime, name);
    mkdirSync(dir, { recursive: true });
    if (a.error) {
      writeFileSync(join(dir, 'error.json'), JSON.stringify(a.error));
      continue;
    }
    for (const k of ['info', 'schema', 'history', 'files', 'files_v0', 'diff']) writeFileSync(join(dir, `${k}.json`), a[k]);
    const arrow = Buffer.from(a.arrow, 'base64');
    writeFileSync(join(dir, 'scan.arrow'), arrow);
    writeFileSync(join(dir, 'scan.json'), a.json);
    // apache-arrow reads the rows: as many as the overview says, the schema's top columns
    const t = tableFromIPC(arrow);
    a.info = JSON.parse(a.info);
    a.schema = JSON.parse(a.schema);
    if (a.info.num_rows !== null) assert.equal(t.numRows, a.info.num_rows, `${runtime} ${name}: rows`);
    assert.deepEqual(t.schema.fields.map((f) => f.name), a.schema.fields.map((f) => f.name), `${runtime} ${name}: columns`);
    assert.equal(JSON.parse(a.json).length, Math.min(20, t.numRows), `${runtime} ${name}: JSON rows`);
    // the batches: together the scan's rows, each readable on its own
    const parts = a.batches.map((x) => tableFromIPC(Buffer.from(x, 'base64')));
    assert.equal(parts.reduce((n, p) => n + p.numRows, 0), t.numRows, `${runtime} ${name}: rows of the batches`);
    for (const p of parts) assert.deepEqual(p.schema.fields.map((f) => f.name), t.schema.fields.map((f) => f.name));
    batches += parts.length;
    assert.equal(a.version, a.info.version);
    n++;
  }
  const b = got.behaviour;
  const code = (c, k) => { assert.equal(b[k]?.code, c, `${runtime}: ${k} ${JSON.stringify(b[k])}`); assert.equal(b[k].name, 'DeltaLensError'); };
  code('not_a_table', 'notATable');
  code('invalid_parameter', 'badOption');
  code('invalid_parameter', 'badParam');
  code('version_not_found', 'badVersion');
  code('invalid_parameter', 'badFilter');
  code('invalid_parameter', 'tableOption');
  code('rows_budget_exceeded', 'maxRows');
  code('table_closed', 'closed');
  assert.match(b.maxRows.message, /2/);
  const pastMax = b.batchesPastMaxRows.reduce((n, x) => n + tableFromIPC(Buffer.from(x, 'base64')).numRows, 0);
  assert.ok(pastMax > 2, `${runtime}: batches() gave ${pastMax} rows with maxRows 2`);
  assert.ok(b.batchesBreak.first > 0 && b.batchesBreak.after >= 0, `${runtime}: ${JSON.stringify(b.batchesBreak)}`);
  code('invalid_parameter', 'batchesFormat');
  code('invalid_parameter', 'badBatchSize');
  const sized = b.batchSize.map((x) => tableFromIPC(Buffer.from(x, 'base64')).numRows);
  assert.ok(sized.every((n) => n >= 1 && n <= 2), `${runtime}: batchSize 2 gave ${sized}`);
  assert.equal(sized.reduce((n, m) => n + m, 0), pastMax, `${runtime}: batchSize 2 lost rows`);
  assert.equal(b.withinMaxRows, 2);
  code('invalid_parameter', 'badMaxRows');
  for (const k of ['notATable', 'badOption', 'badParam']) assert.ok(b[k].isClass && b[k].isError, `${runtime}: ${k} is a DeltaLensError`);
  assert.match(b.badOption.message, /s3_endpoint/);
  for (const [k, name] of [['badOptionType', /s3VirtualHosted/], ['badTimeout', /timeoutMs/], ['badFetch', /fetch/], ['notAnObject', /options/]]) {
    code('invalid_parameter', k);
    assert.match(b[k].message, name, `${runtime}: ${k} names the option: ${b[k].message}`);
  }
  assert.equal(b.nullOptions, true, `${runtime}: undefined and null options are absent`);
  assert.ok(b.hookRequests > 0, `${runtime}: the fetch hook saw no request`);
  assert.deepEqual(b.hookHosts, [new URL(base).host]);
  assert.match(b.queryCount, /^\[\{"n":\d+\}\]$/);
  code('table_not_allowed', 'otherTable');
  assert.equal(b.otherTableRequests, 0, `${runtime}: a refused query made requests`);
  assert.deepEqual(b.proto, { own: true, prototype: true, polluted: false }, `${runtime}: __proto__ in a log`);
  console.log(`js package, ${runtime}: ${n} tables read and recorded (${batches} record batches through batches(), rows equal to scan()); errors, fetch hook (${b.hookRequests} requests) and query checked`);
  return n;
}

const results = {};
let failed = 0;
const run = async (runtime, f) => {
  try {
    results[runtime] = record(runtime, await f());
  } catch (e) {
    failed++;
    console.log(`FAIL js package, ${runtime}: ${e.stack || e}`);
  }
};

await run('node', async () => {
  const deltalens = await import(pathToFileURL(join(site, 'node.js')).href);
  const checks = await import(pathToFileURL(join(site, 'checks.mjs')).href);
  const before = hooked;
  const out = { answers: await checks.answers(deltalens, base, tables), behaviour: await checks.behaviour(deltalens, base, tables[0]) };
  assert.ok(hooked > before, 'the hook header reached the server');
  return out;
});

await run('chromium', async () => {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/index.html`);
    return await page.evaluate(async ({ base, tables }) => {
      const deltalens = await import('/index.js');
      const checks = await import('/checks.mjs');
      return { answers: await checks.answers(deltalens, base, tables), behaviour: await checks.behaviour(deltalens, base, tables[0]) };
    }, { base, tables });
  } finally {
    await browser.close();
  }
});

await run('workerd', async () => {
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    modules: true,
    modulesRoot: site,
    scriptPath: join(site, 'worker.mjs'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }, { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] }],
    compatibilityDate: '2026-04-26',
    outboundService: { network: { allow: ['local'] } },
  });
  try {
    const url = await mf.ready;
    const r = await fetch(`${url}?base=${encodeURIComponent(base)}&tables=${tables.join(',')}`);
    assert.equal(r.status, 200, await r.clone().text());
    return await r.json();
  } finally {
    await mf.dispose();
  }
});

server.close();
clearTimeout(stop);
console.log(`js package: ${Object.entries(results).map(([k, v]) => `${k} ${v} tables`).join(', ')}; ${failed} runtimes failed`);
process.exit(failed ? 1 : 0);

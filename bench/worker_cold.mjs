// The edge worker's cold start (issue #35 item 5), in workerd through miniflare on this
// machine: RUNS times, a fresh workerd with the built worker (worker/build: scripts/build-
// worker) and the demo table (a checkpointed table: v5 checkpoint + v6) in its R2 binding;
// the time until it is ready (process start, script evaluation, wasm compilation), then
// the first answer of `SELECT * … LIMIT 100` (a cold isolate's first query), then the same
// query again (warm). The same steps with a worker of a few lines of JavaScript give what
// workerd itself costs (the baseline), so the worker's own part is the difference. V8's
// compilation of the wasm alone (WebAssembly.compile in Node: the same engine) and the
// bundle's sizes complete the breakdown. Figures, no goals asserted.
//
//   [RUNS=5] node bench/worker_cold.mjs
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const root = resolve(new URL('.', import.meta.url).pathname, '..');
const { Miniflare } = createRequire(join(root, 'tools/package.json'))('miniflare');
const RUNS = Number(process.env.RUNS || 5);
const TOKEN = 'bench-token';
const SQL = "SELECT * FROM 'r2://TABLES/demo' LIMIT 100";

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else yield p;
  }
}

const deltalens = () => ({
  name: 'deltalens',
  serviceBindings: { SELF: 'deltalens' },
  modules: true,
  scriptPath: join(root, 'worker/build/index.js'),
  modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
  compatibilityDate: '2026-04-26',
  bindings: { DELTALENS_AUTH_TOKEN: TOKEN, DELTALENS_ALLOWED_TABLES: 'r2://TABLES/' },
  r2Buckets: ['TABLES'],
});
const baseline = () => ({
  name: 'baseline',
  modules: true,
  script: 'export default { async fetch() { return new Response("ok"); } };',
  compatibilityDate: '2026-04-26',
});

async function once(worker, withTable) {
  const t0 = performance.now();
  const mf = new Miniflare({ workers: [worker] });
  await mf.ready;
  const ready = performance.now() - t0;
  if (withTable) {
    const bucket = await mf.getR2Bucket('TABLES');
    const dir = join(root, 'tests/fixtures/demo');
    for (const f of files(dir)) {
      const b = readFileSync(f);
      await bucket.put(`demo/${relative(dir, f)}`, b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    }
  }
  const ask = async () => {
    const t = performance.now();
    const r = await mf.dispatchFetch('http://localhost/v1/query', {
      method: 'POST', body: SQL, headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = await r.text();
    if (r.status !== 200) throw new Error(`${r.status}: ${body.slice(0, 300)}`);
    return performance.now() - t;
  };
  const first = await ask();
  const warm = await ask();
  await mf.dispose();
  return { ready, first, warm };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;

const wasm = readFileSync(join(root, 'worker/build/index_bg.wasm'));
const js = readFileSync(join(root, 'worker/build/index.js'));
// (Node's V8 may be older than workerd's and refuse the module: then this part is skipped)
const compile = [];
let compileError = null;
for (let i = 0; i < RUNS && !compileError; i++) {
  const t = performance.now();
  try {
    await WebAssembly.compile(wasm);
    compile.push(performance.now() - t);
  } catch (e) {
    compileError = String(e.message || e).slice(0, 160);
  }
}
const base = { ready: [], first: [], warm: [] };
const ours = { ready: [], first: [], warm: [] };
for (let i = 0; i < RUNS; i++) {
  const b = await once(baseline(), false);
  const o = await once(deltalens(), true);
  for (const k of Object.keys(base)) { base[k].push(b[k]); ours[k].push(o[k]); }
  console.log(`run ${i + 1}: workerd ready ${o.ready.toFixed(0)} ms (baseline ${b.ready.toFixed(0)}), first answer ${o.first.toFixed(0)} ms, warm ${o.warm.toFixed(0)} ms`);
}
const own = ours.ready.map((r, i) => r - base.ready[i]);
const cold = own.map((r, i) => r + ours.first[i]);
console.log(`\nbundle: wasm ${wasm.length} bytes raw, index.js ${js.length}; both gzip -9 ${gzipSync(Buffer.concat([js, wasm]), { level: 9 }).length} bytes`);
console.log(`median (min–max) of ${RUNS}, ms:`);
console.log(`  V8 compiles the wasm (Node ${process.version}, WebAssembly.compile): ${compileError ? `not measured (${compileError})` : spread(compile)}`);
console.log(`  workerd ready with the worker: ${spread(ours.ready)}; with a JS-only worker: ${spread(base.ready)}; the worker's own share (script, wasm compile and instantiate): ${spread(own)}`);
console.log(`  first answer of a cold isolate (${SQL}): ${spread(ours.first)}; warm: ${spread(ours.warm)}`);
console.log(`  cold first answer = the worker's share of start-up + first answer: ${spread(cold)}`);

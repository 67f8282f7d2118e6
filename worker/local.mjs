// Serve the built worker (worker/build) in workerd through miniflare on 127.0.0.1:$PORT
// (8787), with the R2 binding TABLES kept on local disk ($DELTALENS_R2_DIR, default
// target/worker-r2). Every sub-directory of each path in $DELTALENS_R2_LOAD (comma-
// separated) is uploaded first, so `r2://TABLES/<dir name>` is that table. Vars and
// secrets come from the environment: DELTALENS_*, AWS_*, AZURE_STORAGE_*, UC_*, DATABRICKS_*. Stops on
// SIGINT/SIGTERM, or after $DELTALENS_STOP_AFTER seconds when set.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(new URL('.', import.meta.url).pathname, '..');
// miniflare (and workerd) come from tools/ (npm ci in scripts/setup)
const { Miniflare } = createRequire(join(root, 'tools/package.json'))('miniflare');
const port = Number(process.env.PORT || 8787);
const bindings = {};
for (const [k, v] of Object.entries(process.env)) {
  if (/^(DELTALENS_(?!R2_|STOP_|TEST_)|AWS_|AZURE_STORAGE_|UC_|DATABRICKS_)/.test(k)) bindings[k] = v;
}
const deltalens = {
  // named as in wrangler.toml, with its binding to itself (the fan-out's SELF)
  name: 'deltalens',
  serviceBindings: { SELF: 'deltalens' },
  modules: true,
  scriptPath: join(root, 'worker/build/index.js'),
  modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
  compatibilityDate: '2026-04-26',
  bindings,
  r2Buckets: ['TABLES'],
  // tables on loopback (nginx, moto in the tests) must be reachable: workerd's default
  // network refuses local addresses
  outboundService: { network: { allow: ['public', 'private', 'local'] } },
};
// Tests only (DELTALENS_TEST_FLAKY_SPLITS=1): a second Worker, FLAKY, between the
// fan-out and its split workers (the coordinator set with DELTALENS_FANOUT_BINDING=FLAKY).
// It answers a split's first call 503 (a transient storage failure) and passes the
// retry on; a query whose SQL holds `deltalens-test-split-fails` sees every call of its
// split 0 fail, and one holding `deltalens-test-split-hangs` sees its split 0 answer only
// after 30 s (the coordinator's wall time must end it); one holding
// `deltalens-test-split-reads-then-fails` has each split's first call answered by the
// split's worker (it reads its files) and then failed with a 503 that reports what it
// spent, as a split that read and then lost its storage does. Not part of the deployed
// Worker.
const flaky = {
  name: 'flaky',
  modules: true,
  compatibilityDate: '2026-04-26',
  serviceBindings: { UPSTREAM: 'deltalens' },
  script: `
    const seen = new Set();
    // as the split's worker fails: saying what it spent (nothing, unless it read first)
    const fail = (message) => new Response(JSON.stringify({ error: { code: 'storage_failed', message } }),
      { status: 503, headers: { 'content-type': 'application/json', 'x-deltalens-subrequests': '0', 'x-deltalens-bytes-read': '0' } });
    export default {
      async fetch(request, env) {
        const body = await request.text();
        let split = -1, sql = '';
        try { const j = JSON.parse(body); split = j.split && j.split.id; sql = j.sql || ''; } catch {}
        if (sql.includes('deltalens-test-split-fails') && split === 0) return fail('injected: split 0 always fails');
        if (sql.includes('deltalens-test-split-hangs') && split === 0) await new Promise((r) => setTimeout(r, 30000));
        const key = sql + '#' + split;
        const forward = () => env.UPSTREAM.fetch(new Request(request.url, { method: 'POST', headers: request.headers, body }));
        if (!seen.has(key) && sql.includes('deltalens-test-split-reads-then-fails')) {
          seen.add(key);
          const read = await forward();
          await read.arrayBuffer();
          const failed = fail('injected: the split read, then failed');
          for (const h of ['x-deltalens-subrequests', 'x-deltalens-bytes-read']) {
            if (read.headers.has(h)) failed.headers.set(h, read.headers.get(h));
          }
          return failed;
        }
        if (!seen.has(key)) { seen.add(key); return fail('injected: the first call of each split fails'); }
        return forward();
      },
    };`,
};
const testFlaky = process.env.DELTALENS_TEST_FLAKY_SPLITS === '1';
if (testFlaky) deltalens.serviceBindings.FLAKY = 'flaky';
const mf = new Miniflare({
  host: '127.0.0.1',
  port,
  r2Persist: process.env.DELTALENS_R2_DIR || join(root, 'target/worker-r2'),
  workers: testFlaky ? [deltalens, flaky] : [deltalens],
});
await mf.ready;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else yield p;
  }
}
const bucket = await mf.getR2Bucket('TABLES');
let uploaded = 0;
for (const base of (process.env.DELTALENS_R2_LOAD || '').split(',').filter(Boolean)) {
  for (const t of readdirSync(base)) {
    const dir = join(base, t);
    if (!statSync(dir).isDirectory()) continue;
    for (const f of files(dir)) {
      const b = readFileSync(f);
      await bucket.put(`${t}/${relative(dir, f)}`, b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
      uploaded++;
    }
  }
}
const access = process.env.DELTALENS_AUTH_TOKEN ? 'bearer token' : process.env.DELTALENS_PUBLIC === 'true' ? 'public' : 'not configured: every request is refused';
console.log(`deltalens worker on http://127.0.0.1:${port}/ (R2 TABLES: ${uploaded} objects uploaded; allowed tables: ${process.env.DELTALENS_ALLOWED_TABLES || 'none'}; access: ${access})`);
const stop = async () => { await mf.dispose(); process.exit(0); };
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
if (process.env.DELTALENS_STOP_AFTER) setTimeout(stop, Number(process.env.DELTALENS_STOP_AFTER) * 1000);

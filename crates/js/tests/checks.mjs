// What one runtime answers for each table, through the package's API: the documents
// (info, schema, history, files) and the rows (Arrow IPC, and JSON lines), plus the
// package's errors. Run in Node, in Chromium and in workerd by run.mjs, which writes the
// answers where tests/tests/js_package.rs compares them with the native reads and the
// corpus' canonical rows. Bytes are returned in base64 (a page and a worker return JSON).

const b64 = (bytes) => {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};

// documents as JSON text, a BigInt (a whole number beyond 2^53) as {"bigint": "digits"}
const doc = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? { bigint: x.toString() } : x));

export async function answers(deltalens, base, tables) {
  const out = {};
  for (const name of tables) {
    const t = await deltalens.openTable(`${base}/tables/${name}`);
    try {
      const a = {
        version: await t.version(),
        info: doc(await t.info()),
        schema: doc(await t.schema()),
        history: doc(await t.history({ limit: 5 })),
        files: doc(await t.files({ limit: 50 })),
        arrow: b64(await t.scan()),
        json: new TextDecoder().decode(await t.scan({ format: 'json', limit: 20 })),
      };
      a.batches = [];
      for await (const b of t.batches()) a.batches.push(b64(b));
      a.files_v0 = doc(await t.files({ version: 0, limit: 5 }));
      a.diff = doc(await t.diff({ from: 0, to: a.version, limit: 10 }));
      out[name] = a;
    } catch (e) {
      out[name] = { error: { name: e.name, code: e.code, message: e.message } };
    } finally {
      t.close();
    }
  }
  return out;
}

// The package's errors and hooks, as each runtime sees them.
export async function behaviour(deltalens, base, table) {
  const r = {};
  const caught = async (f) => {
    try { await f(); return null; } catch (e) {
      return { name: e.name, code: e.code, isClass: e instanceof deltalens.DeltaLensError, isError: e instanceof Error, message: e.message };
    }
  };
  r.notATable = await caught(async () => (await deltalens.openTable(`${base}/tables/no-such-table`)).info());
  r.badOption = await caught(() => deltalens.openTable(`${base}/tables/${table}`, { s3_endpoint: 'x' }));
  r.badParam = await caught(async () => (await deltalens.openTable(`${base}/tables/${table}`)).scan({ limitt: 3 }));
  r.badVersion = await caught(async () => (await deltalens.openTable(`${base}/tables/${table}`)).info({ version: 99999 }));
  r.badFilter = await caught(async () => (await deltalens.openTable(`${base}/tables/${table}`)).scan({ filter: 'nope ===' }));
  r.tableOption = await caught(async () => (await deltalens.openTable(`${base}/tables/${table}`)).info({ table: 'https://elsewhere.example/t' }));
  // the rows limit: a scan past it is an error naming it; a LIMIT within it is not
  r.maxRows = await caught(async () => (await deltalens.openTable(`${base}/tables/${table}`, { maxRows: 2 })).scan());
  const small = await (await deltalens.openTable(`${base}/tables/${table}`, { maxRows: 2 })).scan({ limit: 2, format: 'json' });
  r.withinMaxRows = JSON.parse(new TextDecoder().decode(small)).length;
  r.badMaxRows = await caught(() => deltalens.openTable(`${base}/tables/${table}`, { maxRows: -1 }));
  // an option of the wrong type, or out of its range, is an error naming it
  r.badOptionType = await caught(() => deltalens.openTable(`${base}/tables/${table}`, { s3VirtualHosted: 'yes' }));
  r.badTimeout = await caught(() => deltalens.openTable(`${base}/tables/${table}`, { timeoutMs: 0 }));
  r.badFetch = await caught(() => deltalens.openTable(`${base}/tables/${table}`, { fetch: 'fetch' }));
  r.notAnObject = await caught(() => deltalens.openTable(`${base}/tables/${table}`, ['relay']));
  // absent options: undefined and null values are no option
  r.nullOptions = (await (await deltalens.openTable(`${base}/tables/${table}`, { relay: undefined, s3Region: null })).version()) >= 0;
  // batches: nothing is held, so maxRows does not cut them; leaving the loop stops the
  // scan and the table goes on answering; format is not an option of it
  const bt = await deltalens.openTable(`${base}/tables/${table}`, { maxRows: 2 });
  r.batchesPastMaxRows = [];
  for await (const b of bt.batches()) r.batchesPastMaxRows.push(b64(b));
  let first = 0;
  for await (const b of bt.batches()) { first = b.length; break; }
  r.batchesBreak = { first, after: await bt.version() };
  r.batchSize = [];
  for await (const b of bt.batches({ batchSize: 2 })) r.batchSize.push(b64(b));
  r.badBatchSize = await caught(async () => { for await (const b of bt.batches({ batchSize: 0 })) void b; });
  r.batchesFormat = await caught(async () => { for await (const b of bt.batches({ format: 'csv' })) void b; });
  // a closed table refuses calls with a DeltaLensError; closing twice is nothing
  const c = await deltalens.openTable(`${base}/tables/${table}`);
  c.close();
  c.close();
  r.closed = await caught(() => c.info());
  // the fetch hook sees every request, and its header reaches the server
  const seen = [];
  const t = await deltalens.openTable(`${base}/tables/${table}`, {
    fetch: (req) => { seen.push(req.url); const h = new Headers(req.headers); h.set('x-deltalens-hook', '1'); return fetch(new Request(req, { headers: h })); },
  });
  r.hookVersion = await t.version();
  r.hookRequests = seen.length;
  r.hookHosts = [...new Set(seen.map((u) => new URL(u).host))];
  // SQL on the table opened; SQL naming another table (or host) is refused before any
  // request, so it cannot borrow this table's options
  const q = await t.query(`SELECT COUNT(*) AS n FROM '${base}/tables/${table}'`, { format: 'json' });
  r.queryCount = new TextDecoder().decode(q).trim();
  const before = seen.length;
  r.otherTable = await caught(() => t.query(`SELECT * FROM 'http://169.254.169.254/latest/t'`));
  r.otherTableRequests = seen.length - before;
  // a key a hostile log holds (hostile/proto, written by run.mjs) stays an own key, not
  // the object's prototype
  const [f] = await (await deltalens.openTable(`${base}/hostile/proto`)).files();
  const min = f.stats.minValues;
  r.proto = { own: Object.hasOwn(min, '__proto__'), prototype: Object.getPrototypeOf(min) === Object.prototype, polluted: min.polluted === 1 };
  return r;
}

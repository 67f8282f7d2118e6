// The explorer's query worker (a module Web Worker the page starts from its own origin):
// it loads the query module (web/query) and answers the page's messages, one query at a
// time. The page ends the worker to cancel a query: its requests, and the pool below
// with theirs, end with it.
//
//   {init: {js, wasm}}          load the module (the page's content-hashed paths)
//   {id, request}               run a query: {id, answer} (JSON text) or {id, error}
//   {id, download: format}      the last result as a file: {id, answer} (bytes) or {id, error}
//   {id, split}                 (in a worker of the pool) read one split of a query:
//                               {id, answer} (its partial state, Arrow IPC) or {id, error}
// While a query runs: {id, progress} (JSON text) every 250 ms.
//
// The pool: a query worth cutting into splits is planned by the module here, which hands
// each split to `globalThis.deltalensPool.split(json)`. The pool starts workers from this
// same script on demand (one per split in flight: the module sends at most as many at once
// as the page allowed workers) and gives each one split at a time; `report()` says how
// long each was busy and what the splits read (requests, bytes) since `reset()`.
let ready = null;
let mod = null;
let init = null;

const pool = {
  workers: [],
  free: [],
  busy: [],
  requests: 0,
  bytes: 0,
  jobs: new Map(),
  next: 1,
  start(i) {
    const w = new Worker(self.location.href, { type: 'module', name: `deltalens split worker ${i + 1}` });
    w.onmessage = (ev) => {
      const m = ev.data || {};
      const job = this.jobs.get(m.id);
      if (!job || m.progress !== undefined) return;
      this.jobs.delete(m.id);
      this.busy[job.i] += performance.now() - job.start;
      if (m.spent) {
        const spent = JSON.parse(m.spent);
        this.requests += spent.requests;
        this.bytes += spent.bytes;
      }
      this.free.push(job.i);
      if (m.error !== undefined) job.reject(new Error(m.error)); else job.resolve(m.answer);
    };
    w.onerror = (ev) => {
      ev.preventDefault();
      // its jobs fail; a new worker takes its place
      for (const [id, job] of this.jobs) {
        if (job.i !== i) continue;
        this.jobs.delete(id);
        job.reject(new Error(`worker ${i + 1} of the pool stopped: ${ev.message || 'it could not start'}`));
      }
      w.terminate();
      this.workers[i] = this.start(i);
      if (!this.free.includes(i)) this.free.push(i);
    };
    w.postMessage({ init });
    return w;
  },
  // split `id` goes to worker `id` when it is free: a query asked again finds each split's
  // bytes in the cache of the worker that read them
  split(json, id) {
    const at = this.free.indexOf(id);
    let i = at >= 0 ? this.free.splice(at, 1)[0] : this.free.pop();
    if (i === undefined) {
      i = this.workers.length;
      this.busy.push(0);
      this.workers.push(this.start(i));
    }
    const job = this.next++;
    return new Promise((resolve, reject) => {
      this.jobs.set(job, { resolve, reject, i, start: performance.now() });
      this.workers[i].postMessage({ id: job, split: json });
    });
  },
};
globalThis.deltalensPool = {
  split: (json, id) => pool.split(json, id),
  report: () => JSON.stringify({ busy_ms: pool.busy.map((ms) => Math.round(ms)), requests: pool.requests, bytes: pool.bytes }),
  reset: () => { pool.busy = pool.busy.map(() => 0); pool.requests = 0; pool.bytes = 0; },
};

function message(e) {
  return String((e && e.message) || e);
}

self.onmessage = async (ev) => {
  const m = ev.data || {};
  if (m.init) {
    init = m.init;
    ready = import(m.init.js).then(async (q) => {
      await q.default({ module_or_path: m.init.wasm });
      mod = q;
    });
    return;
  }
  try {
    if (!ready) throw new Error('the query module was not loaded');
    await ready;
    if (m.download !== undefined) {
      const bytes = mod.download(String(m.download));
      self.postMessage({ id: m.id, answer: bytes }, [bytes.buffer]);
      return;
    }
    if (m.split !== undefined) {
      const bytes = await mod.split(String(m.split));
      self.postMessage({ id: m.id, answer: bytes, spent: mod.progress() }, [bytes.buffer]);
      return;
    }
    const timer = setInterval(() => self.postMessage({ id: m.id, progress: mod.progress() }), 250);
    try {
      const answer = await mod.query(String(m.request));
      self.postMessage({ id: m.id, answer });
    } finally {
      clearInterval(timer);
    }
  } catch (e) {
    self.postMessage({ id: m.id, error: message(e) });
  }
};

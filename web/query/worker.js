// The explorer's query worker (a module Web Worker the page starts from its own origin):
// it loads the query module (web/query) and answers the page's messages, one query at a
// time. The page ends the worker to cancel a query (its requests are aborted with it).
//
//   {init: {js, wasm}}          load the module (the page's content-hashed paths)
//   {id, request}               run a query: {id, answer} (JSON text) or {id, error}
//   {id, download: format}      the last result as a file: {id, answer} (bytes) or {id, error}
// While a query runs: {id, progress} (JSON text) every 250 ms.
let ready = null;
let mod = null;

function message(e) {
  return String((e && e.message) || e);
}

self.onmessage = async (ev) => {
  const m = ev.data || {};
  if (m.init) {
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

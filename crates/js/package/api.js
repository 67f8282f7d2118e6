// The API over the wasm module, shared by the entries for browsers and bundlers
// (index.js), Node (node.js) and Cloudflare Workers (workerd.js): each loads the module
// its own way and hands its exports here.

/** An error from deltalens: `code` is stable (`not_a_table`, `invalid_parameter`,
 * `storage_permission_denied`, `version_not_found`, …), `message` says what happened
 * and what to try. */
export class DeltaLensError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'DeltaLensError';
    this.code = code;
  }
}

function rethrow(e) {
  if (e && e.name === 'DeltaLensError' && typeof e.code === 'string') throw new DeltaLensError(e.code, e.message);
  throw e;
}

export function api(load) {
  class Table {
    #t;
    #url;
    #closed = false;
    constructor(t) { this.#t = t; this.#url = t.url; }
    // a call on a closed table is refused with a DeltaLensError (the wasm object is gone)
    #call(f) {
      if (this.#closed) return Promise.reject(new DeltaLensError('table_closed', 'the table was closed: open it again'));
      return f(this.#t).catch(rethrow);
    }
    /** The table's URL as opened. */
    get url() { return this.#url; }
    version() { return this.#call((t) => t.version()); }
    info(options) { return this.#call((t) => t.info(options)); }
    health(options) { return this.#call((t) => t.health(options)); }
    schema(options) { return this.#call((t) => t.schema(options)); }
    history(options) { return this.#call((t) => t.history(options)); }
    files(options) { return this.#call((t) => t.files(options)); }
    scan(options) { return this.#call((t) => t.scan(options)); }
    changes(options) { return this.#call((t) => t.changes(options)); }
    diff(options) { return this.#call((t) => t.diff(options)); }
    /** A scan's rows one record batch at a time, each as Arrow IPC stream bytes:
     * `for await (const bytes of t.batches({ columns, filter }))`. The scan reads only as
     * the loop asks; leaving the loop stops it. */
    batches(options) {
      const table = this;
      return (async function* () {
        const it = await table.#call(async (t) => t.batches(options));
        try {
          for (;;) {
            const bytes = await it.next().catch(rethrow);
            if (bytes === undefined) return;
            yield bytes;
          }
        } finally {
          it.stop();
          it.free();
        }
      })();
    }
    /** A query of the SQL subset on this table (its FROM must name the table opened). */
    query(sql, options) {
      if (typeof sql !== 'string') return Promise.reject(new DeltaLensError('invalid_parameter', 'the query is not a string'));
      return this.#call((t) => t.query(sql, options));
    }
    /** Free the table's memory now (it is freed when garbage-collected otherwise); again, nothing. */
    close() {
      if (this.#closed) return;
      this.#closed = true;
      this.#t.free();
    }
  }

  async function openTable(url, options) {
    const wasm = await load();
    if (typeof url !== 'string') throw new DeltaLensError('invalid_table_url', 'the table URL is not a string');
    return new Table(await wasm.openTable(url, options).catch(rethrow));
  }

  return { openTable, Table };
}

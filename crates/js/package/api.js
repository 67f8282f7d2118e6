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
    constructor(t) { this.#t = t; }
    /** The table's URL as opened. */
    get url() { return this.#t.url; }
    version() { return this.#t.version().catch(rethrow); }
    info(options) { return this.#t.info(options).catch(rethrow); }
    health(options) { return this.#t.health(options).catch(rethrow); }
    schema(options) { return this.#t.schema(options).catch(rethrow); }
    history(options) { return this.#t.history(options).catch(rethrow); }
    files(options) { return this.#t.files(options).catch(rethrow); }
    scan(options) { return this.#t.scan(options).catch(rethrow); }
    changes(options) { return this.#t.changes(options).catch(rethrow); }
    diff(options) { return this.#t.diff(options).catch(rethrow); }
    /** A query of the SQL subset on this table (its FROM must name the table opened). */
    query(sql, options) {
      if (typeof sql !== 'string') return Promise.reject(new DeltaLensError('invalid_parameter', 'the query is not a string'));
      return this.#t.query(sql, options).catch(rethrow);
    }
    /** Free the table's memory now (it is freed when garbage-collected otherwise). */
    close() { this.#t.free(); }
  }

  async function openTable(url, options) {
    const wasm = await load();
    if (typeof url !== 'string') throw new DeltaLensError('invalid_table_url', 'the table URL is not a string');
    return new Table(await wasm.openTable(url, options).catch(rethrow));
  }

  return { openTable, Table };
}

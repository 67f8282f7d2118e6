// deltalens as the harness's third reader (README: "A third reader: the hook"): the npm
// package's wasm module (scripts/build-js: target/js/package/pkg), served beside this file
// as /ext/. `scanIpc(tableUrl, opts)` reads the Delta table (its log, then its files) and
// returns the rows as an Arrow IPC stream, as the measurement of the npm package
// does: openTable(url, {maxRows: 1e7, maxDecodedBytes: 4e9}), then scan({format: 'arrow',
// limit, columns, filter}).
import init, { openTable } from './pkg/deltalens_js.js';

export default init;

export async function scanIpc(url, opts = {}) {
  const table = await openTable(url, { maxRows: 1e7, maxDecodedBytes: 4e9 });
  const options = { format: 'arrow' };
  if (opts.limit !== undefined) options.limit = opts.limit;
  if (opts.columns) options.columns = opts.columns;
  if (opts.filter) options.filter = opts.filter;
  return table.scan(options);
}

// The package's declarations as a TypeScript user meets them: this file must type-check
// with tsc --strict (scripts/js-test), and the lines marked @ts-expect-error must not.
import { openTable, DeltaLensError, type Overview, type DeltaSchema, type FileRow, Table } from '../package/index.js';

async function use(): Promise<void> {
  const t: Table = await openTable('https://example.com/tables/demo', { s3Region: 'auto', timeoutMs: 5000 });
  const v: number = await t.version();
  const o: Overview = await t.info({ version: v });
  const rows: number | bigint | null = o.num_rows;
  const s: DeltaSchema = await t.schema({ timestamp: new Date() });
  const names: string[] = s.fields.map((f) => f.name);
  const files: FileRow[] = await t.files({ limit: 10, offset: 0 });
  const size: number = files.reduce((a, f) => a + Number(f.size), 0);
  // @ts-expect-error: a size may be a bigint
  const unsafe: number = files[0].size;
  const arrow: Uint8Array = await t.scan({ columns: names, filter: "id > 3", limit: 100 });
  const csv: Uint8Array = await t.scan({ format: 'csv' });
  for await (const batch of t.batches({ columns: names, limit: 10, batchSize: 4 })) {
    const b: Uint8Array = batch;
    void b;
  }
  const changes: Uint8Array = await t.changes({ from: 0, to: 3 });
  const d: Record<string, unknown> = await t.diff({ from: 0, to: v, limit: 5 });
  const q: Uint8Array = await t.query("SELECT COUNT(*) FROM 'https://example.com/tables/demo'", { format: 'json' });
  // @ts-expect-error: a Table comes from openTable
  new Table();
  const hooked = await openTable('s3://bucket/t', { fetch: (r: Request) => fetch(r) });
  // @ts-expect-error: a format that does not exist
  await t.scan({ format: 'xml' });
  // @ts-expect-error: changes need a start
  await t.changes({});
  // @ts-expect-error: an option of another name
  await openTable('https://example.com/t', { s3_endpoint: 'x' });
  try {
    await t.info();
  } catch (e) {
    if (e instanceof DeltaLensError) {
      const code: string = e.code;
      console.log(code, e.message);
    }
  }
  t.close();
  console.log(rows, size, unsafe, arrow, csv, changes, d, q, hooked);
}
void use;

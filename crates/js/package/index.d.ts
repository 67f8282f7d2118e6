// TypeScript declarations of the deltalens package (checked by crates/js/tests/types.ts).

/** Where and how to read the table: the store's endpoint and credentials, or a relay. */
export interface OpenOptions {
  /** S3-compatible endpoint (`https://<account>.r2.cloudflarestorage.com`); AWS when unset. */
  s3Endpoint?: string;
  /** S3 region (`us-east-1` when unset; R2 uses `auto`). */
  s3Region?: string;
  /** S3 access key id; requests are anonymous unless it and the secret are set. */
  s3AccessKeyId?: string;
  s3SecretAccessKey?: string;
  /** The session token of temporary credentials. */
  s3SessionToken?: string;
  /** `bucket.host/key` instead of `host/bucket/key`. */
  s3VirtualHosted?: boolean;
  /** An Azure SAS token (with or without the leading `?`). */
  azureSas?: string;
  /** Azure blob endpoint including the account; `https://<account>.blob.core.windows.net` when unset. */
  azureEndpoint?: string;
  /** The storage account of an `az://container/path` URL. */
  azureAccount?: string;
  /** A relay (`deltalens serve`, the deltalens worker) that reads the table with its own credentials. */
  relay?: string;
  /** Bearer token for the relay, sent to the relay's origin only. */
  relayToken?: string;
  /** Called instead of the global `fetch`, with each (already signed) `Request`. */
  fetch?: (request: Request) => Response | Promise<Response>;
  /** A server runtime (no CORS request mode); detected in Cloudflare Workers. */
  server?: boolean;
  /** How long a request may wait for its answer's headers (default 30000). */
  timeoutMs?: number;
  /** Rows a call may return or hold (default 100,000): past it, a `rows_budget_exceeded` error. */
  maxRows?: number;
  /** Bytes of column data a call may decode (default 256 MiB): past it, an error naming the limit. */
  maxDecodedBytes?: number;
}

/** A version to read: `version` (Spark's VERSION AS OF) or `timestamp` (TIMESTAMP AS OF). */
export interface At {
  version?: number | bigint;
  timestamp?: string | Date;
}

export type RowFormat = 'arrow' | 'json' | 'jsonl' | 'csv';

export interface ScanOptions extends At {
  /** The columns to read, in order (all by default). */
  columns?: string[];
  /** A SQL condition (`event_date = '2024-01-01' AND id > 10`): partitions and files are pruned by it. */
  filter?: string;
  /** At most this many rows. */
  limit?: number;
  /** `arrow` (IPC stream, the default), `json` (an array of objects), `jsonl` (JSON lines) or `csv`. */
  format?: RowFormat;
}

export interface ChangesOptions {
  /** The first version (or a timestamp) of the range, inclusive. */
  from: number | bigint | string | Date;
  /** The last version (or a timestamp), inclusive; the latest by default. */
  to?: number | bigint | string | Date;
  columns?: string[];
  filter?: string;
  limit?: number;
  format?: RowFormat;
}

export interface ProtocolSummary {
  min_reader_version: number;
  min_writer_version: number;
  reader_features: string[] | null;
  writer_features: string[] | null;
}

/** A whole number: a `bigint` when beyond 2^53 (as a hostile or enormous table may give). */
export type Int = number | bigint;

/** The overview of a version (`deltalens info --json`). */
export interface Overview {
  location: string;
  version: number;
  commit_timestamp: Int | null;
  num_files: Int | null;
  size_bytes: Int | null;
  num_rows: Int | null;
  protocol: ProtocolSummary;
  properties: Record<string, string>;
  partition_columns: string[];
  created_time: Int | null;
  name: string | null;
  description: string | null;
  id: string;
  checkpoint_version: number | null;
  warnings: string[];
  [more: string]: unknown;
}

/** A field of the schema, as the Delta log writes it: `type` is a primitive's name
 * (`long`, `decimal(10,2)`, `timestamp`) or a nested type (`struct`, `array`, `map`). */
export interface DeltaField {
  name: string;
  type: string | Record<string, unknown>;
  nullable: boolean;
  metadata: Record<string, unknown>;
}

/** The table's schema (`deltalens schema --json`): the Delta log's struct type. */
export interface DeltaSchema {
  type: 'struct';
  fields: DeltaField[];
}

/** An active file (`deltalens files --json`). */
export interface FileRow {
  path: string;
  size: Int;
  modification_time: Int;
  num_records: Int | null;
  partition_values: Record<string, unknown>;
  stats: unknown;
  deletion_vector: unknown;
  deleted_rows: Int | null;
}

/** A commit (`deltalens history --json`), newest first. */
export type Commit = Record<string, unknown> & { version: number; timestamp: Int | null; operation: string | null };

/** A Delta table opened for reading. */
export declare class Table {
  private constructor();
  /** The table's URL as opened. */
  readonly url: string;
  /** The latest version's number. */
  version(): Promise<number>;
  info(options?: At): Promise<Overview>;
  /** The table health report (`deltalens health --json`). */
  health(options?: At & { now?: string | Date; series?: number }): Promise<Record<string, unknown>>;
  schema(options?: At): Promise<DeltaSchema>;
  history(options?: { limit?: number }): Promise<Commit[]>;
  files(options?: At & { limit?: number; offset?: number }): Promise<FileRow[]>;
  /** Rows: Arrow IPC stream bytes (`tableFromIPC` of apache-arrow reads them), or JSON, JSON lines, CSV. */
  scan(options?: ScanOptions): Promise<Uint8Array>;
  /** The rows one record batch at a time, each Arrow IPC stream bytes (`for await … of`); the scan reads as the loop asks and stops when it is left. `maxRows` does not apply (nothing is held); `maxDecodedBytes` does. */
  batches(options?: Omit<ScanOptions, 'format'> & { /** Rows per batch at most. */ batchSize?: number }): AsyncIterableIterator<Uint8Array>;
  /** The change data feed, with `_change_type`, `_commit_version` and `_commit_timestamp`. */
  changes(options: ChangesOptions): Promise<Uint8Array>;
  /** What changed between two versions (`deltalens diff --json`): files, deletion vectors, schema, protocol, properties, rows. */
  diff(options: { from: number; to: number; columns?: string[]; limit?: number }): Promise<Record<string, unknown>>;
  /** A query of the SQL subset on this table (`SELECT … FROM '<this url>' VERSION AS OF 3 WHERE … GROUP BY … LIMIT n`); a FROM naming another table is refused. */
  query(sql: string, options?: { format?: RowFormat }): Promise<Uint8Array>;
  /** Free the table's memory now. */
  close(): void;
}

/** Open the Delta table at `url` (`https://…`, `s3://…`, `az://…`, `abfss://…`, `gs://…`); nothing is read yet. */
export declare function openTable(url: string, options?: OpenOptions): Promise<Table>;


/** An error from deltalens, with a stable `code`. */
export declare class DeltaLensError extends Error {
  readonly code: string;
  constructor(code: string, message: string);
}

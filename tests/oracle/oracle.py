#!/usr/bin/env python3
"""Differential-test oracle: read a Delta table with deltalake or DuckDB and write the
result to stdout as an Arrow IPC stream.

    oracle.py ENGINE TABLE [--version N] [--columns a,b] [--filter SQL] [--limit N]

ENGINE is `deltalake` (QueryBuilder SQL over DeltaTable(path, version=N)) or `duckdb`
(delta_scan with the duckdb-extension-delta package, loaded from its file; latest only).
"""
import argparse
import os
import sys

import pyarrow as pa


def quote(c):
    return '"' + c.replace('"', '""') + '"'


def sql(a, source):
    cols = ", ".join(quote(c) for c in a.columns.split(",")) if a.columns else "*"
    q = f"SELECT {cols} FROM {source}"
    if a.filter:
        q += f" WHERE {a.filter}"
    if a.limit is not None:
        q += f" LIMIT {a.limit}"
    return q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("engine", choices=["deltalake", "duckdb"])
    ap.add_argument("table")
    ap.add_argument("--version", type=int)
    ap.add_argument("--columns")
    ap.add_argument("--filter")
    ap.add_argument("--limit", type=int)
    a = ap.parse_args()
    if a.engine == "deltalake":
        from deltalake import DeltaTable, QueryBuilder
        dt = DeltaTable(a.table, version=a.version) if a.version is not None else DeltaTable(a.table)
        reader = QueryBuilder().register("t", dt).execute(sql(a, "t"))
        table = pa.table(reader.read_all()) if hasattr(reader, "read_all") else pa.table(reader)
    else:
        import duckdb
        import duckdb_extension_delta
        if a.version is not None:
            sys.exit("duckdb oracle reads the latest version only")
        ext = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), "extensions",
                           "v" + duckdb.__version__, "delta.duckdb_extension")
        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        con.execute(f"LOAD '{ext}'")
        path = a.table.replace("'", "''")
        table = con.execute(sql(a, f"delta_scan('{path}')")).to_arrow_table()
    # plain types only (no views, no large offsets) so the reader side stays simple
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_string_view(t) or pa.types.is_large_string(t):
            t = pa.string()
        elif pa.types.is_binary_view(t) or pa.types.is_large_binary(t):
            t = pa.binary()
        fields.append(pa.field(f.name, t))
    table = table.cast(pa.schema(fields))
    with pa.ipc.new_stream(sys.stdout.buffer, table.schema) as w:
        w.write_table(table)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The worker's aggregates against DuckDB (delta_scan from the duckdb-extension-delta
package, loaded from its file) on the demo table, which the worker reads from R2.

  duckdb_check.py WORKER_URL DEMO_TABLE_DIR
"""
import decimal
import json
import os
import sys
import urllib.request

import duckdb
import duckdb_extension_delta

worker, demo = sys.argv[1], sys.argv[2]
token = os.environ.get("DELTALENS_WORKER_TOKEN", "")

ext = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), "extensions",
                   "v" + duckdb.__version__, "delta.duckdb_extension")
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute(f"LOAD '{ext}'")

QUERIES = [
    "SELECT brand, COUNT(*) AS n, SUM(price) AS s, MIN(price) AS lo, MAX(price) AS hi, AVG(price) AS a "
    "FROM {T} WHERE price > 5 GROUP BY brand ORDER BY n DESC, brand NULLS FIRST",
    "SELECT event_date, event_type, COUNT(*) AS n FROM {T} GROUP BY event_date, event_type ORDER BY 1, 2",
    "SELECT COUNT(*) AS n, COUNT(brand) AS b, MIN(event_date) AS d0, MAX(event_date) AS d1 FROM {T}",
    "SELECT user_id, price FROM {T} WHERE brand = 'nars' AND price > 900 ORDER BY price DESC, user_id LIMIT 5",
]


def norm(v):
    if v is None:
        return None
    if isinstance(v, (float, decimal.Decimal)):
        return round(float(v), 6)
    return str(v) if not isinstance(v, (int, str)) else v


checked = 0
for q in QUERIES:
    want = [tuple(norm(v) for v in row) for row in
            con.execute(q.replace("{T}", f"delta_scan('{demo}')")).fetchall()]
    req = urllib.request.Request(
        f"{worker}/v1/query?format=json",
        data=q.replace("{T}", "'r2://TABLES/demo'").encode(),
        headers={"Authorization": f"Bearer {token}"}, method="POST")
    with urllib.request.urlopen(req, timeout=120) as r:
        rows = json.loads(r.read(), parse_float=decimal.Decimal)
    got = [tuple(norm(v) for v in row.values()) for row in rows]
    if got != want:
        print(f"MISMATCH for {q}\n worker: {got[:5]}\n duckdb: {want[:5]}")
        sys.exit(1)
    checked += len(want)
print(f"duckdb: {len(QUERIES)} queries, {checked} result rows equal to DuckDB {duckdb.__version__} delta_scan")

#!/usr/bin/env python3
"""The worker's answers against the `deltalens` CLI binary's for the same requests: the
worker reads the tables from R2, nginx and moto S3, the CLI from the local folder they
were loaded from. JSON documents are compared as JSON (without `location`), rows as text
(sorted where the CLI's parallel scan may order them differently), Arrow streams through
pyarrow.

  cli_check.py WORKER_URL CLI_BINARY STORE_DIR HTTP_BASE
"""
import io
import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pyarrow.ipc as ipc

worker, cli, store, http_base = sys.argv[1:5]
token = os.environ.get("DELTALENS_WORKER_TOKEN", "")


def call(method, route, params, body=None):
    url = f"{worker}{route}?{urllib.parse.urlencode(params)}"
    req = urllib.request.Request(url, data=body.encode() if body else None, method=method,
                                 headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        sys.exit(f"{method} {route} {params}: HTTP {e.code}: {e.read().decode()[:500]}")


def run_cli(*args):
    return subprocess.run([cli, *args], check=True, capture_output=True, timeout=300).stdout


def urls(t):
    return [f"r2://TABLES/{t}", f"{http_base}/{t}", f"s3://deltalens/tables/{t}",
            f"abfss://deltalens@devstoreaccount1.dfs.core.windows.net/tables/{t}"]


def same_json(a, b):
    a, b = json.loads(a), json.loads(b)
    for d in (a, b):
        if isinstance(d, dict):
            d.pop("location", None)
    return a == b


def lines(b, sort):
    ls = b.decode().splitlines()
    return sorted(ls) if sort else ls


checks = 0
for t in ["demo", "checkpointed", "cdf", "column_mapping"]:
    local = os.path.join(store, t)
    for u in urls(t):
        for doc, extra in [("info", []), ("schema", []), ("files", []), ("info", ["--version", "1"])]:
            params = {"table": u}
            if extra:
                params["version"] = extra[1]
            got = call("GET", f"/v1/{doc}", params)
            want = run_cli(doc, local, "--json", *extra)
            assert same_json(got, want), f"{doc} {u} {extra}"
            checks += 1
        got = call("GET", "/v1/history", {"table": u, "limit": "3"})
        assert same_json(got, run_cli("history", local, "--limit", "3", "--json")), f"history {u}"
        checks += 1
        # rows: the whole table (CLI in parallel: order differs), a preview, filters, columns
        for params, args, sort in [
            ({}, [], True),
            ({"limit": "25"}, ["--limit", "25"], False),
            ({"version": "1"}, ["--version", "1"], True),
        ]:
            # (CSV holds no nested columns: column_mapping has a struct)
            for fmt in ["jsonl"] + (["csv"] if t != "column_mapping" else []):
                got = call("GET", "/v1/scan", {"table": u, "format": fmt, **params})
                want = run_cli("scan", local, "--format", fmt, *args)
                if fmt == "csv":  # the header stays first
                    g, w = got.decode().splitlines(), want.decode().splitlines()
                    assert g[0] == w[0] and sorted(g[1:]) == sorted(w[1:]), f"scan csv {u} {params}"
                else:
                    assert lines(got, sort) == lines(want, sort), f"scan {u} {params}"
                checks += 1
        got = call("GET", "/v1/scan", {"table": u, "format": "arrow"})
        want = run_cli("scan", local, "--format", "arrow", "--threads", "1")
        ta = ipc.open_stream(io.BytesIO(got)).read_all()
        tb = ipc.open_stream(io.BytesIO(want)).read_all()
        assert ta.equals(tb), f"arrow {u}"
        checks += 1

demo = os.path.join(store, "demo")
for u in urls("demo"):
    for params, args in [
        ({"from": "1"}, ["--from", "1"]),
        ({"from": "2", "to": "4", "columns": "user_id,price"}, ["--from", "2", "--to", "4", "--columns", "user_id,price"]),
        ({"from": "0", "filter": "price > 500"}, ["--from", "0", "--filter", "price > 500"]),
    ]:
        got = call("GET", "/v1/changes", {"table": u, "format": "jsonl", **params})
        want = run_cli("changes", demo, "--format", "jsonl", *args)
        assert lines(got, True) == lines(want, True), f"changes {u} {params}"
        checks += 1
    for q in [
        "SELECT brand, COUNT(*) AS n, SUM(price), MIN(price), MAX(price), AVG(price) FROM '{T}' GROUP BY brand ORDER BY n DESC, brand",
        "SELECT user_id, price FROM '{T}' VERSION AS OF 3 WHERE price > 900 ORDER BY price",
        "SELECT _commit_version, _change_type, COUNT(*) FROM table_changes('{T}', 1, 6) GROUP BY _commit_version, _change_type ORDER BY 1, 2",
    ]:
        got = call("POST", "/v1/query", {"format": "jsonl"}, q.replace("{T}", u))
        want = run_cli("query", q.replace("{T}", demo), "--format", "jsonl")
        assert got == want, f"query {u}: {q}"
        checks += 1
print(f"cli: {checks} worker answers equal to the deltalens CLI binary's (4 tables x 4 stores, 5 routes, 3 queries)")

#!/usr/bin/env python3
"""The relay protocol, byte for byte, against a relay (`deltalens serve` or the worker):

  relay_check.py BASE TABLE_URL LOCAL_DIR [--token T] [--origin O] [--budget-bytes N]

For TABLE_URL (a table the relay serves, whose files are LOCAL_DIR): the log listing
equals the directory's, paged in path order; every log file and a data file read whole,
by bounded range, open range and suffix equal the local bytes; HEAD gives the length
without a body; a range past the end is 416; paths outside the table are 400; another
table is 403; without the token 401 (when one is needed); CORS only for ORIGIN. Exits 1
on any failure and prints how many checks ran.
"""
import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

checks, failures = 0, []


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print(f"FAIL {what}", flush=True)


def failed_as(status, body, want_status, want_code, what):
    """A failure answered as the front ends' one table says (crates/api/src/status.rs):
    the status and `{"error": {"code"}}`, the same from `deltalens serve` and the worker."""
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    check((status, code) == (want_status, want_code),
          f"{what}: {status} {code!r}, want {want_status} {want_code!r} ({body[:200]!r})")


def call(base, route, params, method="GET", headers=None, token=None):
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(f"{base}{route}?{urllib.parse.urlencode(params)}", method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("table")
    ap.add_argument("local")
    ap.add_argument("--token")
    ap.add_argument("--origin")
    ap.add_argument("--no-list", action="store_true", help="the store cannot list (plain HTTP)")
    ap.add_argument("--budget", action="store_true", help="the relay takes budget_bytes= (the worker)")
    a = ap.parse_args()
    base, table, t = a.base.rstrip("/"), a.table, a.token

    if a.budget:
        # first, before any read fills the worker's cache (cache hits cost no budget)
        log0 = "_delta_log/00000000000000000000.json"
        status, _, body = call(base, "/v1/object", {"table": table, "path": log0, "budget_bytes": "10"}, token=t)
        failed_as(status, body, 413, "bytes_budget_exceeded", "a read over the byte budget")

    # the listing: the log directory's files, in path order (501 where the store has none)
    status, _, body = call(base, "/v1/list", {"table": table, "prefix": "_delta_log/"}, token=t)
    local_log = sorted(f"_delta_log/{f}" for f in os.listdir(os.path.join(a.local, "_delta_log"))
                       if os.path.isfile(os.path.join(a.local, "_delta_log", f)))
    if a.no_list:
        failed_as(status, body, 501, "listing_unsupported", "list without a listing")
    else:
        check(status == 200, f"list: {status} {body[:200]!r}")
        listed = json.loads(body)["objects"] if status == 200 else []
        check([o["path"] for o in listed] == local_log, "the listing is the log directory")
        check(all(o["size"] == os.path.getsize(os.path.join(a.local, o["path"])) for o in listed), "listed sizes")

    data = next((os.path.relpath(os.path.join(d, f), a.local) for d, _, fs in os.walk(a.local)
                 for f in fs if f.endswith(".parquet") and "_delta_log" not in d), None)
    paths = local_log + ([data.replace(os.sep, "/")] if data else [])
    for p in paths:
        whole = open(os.path.join(a.local, p), "rb").read()
        n = len(whole)
        obj = {"table": table, "path": p}
        status, h, body = call(base, "/v1/object", obj, token=t)
        check(status == 200 and body == whole, f"{p} whole: {status}")
        if n >= 4:
            status, h, body = call(base, "/v1/object", obj, headers={"Range": "bytes=1-2"}, token=t)
            check(status == 206 and body == whole[1:3], f"{p} bytes=1-2: {status} {body[:20]!r}")
            status, h, body = call(base, "/v1/object", obj, headers={"Range": f"bytes={n - 3}-"}, token=t)
            check(status == 206 and body == whole[n - 3:], f"{p} open range: {status}")
            status, h, body = call(base, "/v1/object", obj, headers={"Range": "bytes=-3"}, token=t)
            cr = {k.lower(): v for k, v in h.items()}.get("content-range", "")
            check(status == 206 and body == whole[-3:] and cr == f"bytes {n - 3}-{n - 1}/{n}",
                  f"{p} suffix: {status} {cr}")
        status, h, body = call(base, "/v1/object", obj, method="HEAD", token=t)
        length = {k.lower(): v for k, v in h.items()}.get("content-length")
        check(status == 200 and body == b"" and length == str(n), f"{p} HEAD: {status} length {length}")
        status, h, _ = call(base, "/v1/object", obj, headers={"Range": f"bytes={n + 10}-"}, token=t)
        check(status == 416, f"{p} past the end: {status}")

    for bad in ["../x", "/etc/passwd", "a//b", "_delta_log/../../x"]:
        status, _, body = call(base, "/v1/object", {"table": table, "path": bad}, token=t)
        failed_as(status, body, 400, "invalid_parameter", f"path {bad!r}")
    status, _, body = call(base, "/v1/object", {"table": "s3://not-relayed/t", "path": local_log[0]}, token=t)
    failed_as(status, body, 403, "table_not_allowed", "another table")
    status, _, body = call(base, "/v1/object", {"table": table, "path": "_delta_log/none.json"}, token=t)
    failed_as(status, body, 404, "not_found", "a missing object")
    status, _, body = call(base, "/v1/object", {"table": table}, token=t)
    failed_as(status, body, 400, "invalid_parameter", "no path")
    if t:
        status, _, _ = call(base, "/v1/object", {"table": table, "path": local_log[0]})
        check(status == 401, f"no token: {status}")
    if a.origin:
        hdr = {"Origin": a.origin, "Range": "bytes=0-1"}
        _, h, _ = call(base, "/v1/object", {"table": table, "path": local_log[0]}, headers=hdr, token=t)
        h = {k.lower(): v for k, v in h.items()}
        check(h.get("access-control-allow-origin") == a.origin and "content-range" in h.get("access-control-expose-headers", ""),
              f"CORS for {a.origin}: {h}")
        _, h, _ = call(base, "/v1/object", {"table": table, "path": local_log[0]},
                       headers={"Origin": "http://evil.example"}, token=t)
        check(not any(k.lower().startswith("access-control-") for k in h), "no CORS for another origin")
    print(f"relay protocol {base} {table}: {checks} checks, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

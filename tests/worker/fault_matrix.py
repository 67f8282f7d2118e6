#!/usr/bin/env python3
"""Fault matrix for the Cloudflare Worker (the worker column of tests/harness/fault_matrix.py,
whose modes, tables and filters it reuses): every fault mode of tests/harness/faultproxy.py
× {GET /v1/info, /v1/scan?filter=…, /v1/changes (CDF tables), /v1/history} × conformance
tables × {http (nginx), s3 (moto), azure (azurite)}, each request sent to a worker whose
stores are reached through one fault proxy per store, and classified against the same
request to a worker reading the stores directly (JSON documents compared without
`location`, rows sorted):

  equal        200 and the same body
  clear-error  an HTTP error status with the worker's JSON {"error": {"code", "message"}}
               body, within the timeout (a budget error, e.g. the 408 of a stalled store,
               is one)
  WRONG        200 and a different body
  PANIC        the worker's log shows a panic (a wasm trap), or a 500 without the JSON error
  HANG         no complete answer within the timeout
  CRASH        the connection failed or was cut, or an error status without the JSON body

Credentials are attached only to the origin they are for, so the proxies cannot be put in
a table URL: scripts/worker-test starts a second worker (node worker/local.mjs) whose
AWS_ENDPOINT_URL, AZURE_STORAGE_ENDPOINT and allowlisted http tables name fixed local
ports, and this harness starts the proxies on those ports (in this process, stopped when it
exits) in front of nginx, moto and azurite, switching all three to one mode at a time.
That worker runs with DELTALENS_CACHE_BYTES=0 (the isolate's cache would otherwise answer
most reads of the next mode without reaching the proxy), the deployed wall-time budget
(20 s: a stalled store must end in a 408 within it) and the direct worker's subrequest and
row budgets (1000, 100000: without the cache, changes of kr_cdf-table on Azure take 46
subrequests, one more than the deployed 45); a budget error is a clear error. A store whose proxy sees no request during a mode fails the run (its cells would
not have been faulted). Faults limited to the first N requests per target (MODE:N,
5xx-then-ok) run one command at a time per table, with that table's counts reset before
each command; other modes run --jobs requests at a time, stalls all at once.

Exits 1 on any WRONG, PANIC, HANG or CRASH, on a cell of a recoverable mode (fm.RECOVERABLE)
not answered equal (the worker retries transient failures within its budgets), on a request the direct worker does not answer
with 200 (its cells cannot be run), and on a proxy that saw nothing. scripts/worker-test
runs the quick set (3 tables, 9 modes); the full set by hand:

  DELTALENS_WORKER_FAULTS=full scripts/worker-test       (8 tables, 12 modes, then stops)

or against running workers:

  fault_matrix.py --worker http://127.0.0.1:W --direct http://127.0.0.1:D --token T \\
      --http-direct http://127.0.0.1:N/tables --upstream http=http://127.0.0.1:N \\
      --upstream s3=http://127.0.0.1:S --upstream azure=http://127.0.0.1:A \\
      --port http=PH --port s3=PS --port azure=PA [--worker-log FILE] [--quick] [--json OUT]
"""
import argparse
import concurrent.futures as cf
import http.client
import json
import os
import socket
import sys
import threading
import time
from collections import Counter
from urllib.parse import urlencode, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import fault_matrix as fm  # noqa: E402
from faultproxy import start_proxy  # noqa: E402

STORES = ["http", "s3", "azure"]
ROUTES = {"open": "/v1/info", "scan": "/v1/scan", "changes": "/v1/changes",
          "history": "/v1/history"}
# what a panicking (trapping) wasm worker leaves in workerd's log
PANIC_MARKS = ("panicked", "RuntimeError", "unreachable", "Uncaught", "threw exception")
TOKEN = ""


def table_url(store, table, http_base):
    if store == "http":
        return f"{http_base}/{table}"
    if store == "s3":
        return f"s3://deltalens/tables/{table}"
    return f"abfss://deltalens@devstoreaccount1.dfs.core.windows.net/tables/{table}"


def params(command, url, table):
    _, flt, cdf_from = fm.TABLES[table]
    if command == "scan":
        return {"table": url, "filter": flt, "format": "jsonl"}
    if command == "changes":
        return {"table": url, "from": str(cdf_from), "format": "jsonl"}
    return {"table": url}


def call(base, command, query, timeout):
    """(status or None on timeout or -1 on a failed connection, body, error text, seconds)."""
    u = urlsplit(base)
    path = ROUTES[command] + "?" + urlencode(query)
    t0 = time.monotonic()
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {TOKEN}"})
        r = conn.getresponse()
        body = b""
        while True:  # a bounded total time, not only per read
            chunk = r.read(1 << 16)
            if not chunk:
                break
            body += chunk
            if time.monotonic() - t0 > timeout:
                raise socket.timeout("body still arriving at the timeout")
        return r.status, body, "", time.monotonic() - t0
    except socket.timeout as e:
        return None, b"", f"no answer within {timeout:.0f}s ({e})", time.monotonic() - t0
    except (OSError, http.client.HTTPException) as e:
        return -1, b"", f"{type(e).__name__}: {e}", time.monotonic() - t0
    finally:
        conn.close()


def normal(command, body):
    text = body.decode("utf-8", "replace")
    if command in ("open", "history"):
        try:
            v = json.loads(text)
        except ValueError:
            return text
        if isinstance(v, dict):
            v.pop("location", None)
        return json.dumps(v, sort_keys=True)
    return "\n".join(sorted(text.splitlines()))


def error_of(body):
    """(code, message) of the worker's JSON error body, or None."""
    try:
        e = json.loads(body)["error"]
        code, message = e["code"], e["message"]
    except (ValueError, KeyError, TypeError):
        return None
    if isinstance(code, str) and isinstance(message, str) and code and message:
        return code, message
    return None


def classify(status, body, expected, command):
    if status is None:
        return "HANG"
    if status == -1:
        return "CRASH"
    if status == 200:
        return "equal" if normal(command, body) == expected else "WRONG"
    if error_of(body):
        return "clear-error"
    return "PANIC" if status == 500 else "CRASH"


def describe(r):
    if r["status"] in (None, -1):
        return r["error"]
    e = error_of(r["body"].encode()) if r["status"] != 200 else None
    if e:
        return f"{r['status']} {e[0]}: {e[1]}"
    text = r["body"][:300].replace("\n", " | ")
    return f"{r['status']}: {text}" if r["status"] != 200 else f"200: {r.get('diff', '')}"


def log_size(path):
    return os.path.getsize(path) if path and os.path.exists(path) else 0


def log_since(path, offset):
    if not path or not os.path.exists(path):
        return ""
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read().decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list-tables", action="store_true",
                    help="print the tables of the full set (to load the stores) and stop")
    ap.add_argument("--worker", help="the worker behind the fault proxies")
    ap.add_argument("--direct", help="a worker reading the same stores directly")
    ap.add_argument("--token", default=os.environ.get("DELTALENS_WORKER_TOKEN", ""))
    ap.add_argument("--http-direct", help="the nginx tables base the direct worker reads")
    ap.add_argument("--upstream", action="append", default=[],
                    help="STORE=http://127.0.0.1:PORT (nginx, moto, azurite origins)")
    ap.add_argument("--port", action="append", default=[],
                    help="STORE=PORT the faulted worker reaches that store through")
    ap.add_argument("--worker-log", help="the faulted worker's log (panics are read there)")
    ap.add_argument("--quick", action="store_true", help="3 tables, 9 modes (CI)")
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--modes", nargs="*")
    ap.add_argument("--stores", nargs="*", default=STORES)
    ap.add_argument("--commands", nargs="*", default=fm.COMMANDS)
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per request (the worker's wall-time budget is 20 s)")
    ap.add_argument("--budget", type=float, default=20.0,
                    help="the worker's wall-time budget: slower answers are listed")
    ap.add_argument("--jobs", type=int, default=4, help="requests at a time (stalls: all)")
    ap.add_argument("--json", help="write every cell here")
    a = ap.parse_args()
    if a.list_tables:
        print("\n".join(fm.TABLES))
        return
    missing = [k for k in ("worker", "direct", "http_direct") if not getattr(a, k)]
    upstreams = dict(x.split("=", 1) for x in a.upstream)
    ports = {k: int(v) for k, v in (x.split("=", 1) for x in a.port)}
    missing += [f"upstream {s}" for s in a.stores if s not in upstreams]
    missing += [f"port {s}" for s in a.stores if s not in ports]
    if missing:
        ap.error("required: " + ", ".join(missing))
    global TOKEN
    TOKEN = a.token
    tables = a.tables or (fm.QUICK_TABLES if a.quick else list(fm.TABLES))
    modes = a.modes or (fm.QUICK_MODES if a.quick else fm.MODES)
    t_start = time.monotonic()
    http_faulted = f"http://127.0.0.1:{ports.get('http', 0)}/tables"

    def cmds(t):
        return [c for c in a.commands if c != "changes" or fm.TABLES[t][2] is not None]

    # 1. references: the direct worker (it must answer 200)
    problems, notes = [], []
    reference = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        jobs = [((s, t, c), ex.submit(call, a.direct, c,
                                      params(c, table_url(s, t, a.http_direct), t), a.timeout))
                for s in a.stores for t in tables for c in cmds(t)]
        for (s, t, c), f in jobs:
            status, body, err, dt = f.result()
            if status != 200:
                problems.append(f"direct {s} {c} {t}: {status} ({dt:.1f}s): "
                                f"{err or body[:300].decode('utf-8', 'replace')}")
                continue
            reference[(s, t, c)] = normal(c, body)
    print(f"references: {len(reference)} answers of the direct worker "
          f"({time.monotonic() - t_start:.0f}s)", flush=True)

    # 2. one proxy per store, on the ports the faulted worker was given
    stall = a.timeout + 15
    proxies = {s: start_proxy(upstreams[s], "pass", stall_seconds=stall, port=ports[s],
                              lifetime=max(3600.0, a.timeout * 60), name=f"worker-{s}")
               for s in a.stores}
    results = []
    lock = threading.Lock()
    seen = {}  # (mode, store): requests the proxy saw
    faulted = {}
    panics = {}

    def one(m, s, t, c):
        status, body, err, dt = call(a.worker, c, params(c, table_url(s, t, http_faulted), t),
                                     a.timeout)
        kind = classify(status, body, reference[(s, t, c)], c)
        r = {"mode": m, "store": s, "table": t, "command": c, "class": kind, "status": status,
             "seconds": round(dt, 2), "error": err,
             "body": body[:4000].decode("utf-8", "replace")}
        if kind == "WRONG":
            r["diff"] = fm.first_difference(reference[(s, t, c)], normal(c, body))
        with lock:
            if kind in fm.BAD:
                print(f"  {kind}: {m} {s} {c} {t} ({dt:.1f}s): {describe(r)[:300]}", flush=True)
        return r

    def serial(m, s, t):
        out = []
        for c in cmds(t):
            if (s, t, c) not in reference:
                continue
            # this table's targets only ("kr_cdf-table/" is not "kr_cdf-table-with-dv/")
            proxies[s].reset_counts(lambda k: any(t + sep in k for sep in ("/", "%2F", "%2f")))
            out.append(one(m, s, t, c))
        return out

    for m in modes:
        name, _, times = m.partition(":")
        for p in proxies.values():
            p.set_mode(name, int(times) if times else None)
        before = {s: p.stats() for s, p in proxies.items()}
        log0 = log_size(a.worker_log)
        t_mode = time.monotonic()
        cells = [(s, t, c) for s in a.stores for t in tables for c in cmds(t)
                 if (s, t, c) in reference]
        counted = proxies[a.stores[0]].times > 0 if a.stores else False
        rs = []
        if counted:
            groups = sorted({(s, t) for s, t, _ in cells})
            with cf.ThreadPoolExecutor(a.jobs) as ex:
                for f in [ex.submit(serial, m, s, t) for s, t in groups]:
                    rs += f.result()
        else:
            width = len(cells) if name.startswith("stall") else a.jobs
            with cf.ThreadPoolExecutor(max(1, min(128, width))) as ex:
                for f in [ex.submit(one, m, s, t, c) for s, t, c in cells]:
                    rs.append(f.result())
        for s, p in proxies.items():
            st = p.stats()
            seen[(m, s)] = st["requests"] - before[s]["requests"]
            faulted[f"{s}/{m}"] = {k: n - before[s]["faulted"].get(k, 0)
                                   for k, n in st["faulted"].items()
                                   if n > before[s]["faulted"].get(k, 0)}
        # a wasm panic traps: workerd logs it; the cells of this mode that got a 500 (or,
        # when none did, the mode itself) count as panics
        log = log_since(a.worker_log, log0)
        marks = [ln for ln in log.splitlines() if any(k in ln for k in PANIC_MARKS)]
        if marks:
            panics[m] = marks[:5]
            hit = [r for r in rs if r["status"] == 500]
            for r in hit:
                r["class"] = "PANIC"
            if not hit:
                problems.append(f"mode {m}: the worker log shows a panic no cell was given: "
                                + " | ".join(marks[:3]))
        results += rs
        c = Counter(r["class"] for r in rs)
        print(f"mode {m}: {len(rs)} requests in {time.monotonic() - t_mode:.0f}s: "
              + ", ".join(f"{k}={c[k]}" for k in fm.KINDS if c.get(k))
              + "; proxy requests " + ", ".join(f"{s}={seen[(m, s)]}" for s in a.stores),
              flush=True)
        for s in a.stores:
            if any(r["store"] == s for r in rs) and seen[(m, s)] == 0:
                problems.append(f"mode {m}: the {s} proxy saw no request: the worker did not "
                                "read through it")
    for p in proxies.values():
        p.stop()
    elapsed = time.monotonic() - t_start

    # 3. the matrix
    bad, unrecovered = fm.report("worker fault matrix", results, modes, a.commands, a.stores,
                                 tables, a.timeout, elapsed, describe)
    slow = [r for r in results if r["status"] not in (None,) and r["seconds"] > a.budget + 5]
    if slow:
        print(f"\nanswers later than the wall-time budget ({a.budget:.0f}s) + 5s:")
        for r in slow:
            print(f"  {r['mode']} {r['store']} {r['command']} {r['table']}: "
                  f"{r['seconds']:.1f}s, {r['status']}")
    if panics:
        print("\nworker log lines of panics, per mode:")
        for m, lines in panics.items():
            for ln in lines:
                print(f"  {m}: {ln[:300]}")
    print("\nfaults applied per proxy:", json.dumps(faulted, sort_keys=True))
    if problems:
        print("\nproblems (a request the direct worker did not answer, a proxy that saw "
              "nothing, a panic without a cell):")
        for p in problems:
            print("  " + p)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"tables": tables, "modes": modes, "timeout": a.timeout,
                       "seconds": round(elapsed, 1), "problems": problems, "notes": notes,
                       "faulted": faulted, "runs": results}, f, indent=1)
    if unrecovered:
        print("\nNOT RECOVERED (a fault every reader should get through, answered otherwise):")
        for u in unrecovered:
            print("  " + u)
    summary = ", ".join(f"{k}={bad.get(k, 0)}" for k in fm.BAD)
    print(f"\nworker fault matrix: {summary}; not recovered={len(unrecovered)}; "
          f"problems={len(problems)}; {elapsed:.0f}s")
    sys.exit(1 if bad or unrecovered or problems else 0)


if __name__ == "__main__":
    main()

"""Fan-out on Workers (issue #17), measured and modelled, side by side in one run.

A table (scan5m by default: 5,000,000 rows in 20 files, ../shared/bench/make_tables.py) is
put in a local R2 bucket; the same worker build is started once per width W (1 = no
fan-out, then 2, 4, 8) on that bucket, in workerd through miniflare (worker/local.mjs), and
answers one aggregate query (RUNS times, median wall time).

On this 2-core machine the measured speedup is bounded by the cores: every instance runs on
them. So each split of a W-way plan is also sent alone, one after the other, to the
unfanned worker as POST /v1/partial (its wall time there is its own work: reads and
decoding), and the wall time of W workers is modelled as

    the coordinator's log read (GET /v1/info, warm)
  + the splits scheduled as the coordinator sends them: 6 at a time (Cloudflare's
    simultaneous connections), in plan order, each taking its measured time
  + the merge of W partial states (a few groups: microseconds; not modelled)

and the subrequests a fan-out costs are counted (W calls; Cloudflare allows 50 per request
on the Free plan, 10,000 on Paid: with the default sub-request budget of 40, W <= 32).

The workers get roomy budgets (bytes, subrequests, wall time) for the full scan: the
deployed defaults (64 MiB, 45 subrequests, 20 s) would refuse it unfanned.

    python3 bench/fanout.py [TABLE_DIR] [--widths 1,2,4,8] [--runs 3] [--sql SQL]
Every width's answer is compared with the CLI's (`deltalens query`, natively).
scripts/test runs it briefly on scan5m (widths 1 and 3, one run) so it stays alive.
Needs: scripts/build-worker done (worker/build), target/debug/deltalens (plan), node.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SQL = ("SELECT category, COUNT(*), SUM(qty), AVG(price), MIN(ts), MAX(ts) "
       "FROM 'r2://TABLES/{t}' GROUP BY category ORDER BY category")


SECRET = os.urandom(16).hex()  # the fan-out's own calls to POST /v1/partial carry it


def post(base, path, body, timeout=600):
    req = urllib.request.Request(base + path, data=body.encode(), method="POST",
                                 headers={"x-deltalens-fanout-secret": SECRET})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        data = r.read()
        return time.perf_counter() - t0, data, dict(r.headers)


def get(base, path, timeout=600):
    t0 = time.perf_counter()
    with urllib.request.urlopen(base + path, timeout=timeout) as r:
        data = r.read()
        return time.perf_counter() - t0, data, dict(r.headers)


def start_worker(port, r2_dir, load, width):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("DELTALENS_"):
            del env[k]
    env.update({
        "PORT": str(port), "DELTALENS_R2_DIR": r2_dir, "DELTALENS_PUBLIC": "true",
        "DELTALENS_ALLOWED_TABLES": "r2://TABLES/",
        "DELTALENS_MAX_BYTES": str(4 << 30), "DELTALENS_MAX_SUBREQUESTS": "10000",
        "DELTALENS_MAX_WALL_MS": "600000", "DELTALENS_MAX_ROWS_BUFFERED": "10000000",
        "DELTALENS_MAX_DECODED_BYTES": str(8 << 30), "DELTALENS_STOP_AFTER": "1800",
    })
    if load:
        env["DELTALENS_R2_LOAD"] = load
    # /v1/partial answers only with fan-out configured: the unfanned worker has it on with a
    # threshold no table reaches
    env["DELTALENS_FANOUT_SECRET"] = SECRET
    env["DELTALENS_FANOUT_BYTES"] = "1" if width > 1 else str(2**63)
    env["DELTALENS_FANOUT_WIDTH"] = str(max(width, 2))
    log = open(os.path.join(r2_dir, f"worker-{width}.log"), "w")
    p = subprocess.Popen(["node", os.path.join(ROOT, "worker/local.mjs")], env=env, stdout=log,
                         stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(3000):
        time.sleep(0.1)
        with open(log.name) as f:
            if "deltalens worker on" in f.read():
                return p
        if p.poll() is not None:
            break
    os.killpg(p.pid, signal.SIGTERM)
    sys.exit(f"worker (width {width}) did not start: see {log.name}")


def stop(p):
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=20)
    except Exception:
        os.killpg(p.pid, signal.SIGKILL)


def schedule(times, slots=6):
    """Wall time of tasks of `times` sent in order, at most `slots` at once."""
    free = [0.0] * slots
    for t in times:
        i = free.index(min(free))
        free[i] += t
    return max(free)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table", nargs="?", default=os.path.join(ROOT, "target/bench/scan5m"))
    ap.add_argument("--widths", default="1,2,4,8")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--port", type=int, default=18190)
    ap.add_argument("--sql", default=SQL, help="the query ({t}: the table's name in R2)")
    a = ap.parse_args()
    table = os.path.abspath(a.table)
    name = os.path.basename(table)
    widths = [int(w) for w in a.widths.split(",")]
    work = tempfile.mkdtemp(prefix="deltalens-fanout-")
    load = os.path.join(work, "load")
    os.makedirs(load)
    os.symlink(table, os.path.join(load, name))
    sql = a.sql.format(t=name)
    deltalens = os.path.join(ROOT, "target/debug/deltalens")
    total_bytes = json.loads(subprocess.check_output([deltalens, "plan", table, "--json"]))["bytes"]
    rows = []
    answers = set()
    # the CLI's answer, natively, from the table on disk: every width must give it too
    cli_sql = sql.replace(f"'r2://TABLES/{name}'", "'" + table.replace("'", "''") + "'")
    answers.add(subprocess.check_output([deltalens, "query", "--format", "csv", cli_sql]))
    try:
        base = f"http://127.0.0.1:{a.port}"
        # the unfanned worker: uploads the table, answers width 1, and runs each split alone
        w1 = start_worker(a.port, work, load, 1)
        try:
            get(base, f"/v1/info?table=r2%3A%2F%2FTABLES%2F{name}")  # warm the isolate
            log_read = statistics.median(
                get(base, f"/v1/info?table=r2%3A%2F%2FTABLES%2F{name}")[0] for _ in range(a.runs))
            one = []
            for _ in range(a.runs):
                t, body, h = post(base, "/v1/query?format=csv", sql)
                one.append(t)
                answers.add(body)
            split_times = {}
            for w in widths:
                plan = json.loads(subprocess.check_output(
                    [deltalens, "plan", table, "--json", "--target-bytes", str(-(-total_bytes // w))]))
                ts = []
                for s in plan["splits"]:
                    body = json.dumps({"sql": sql, "split": s})
                    ts.append(statistics.median(
                        post(base, "/v1/partial", body)[0] for _ in range(a.runs)))
                split_times[w] = ts
        finally:
            stop(w1)
        for w in widths:
            if w == 1:
                measured, subreq = statistics.median(one), 0
            else:
                p = start_worker(a.port, work, None, w)
                try:
                    post(base, "/v1/query?format=csv", sql)  # warm
                    ts = []
                    for _ in range(a.runs):
                        t, body, h = post(base, "/v1/query?format=csv", sql)
                        assert h.get("x-deltalens-splits") == str(w), h
                        ts.append(t)
                        answers.add(body)
                    measured = statistics.median(ts)
                    subreq = w
                finally:
                    stop(p)
            st = split_times[w]
            modelled = log_read + schedule(st)
            rows.append((w, measured, modelled, sum(st), max(st), subreq))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # the same answer at every width and from the CLI; a DOUBLE average may differ in its
    # last digits with the order of the additions (as in any engine that sums in parallel)
    def cells(body):
        return [c for line in body.decode().splitlines() for c in line.split(",")]
    first = cells(next(iter(answers)))
    for other in answers:
        for x, y in zip(first, cells(other)):
            if x != y:
                try:
                    fx, fy = float(x), float(y)
                except ValueError:
                    sys.exit(f"FAIL: answers differ: {x!r} vs {y!r}")
                if abs(fx - fy) > 1e-9 * max(abs(fx), abs(fy)):
                    sys.exit(f"FAIL: answers differ: {x} vs {y}")
    same = "every width gave the CLI's answer" + (
        f" (doubles within 1e-9 across {len(answers)} renderings)" if len(answers) > 1 else "")
    base_m, base_mod = rows[0][1], rows[0][2]
    print(f"fan-out on {name} ({total_bytes} bytes of data files), query: {sql}")
    print(f"coordinator's log read (GET /v1/info, warm): {log_read * 1000:.0f} ms; {same}")
    print(f"{'workers':>7} {'measured s':>10} {'speedup':>7} {'modelled s':>10} {'speedup':>7} {'split work s (sum)':>18} {'largest split s':>15} {'calls':>5}")
    for w, m, mod, tot, mx, sub in rows:
        print(f"{w:>7} {m:>10.2f} {base_m / m:>7.2f} {mod:>10.2f} {base_mod / mod:>7.2f} {tot:>18.2f} {mx:>15.2f} {sub:>5}")
    print("measured: all workers share this machine's 2 cores; modelled: each split on its own "
          "worker, 6 in flight at once, plus the coordinator's log read")


if __name__ == "__main__":
    main()

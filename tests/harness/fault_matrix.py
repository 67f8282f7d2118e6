#!/usr/bin/env python3
"""Fault matrix for the `deltalens` CLI: every fault mode of tests/harness/faultproxy.py ×
{open, scan with a filter, changes, history} × conformance tables × {http (nginx), s3
(moto), azure (azurite)}. Each command runs through a fault proxy in front of the store,
with a wall-clock timeout, and is classified against the same command run directly
against the store without the proxy (JSON compared without `location`, rows sorted; that
reference is also compared with the local-path run, a difference there is printed as a
note: timestamps a log does not record come from the store's modification times):

  equal        exit 0 and the same output
  clear-error  non-zero exit with an `error:` message on stderr, within the timeout
  WRONG        exit 0 and a different output
  PANIC        'panicked' on stderr
  HANG         still running at the timeout (killed)
  CRASH        killed by a signal, or a non-zero exit without an error message

Modes are faultproxy modes, or MODE:N for a fault on the first N requests per target only
(reset-mid-body:1: one transient cut per object, which a reader should survive). Exits 1
on any WRONG, PANIC, HANG or CRASH, on a cell of a recoverable mode (RECOVERABLE: 5xx then
success, one cut or short body per object, Range ignored) not answered equal, and on a command that fails against a store without
any fault (its cells cannot be run). Started by scripts/fault-test, which starts the
stores; by hand:

  fault_matrix.py --cli target/debug/deltalens --corpus ../shared/conformance \
      --http http://127.0.0.1:P --s3 http://127.0.0.1:P+1 \
      --azure http://127.0.0.1:P+2/devstoreaccount1 --sas SAS [--quick] [--json OUT]
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import start_proxy  # noqa: E402

# table: (features, scan filter, changes --from or None when the table has no CDF)
TABLES = {
    "golden_dv-with-columnmapping": ("deletion vectors + column mapping (name)", "part >= 5 AND col2 <> 'foo0'", None),
    "dr_checkpoint-v2-table": ("v2 checkpoint (JSON + sidecars)", "id > 5", None),
    "kr_cdf-table": ("change data feed (cdc files), partitioned", "id > 3", 0),
    "golden_dv-partitioned-with-checkpoint": ("deletion vectors, classic checkpoint", "part = 3 OR col1 > 40", None),
    "kr_cdf-table-with-dv": ("CDF with inline + file deletion vectors", "value >= 3", 0),
    "kr_cdf-column-mapping-id-mode": ("CDF + column mapping (id), CDF from v1", "value > 200", 1),
    "golden_multi-part-checkpoint": ("multi-part classic checkpoint", "id > 5", None),
    "dk_basic-dv-with-checkpoint": ("deletion vectors, 47 versions, several checkpoints", "id > 400 OR id < 3", None),
}
QUICK_TABLES = ["golden_dv-with-columnmapping", "dr_checkpoint-v2-table", "kr_cdf-table"]
# a mode is a faultproxy mode, or MODE:N for its first N requests per target only
MODES = ["pass", "5xx-then-ok", "reset-mid-body", "reset-mid-body:1", "short-body",
         "short-body:1", "wrong-content-range", "range-ignored", "stall", "stall-mid-body",
         "all-200", "403-on-list"]
QUICK_MODES = ["pass", "5xx-then-ok", "reset-mid-body", "reset-mid-body:1",
               "wrong-content-range", "range-ignored", "stall", "all-200", "403-on-list"]
# faults a reader can and should get through with the right answer
RECOVERABLE = {"pass", "5xx-then-ok", "range-ignored", "reset-mid-body:1", "short-body:1"}
COMMANDS = ["open", "scan", "changes", "history"]
STORES = ["http", "s3", "azure"]
BAD = ("WRONG", "PANIC", "HANG", "CRASH")
KINDS = ("equal", "clear-error") + BAD


class Stores:
    def __init__(self, a):
        self.http, self.s3, self.azure, self.sas = a.http.rstrip("/"), a.s3.rstrip("/"), \
            a.azure.rstrip("/"), a.sas

    def upstream(self, store):
        """The origin (scheme://host:port) a proxy forwards to."""
        base = {"http": self.http, "s3": self.s3, "azure": self.azure}[store]
        return "/".join(base.split("/")[:3])

    def target(self, store, table, origin=None):
        """(location, options) of `table` in `store`, through `origin` when given."""
        def via(base):
            if origin is None:
                return base
            rest = base.split("/", 3)[3] if base.count("/") >= 3 else ""
            return origin + ("/" + rest if rest else "")

        if store == "http":
            return f"{via(self.http)}/tables/{table}", ["-o", "allow_http=true"]
        if store == "s3":
            return f"s3://deltalens/tables/{table}", [
                "-o", f"aws_endpoint={via(self.s3)}", "-o", "aws_allow_http=true",
                "-o", "aws_region=us-east-1", "-o", "aws_access_key_id=deltalens-test",
                "-o", "aws_secret_access_key=deltalens-test-secret"]
        return f"abfss://deltalens@devstoreaccount1.dfs.core.windows.net/tables/{table}", [
            "-o", f"azure_storage_endpoint={via(self.azure)}", "-o", "azure_allow_http=true",
            "-o", f"azure_storage_sas_key={self.sas}"]


def argv(command, location, options, table, scan_threads):
    _, flt, cdf_from = TABLES[table]
    if command == "open":
        return ["info", location, "--json", *options]
    if command == "history":
        return ["history", location, "--json", *options]
    if command == "scan":
        extra = ["--threads", str(scan_threads)] if scan_threads else []
        return ["scan", location, "--filter", flt, "--format", "jsonl", *extra, *options]
    return ["changes", location, "--from", str(cdf_from), "--format", "jsonl", *options]


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "AZURE_", "GOOGLE_", "OBJECT_STORE_"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


ENV = None


def run(cli, args, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run([cli, *args], capture_output=True, timeout=timeout, env=ENV,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace"), time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        err = (e.stderr or b"").decode("utf-8", "replace")
        return None, e.stdout or b"", err, time.monotonic() - t0


def normal(command, out, replace=()):
    text = out.decode("utf-8", "replace")
    for a, b in replace:
        text = text.replace(a, b)
    if command in ("open", "history"):
        try:
            v = json.loads(text)
        except ValueError:
            return text
        if isinstance(v, dict):
            v.pop("location", None)
        return json.dumps(v, sort_keys=True)
    return "\n".join(sorted(text.splitlines()))


def classify(rc, out, err, expected, command, replace):
    if "panicked" in err:
        return "PANIC"
    if rc is None:
        return "HANG"
    if rc < 0:
        return "CRASH"
    if rc == 0:
        return "equal" if normal(command, out, replace) == expected else "WRONG"
    return "clear-error" if "error" in err.lower() and err.strip() else "CRASH"


def excerpt(err, n=400):
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    panic = [i for i, ln in enumerate(lines) if "panicked" in ln]
    if panic:  # the panic and its message, not the backtrace
        lines = lines[panic[0]: panic[0] + 2]
    else:
        lines = [ln for ln in lines if not ln.startswith("io: ")]
    text = " | ".join(lines[-3:]) if lines else "(no stderr)"
    return text if len(text) <= n else text[: n - 3] + "..."


def first_difference(a, b):
    """Where two normalized outputs first differ (for JSON: the keys' lines)."""
    def lines(x):
        try:
            return json.dumps(json.loads(x), indent=1, sort_keys=True).splitlines()
        except ValueError:
            return x.splitlines()
    la, lb = lines(a), lines(b)
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            n = sum(1 for p, q in zip(la, lb) if p != q)
            return f"{x.strip()} -> {y.strip()} ({n} lines differ)"
    return f"{len(la)} lines -> {len(lb)} lines"


def shape(text, table):
    """An error message without what varies between runs (for grouping)."""
    text = text.replace(table, "T")
    text = re.sub(r"127\.0\.0\.1:\d+", "HOST", text)
    text = re.sub(r"in [0-9.]+(ns|µs|ms|s)\b", "in D", text)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27,}", "U", text)
    return re.sub(r"\d+", "N", text)


def cell_text(rs):
    """A cell: counts per class, e.g. `=3 e1`."""
    c = Counter(r["class"] for r in rs)
    parts = [f"{sym}{c[k]}" for k, sym in (("equal", "="), ("clear-error", "e"), ("WRONG", "W"),
                                            ("PANIC", "P"), ("HANG", "H"), ("CRASH", "X"))
             if c.get(k)]
    return " ".join(parts) or "-"


def report(name, results, modes, commands, stores, tables, timeout, elapsed, describe):
    """Prints the matrix of `results` (dicts with mode, store, command, table, class,
    seconds) for all stores and per store, then each non-green cell with its distinct
    answers (`describe(result)`). Returns (counts of WRONG/PANIC/HANG/CRASH, the cells of a
    RECOVERABLE mode not answered equal: a fault a reader should get through)."""
    def matrix(rows, title):
        w = 16
        print(f"\n{title}")
        print(f"{'mode':<22}" + "".join(f"{c:<{w}}" for c in commands))
        for m in modes:
            print(f"{m:<22}" + "".join(
                f"{cell_text([r for r in rows if r['mode'] == m and r['command'] == c]):<{w}}"
                for c in commands))

    print(f"\n{name}: {len(results)} runs, {len(tables)} tables ({', '.join(tables)}), "
          f"timeout {timeout:.0f}s, {elapsed:.0f}s")
    print("cells: =equal e=clear-error W=WRONG P=PANIC H=HANG X=CRASH (counts of table runs)")
    matrix(results, "all stores")
    for s in stores:
        matrix([r for r in results if r["store"] == s], f"store {s}")

    print("\nnon-green cells (mode, store, command: counts, then each distinct answer with its"
          " tables;\n`!` = a fault a reader should get through, or a WRONG/PANIC/HANG/CRASH):")
    groups = defaultdict(list)
    for r in results:
        if r["class"] != "equal":
            groups[(r["mode"], r["store"], r["command"])].append(r)
    unrecovered = []
    for (m, s, c) in sorted(groups, key=lambda k: (modes.index(k[0]), STORES.index(k[1]),
                                                    COMMANDS.index(k[2]))):
        rs = groups[(m, s, c)]
        if m in RECOVERABLE:
            unrecovered.append(f"{m} / {s} / {c}: {cell_text(rs)}")
        flag = "!" if m in RECOVERABLE or any(r["class"] in BAD for r in rs) else " "
        print(f"{flag} {m} / {s} / {c}: {cell_text(rs)}")
        distinct = defaultdict(list)
        for r in rs:
            distinct[(r["class"], shape(describe(r), r["table"]))].append(r)
        for (k, _), same in distinct.items():
            secs = max(x["seconds"] for x in same)
            names = ", ".join(x["table"] for x in same)
            print(f"      {k} [{names}; <= {secs:.1f}s]: {describe(same[0])[:300]}")
    bad = Counter(r["class"] for r in results if r["class"] in BAD)
    return bad, unrecovered


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list-tables", action="store_true",
                    help="print the tables the run reads (to load the stores) and stop")
    ap.add_argument("--spec", action="store_true",
                    help="print the selected tables (name, filter, changes from) and modes as "
                         "JSON and stop (scripts/browser-test builds its wasm test with it)")
    ap.add_argument("--stall-tables", type=int, default=None,
                    help="with --spec: stall modes on the first N tables only")
    ap.add_argument("--cli")
    ap.add_argument("--corpus")
    ap.add_argument("--http", help="nginx origin serving /tables/<name>")
    ap.add_argument("--s3", help="moto endpoint (bucket deltalens)")
    ap.add_argument("--azure", help="azurite endpoint incl. /devstoreaccount1")
    ap.add_argument("--sas", help="container SAS for container deltalens")
    ap.add_argument("--quick", action="store_true", help="3 tables, 9 modes (CI)")
    ap.add_argument("--tables", nargs="*")
    ap.add_argument("--modes", nargs="*")
    ap.add_argument("--stores", nargs="*", default=STORES)
    ap.add_argument("--commands", nargs="*", default=COMMANDS)
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per command")
    ap.add_argument("--stall", type=float, default=None,
                    help="seconds a stalled proxy answer lasts (default: timeout + 15)")
    ap.add_argument("--jobs", type=int, default=4, help="commands at a time (stalls: more)")
    ap.add_argument("--scan-threads", type=int, default=0,
                    help="pass --threads N to scan (0: the CLI's default)")
    ap.add_argument("--json", help="write every cell (argv, class, time, stderr) here")
    a = ap.parse_args()

    tables = a.tables or (QUICK_TABLES if a.quick else list(TABLES))
    if a.list_tables:
        print("\n".join(tables))
        return
    if a.spec:
        print(json.dumps({
            "tables": [{"name": t, "filter": TABLES[t][1], "changes_from": TABLES[t][2]}
                       for t in tables],
            "modes": a.modes or (QUICK_MODES if a.quick else MODES),
            "stall_tables": tables[: a.stall_tables] if a.stall_tables else tables,
        }, separators=(",", ":")))
        return
    missing = [k for k in ("cli", "corpus", "http", "s3", "azure", "sas") if not getattr(a, k)]
    if missing:
        ap.error("required: " + ", ".join("--" + k for k in missing))
    global ENV
    ENV = clean_env()
    modes = a.modes or (QUICK_MODES if a.quick else MODES)
    stall = a.stall if a.stall is not None else a.timeout + 15
    stores = Stores(a)
    t_start = time.monotonic()

    def cmds(t):
        return [c for c in a.commands if c != "changes" or TABLES[t][2] is not None]

    # 1. references: local path, then each store directly (must equal the local run)
    problems, notes = [], []
    local = {}
    for t in tables:
        path = os.path.join(a.corpus, "tables", t)
        for c in cmds(t):
            rc, out, err, _ = run(a.cli, argv(c, path, [], t, a.scan_threads), a.timeout)
            if rc != 0:
                problems.append(f"local {c} {t}: exit {rc}: {excerpt(err)}")
                continue
            local[(t, c)] = normal(c, out)
    reference = {}
    base_jobs = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for s in a.stores:
            for t in tables:
                for c in cmds(t):
                    if (t, c) not in local:
                        continue
                    loc, opts = stores.target(s, t)
                    args = argv(c, loc, opts, t, a.scan_threads)
                    base_jobs.append(((s, t, c), ex.submit(run, a.cli, args, a.timeout)))
        for (s, t, c), f in base_jobs:
            rc, out, err, dt = f.result()
            if rc != 0:
                problems.append(f"direct {s} {c} {t}: exit {rc} ({dt:.1f}s): {excerpt(err)}")
                continue
            got = normal(c, out)
            if got != local[(t, c)]:
                # the store's own answer is the reference (timestamps a log does not
                # record come from the store's modification times): a note, not a failure
                notes.append(f"direct {s} {c} {t} differs from the local-path run: "
                             f"{first_difference(local[(t, c)], got)}")
            reference[(s, t, c)] = got
    print(f"references: {len(local)} local runs, {len(reference)} direct store runs "
          f"({time.monotonic() - t_start:.0f}s)", flush=True)

    # 2. one proxy per store and mode
    proxies = {}
    for s in a.stores:
        for m in modes:
            name, _, times = m.partition(":")
            proxies[(s, m)] = start_proxy(stores.upstream(s), name,
                                          times=int(times) if times else None,
                                          stall_seconds=stall,
                                          lifetime=max(3600.0, a.timeout * 30), name=f"{s}-{m}")

    cells = []
    for m in modes:
        for s in a.stores:
            for t in tables:
                for c in cmds(t):
                    if (s, t, c) in reference:
                        cells.append((m, s, t, c))
    results = {}
    done = [0]
    lock = threading.Lock()

    def one(cell):
        m, s, t, c = cell
        p = proxies[(s, m)]
        loc, opts = stores.target(s, t, origin=p.url)
        args = argv(c, loc, opts, t, a.scan_threads)
        replace = [(p.url, stores.upstream(s))]
        rc, out, err, dt = run(a.cli, args, a.timeout)
        kind = classify(rc, out, err, reference[(s, t, c)], c, replace)
        with lock:
            done[0] += 1
            if kind in BAD:
                print(f"  {kind}: {m} {s} {c} {t} ({dt:.1f}s): {excerpt(err, 200)}", flush=True)
        return {"mode": m, "store": s, "table": t, "command": c, "class": kind,
                "exit": rc, "seconds": round(dt, 2), "stderr": err[-4000:],
                "argv": ["deltalens", *args]}

    stalls = [x for x in cells if x[0].startswith("stall")]
    rest = [x for x in cells if not x[0].startswith("stall")]
    # stalled runs wait, they do not work: all at once (up to 64)
    with cf.ThreadPoolExecutor(a.jobs) as ex, \
            cf.ThreadPoolExecutor(max(1, min(64, len(stalls)))) as slow:
        futs = [(x, slow.submit(one, x)) for x in stalls] + [(x, ex.submit(one, x)) for x in rest]
        for x, f in futs:
            results[x] = f.result()
    faulted = {f"{s}/{m}": p.stats()["faulted"] for (s, m), p in proxies.items()}
    for p in proxies.values():
        p.stop()
    elapsed = time.monotonic() - t_start

    # 3. the matrix
    allr = list(results.values())
    bad, unrecovered = report("fault matrix", allr, modes, a.commands, a.stores, tables,
                              a.timeout, elapsed, lambda r: excerpt(r["stderr"], 300))
    print("\nfaults applied per proxy:", json.dumps(faulted, sort_keys=True))
    if notes:
        print("\nnotes (a store's answer differs from the local path's; the store's is the reference):")
        for n in notes:
            print("  " + n)
    if problems:
        print("\nbaseline problems (fails without any fault; the cells are not run):")
        for p in problems:
            print("  " + p)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"tables": tables, "modes": modes, "timeout": a.timeout,
                       "seconds": round(elapsed, 1), "problems": problems, "notes": notes,
                       "faulted": faulted, "runs": allr}, f, indent=1)
    if unrecovered:
        print("\nNOT RECOVERED (a fault every reader should get through, answered otherwise):")
        for u in unrecovered:
            print("  " + u)
    summary = ", ".join(f"{k}={bad.get(k, 0)}" for k in BAD)
    print(f"\nfault matrix: {summary}; not recovered={len(unrecovered)}; "
          f"baseline problems={len(problems)}; {elapsed:.0f}s")
    sys.exit(1 if bad or unrecovered or problems else 0)


if __name__ == "__main__":
    main()

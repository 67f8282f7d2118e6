#!/usr/bin/env python3
"""Benchmark: cost follows the question, not the table. On a table of N active files (one
classic checkpoint of N adds with JSON stats, then 50 commits: ../shared/bench/make_scale.py;
no data files but one partition's, see scale_data.py), each question is asked of deltalens, deltalake and DuckDB side by side in one
run, each run a fresh process, interleaved:

    cargo build --release -p deltalens-cli
    python3 bench/scale.py BENCH_DIR [--files 1000000] [--runs 3] [--goals]

(BENCH_DIR/ckpt{N/1000}k is written by make_scale.py when missing.) Reported per question
and reader: median wall time of the process and of the engine call, peak RSS, bytes read
(deltalens: its counting storage, --io-stats; the peers: /proc/self/io rchar growth), then
ratios against deltalake's open (DeltaTable(path): the whole file list, the usual first
step) and, with --goals, the #12 goals checked (exit 1 when one fails). Peers' processes
include the Python interpreter (~20 MB); deltalens' process is the engine.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import textwrap

from common import run_rss

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MAKE_SCALE = os.path.join(ROOT, "..", "shared", "bench", "make_scale.py")

PY_PRELUDE = textwrap.dedent("""
    import json, sys, time
    def rchar():
        return int(next(l for l in open('/proc/self/io') if l.startswith('rchar')).split()[1])
    T, P = sys.argv[1], sys.argv[2]
""")

# deltalake: what a user writes for each question
DELTALAKE = {
    "open": "dt = DeltaTable(T); n = len(dt.file_uris())",
    "schema": "dt = DeltaTable(T, without_files=True); s = dt.schema().to_json()",
    "history": "dt = DeltaTable(T, without_files=True); h = dt.history(10)",
    "info_no_files": "dt = DeltaTable(T, without_files=True); m = dt.metadata(); p = dt.protocol(); v = dt.version()",
    "info": ("dt = DeltaTable(T); a = dt.get_add_actions(flatten=True); "
             "n = a.num_rows; size = sum(a.column('size_bytes').to_pylist()); "
             "rows = sum(a.column('num_records').to_pylist())"),
    "files_100": "dt = DeltaTable(T); f = dt.file_uris()[:100]",
    "files_all": ("import pyarrow, pyarrow.csv; dt = DeltaTable(T); a = dt.get_add_actions(flatten=True); "
                  "pyarrow.csv.write_csv(pyarrow.table(a), '/dev/null')"),
    "scan_100": "dt = DeltaTable(T); t = dt.to_pyarrow_dataset().head(100)",
    "scan_partition": ("import datetime, pyarrow.compute as pc; dt = DeltaTable(T); "
                       "t = dt.to_pyarrow_dataset().to_table(columns=['id', 'price'], "
                       "filter=pc.field('event_date') == datetime.date.fromisoformat(P))"),
}

DUCKDB_SETUP = textwrap.dedent("""
    import duckdb, duckdb_extension_delta, os
    ext = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), 'extensions', 'v' + duckdb.__version__, 'delta.duckdb_extension')
    con = duckdb.connect(config={'allow_unsigned_extensions': 'true'})
    con.execute(f"LOAD '{ext}'")
    con.execute("SET enable_progress_bar = false")
""")
# DuckDB: the schema, and the file list with statistics (a filter that prunes every file)
DUCKDB = {
    "schema": "r = con.execute('DESCRIBE SELECT * FROM delta_scan(?)', [T]).fetchall()",
    "info": "r = con.execute('SELECT count(*) FROM delta_scan(?) WHERE id < -1', [T]).fetchone()",
    "scan_100": "r = con.execute('SELECT * FROM delta_scan(?) LIMIT 100', [T]).fetchall()",
    "scan_partition": ("r = con.execute('SELECT id, price FROM delta_scan(?) WHERE event_date = CAST(? AS DATE)',"
                       " [T, P]).fetch_arrow_table()"),
}

DELTALENS = {
    "schema": ["schema", "{T}"],
    "history": ["history", "{T}", "--limit", "10"],
    "info_no_files": ["info", "{T}", "--no-files"],
    "info": ["info", "{T}"],
    "files_100": ["files", "{T}", "--limit", "100"],
    "files_all": ["files", "{T}", "--json"],
    "scan_100": ["scan", "{T}", "--limit", "100", "--format", "csv"],
    "scan_partition": ["scan", "{T}", "--filter", "event_date = '{P}'", "--columns", "id,price",
                       "--format", "arrow", "--output", "/dev/null"],
}

QUESTIONS = [
    ("schema", "schema"),
    ("history", "history --limit 10"),
    ("info_no_files", "info without file totals"),
    ("info", "info with file totals"),
    ("files_100", "files --limit 100"),
    ("files_all", "files --json (all)"),
    ("scan_100", "scan --limit 100"),
    ("scan_partition", "scan of one partition"),
]


def py(body, setup, table, part, timeout_s):
    # a peer that fails (e.g. a preview reading a file the bench table lacks: only one
    # partition has data files) is reported as failed, not timed
    script = PY_PRELUDE + setup + textwrap.dedent(f"""
        r0 = rchar(); t0 = time.perf_counter()
        try:
            {body}
        except Exception as e:
            print(json.dumps({{"error": str(e).splitlines()[0][:100]}})); sys.exit(0)
        t1 = time.perf_counter(); r1 = rchar()
        print(json.dumps({{"engine_s": t1 - t0, "bytes": r1 - r0}}))
    """)
    r = run_rss([sys.executable, "-c", script, table, part], timeout_s=timeout_s)
    r.update(json.loads(r["out"].strip().splitlines()[-1]))
    return r


def deltalens(binary, args, table, part, timeout_s):
    r = run_rss([binary] + [a.replace("{T}", table).replace("{P}", part) for a in args]
                + ["--io-stats", "--io-log"], discard_stdout="files" in args and "--limit" not in args,
                timeout_s=timeout_s)
    m = re.search(r"io: (\d+) requests .*?, (\d+) bytes read", r["err"])
    # bytes by kind of file, from the request log
    # (a line per request: "io: GetRange PATH RANGE -> ok, N bytes, T ms")
    kinds = {"checkpoint": 0, "commits": 0}
    logged = 0
    for line in r["err"].splitlines():
        g = re.match(r"io: \S+ (\S+) .*-> (?:ok|failed), (\d+) bytes", line)
        logged += bool(g)
        if g and ".checkpoint." in g.group(1):
            kinds["checkpoint"] += int(g.group(2))
        elif g and g.group(1).endswith(".json"):
            kinds["commits"] += int(g.group(2))
    if logged != int(m.group(1)):
        sys.exit(f"{args}: {logged} request lines understood of {m.group(1)} requests (has --io-log changed?)")
    r.update(engine_s=r["wall_s"], bytes=int(m.group(2)), requests=int(m.group(1)),
             checkpoint_bytes=kinds["checkpoint"], commit_bytes=kinds["commits"])
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_dir")
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--deltalens", default=os.path.join(ROOT, "target/release/deltalens"))
    ap.add_argument("--goals", action="store_true", help="check the issue's goals; exit 1 on a miss")
    ap.add_argument("--no-peers", action="store_true", help="deltalens only (CI's brief run)")
    ap.add_argument("--scan-share", type=float, default=0.05,
                    help="the most of the checkpoint a scan may read (CI's 100k table: one partition"
                         " is 10%% of it and the add columns' dictionary pages another 12%%)")
    ap.add_argument("--skip", action="append", default=[], metavar="READER:QUESTION",
                    help="leave a peer's answer out (e.g. deltalake:scan_partition, 210 s and 12 GB at 1M)")
    ap.add_argument("--timeout", type=float, default=1800,
                    help="seconds one reader may take on one question before the run stops")
    ap.add_argument("--rss-slack", type=float, default=1.0,
                    help="multiply the RSS goals (CI: a debug build on a shared machine)")
    a = ap.parse_args()
    table = os.path.join(a.bench_dir, f"ckpt{a.files // 1000}k")
    if not os.path.isdir(os.path.join(table, "_delta_log")):
        subprocess.run([sys.executable, MAKE_SCALE, a.bench_dir, str(a.files)], check=True)
    cp = [f for f in os.listdir(os.path.join(table, "_delta_log")) if f.endswith(".checkpoint.parquet")]
    cp_bytes = sum(os.path.getsize(os.path.join(table, "_delta_log", f)) for f in cp)
    # in a child process: this one stays small, and so do the processes it forks (a
    # child's peak RSS counts the parent's pages until it execs)
    # (an absolute path: the child runs in bench/; its errors go to our stderr)
    part = subprocess.run([sys.executable, "-c", "import scale_data, sys; print(scale_data.ensure(sys.argv[1]))",
                           os.path.abspath(table)], cwd=HERE, check=True, stdout=subprocess.PIPE,
                          text=True).stdout.split()[-1]
    print(f"table {table}: {a.files} files in the checkpoint ({cp_bytes / 1e6:.0f} MB), then 50 commits;"
          f" data files for partition event_date={part} (scale_data.py)")
    print(f"cores: {os.cpu_count()}; runs: {a.runs} (median); a fresh process each\n")

    readers = {}
    for q, _ in QUESTIONS:
        readers[("deltalens", q)] = lambda q=q: deltalens(a.deltalens, DELTALENS[q], table, part, a.timeout)
        if not a.no_peers:
            readers[("deltalake", q)] = lambda q=q: py(DELTALAKE[q], "from deltalake import DeltaTable\n", table, part, a.timeout)
            if q in DUCKDB:
                readers[("duckdb", q)] = lambda q=q: py(DUCKDB[q], DUCKDB_SETUP, table, part, a.timeout)
    if not a.no_peers:
        readers[("deltalake", "open")] = lambda: py(DELTALAKE["open"], "from deltalake import DeltaTable\n", table, part, a.timeout)
    for skip in a.skip:
        readers.pop(tuple(skip.split(":", 1)), None)
    results = {k: [] for k in readers}
    for _ in range(a.runs):
        for k, f in readers.items():
            results[k].append(f())
    failed = {k: next(r["error"] for r in v if "error" in r)
              for k, v in results.items() if any("error" in r for r in v)}
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("wall_s", "engine_s", "rss", "bytes")}
           for k, v in results.items() if k not in failed}

    print(f"{'question':<26} {'reader':<10} {'process s':>10} {'engine s':>9} {'peak RSS MiB':>13} {'read MB':>9} {'of it checkpoint MB':>20}")
    for q, label in QUESTIONS + ([("open", "open (DeltaTable(path))")] if not a.no_peers else []):
        for who in ("deltalens", "deltalake", "duckdb"):
            if (who, q) in failed:
                print(f"{label:<26} {who:<10} failed: {failed[(who, q)]}")
            m = med.get((who, q))
            if m:
                cpb = results[(who, q)][0].get("checkpoint_bytes")
                print(f"{label:<26} {who:<10} {m['wall_s']:>10.3f} {m['engine_s']:>9.3f} "
                      f"{m['rss'] / 2**20:>13.0f} {m['bytes'] / 1e6:>9.2f} "
                      f"{'-' if cpb is None else f'{cpb / 1e6:.3f}':>20}")
    if not a.no_peers:
        open_s, open_rss = med[("deltalake", "open")]["engine_s"], med[("deltalake", "open")]["rss"]
        print("\nratios (deltalens process / deltalake's open engine time; RSS / deltalake open RSS;"
              " and against each peer's own answer to the question)")
        for q, label in QUESTIONS:
            d = med[("deltalens", q)]
            line = f"{label:<26} time {d['wall_s'] / open_s:6.3f}x open, RSS {d['rss'] / open_rss:5.3f}x open"
            for who in ("deltalake", "duckdb"):
                p = med.get((who, q))
                if p:
                    line += f"; vs {who}: time {d['wall_s'] / p['engine_s']:.2f}x, RSS {d['rss'] / p['rss']:.2f}x"
            print(line)
    if a.goals:
        misses = []
        def goal(ok, what):
            print(f"goal {'met ' if ok else 'MISS'}: {what}")
            if not ok:
                misses.append(what)
        mb = 2**20
        log = os.path.join(table, "_delta_log")
        tail_commits = sum(os.path.getsize(os.path.join(log, f)) for f in os.listdir(log)
                           if f.endswith(".json") and int(f[:20]) > max(int(c[:20]) for c in cp))
        print(f"(the {tail_commits / 1e3:.0f} KB of commits after the checkpoint are read by every"
              " question that needs the version's metadata: any of them may change it)")
        for q in ("schema", "history", "info_no_files"):
            d = dict(results[("deltalens", q)][0], **med[("deltalens", q)])
            goal(d["checkpoint_bytes"] <= 100_000,
                 f"{q}: {d['checkpoint_bytes']:,.0f} bytes of the checkpoint read <= 100 KB")
            goal(d["commit_bytes"] <= tail_commits,
                 f"{q}: {d['commit_bytes']:,.0f} bytes of commits read <= the tail's {tail_commits:,}")
            goal(d["rss"] <= 50 * mb * a.rss_slack,
                 f"{q}: peak RSS {d['rss'] / mb:.0f} MiB <= {50 * a.rss_slack:.0f} MiB")
            if not a.no_peers:
                goal(d["wall_s"] <= 0.05 * open_s, f"{q}: {d['wall_s']:.3f} s <= 0.05 x deltalake's open ({open_s:.2f} s)")
        for q in ("info", "files_100", "files_all"):
            d = med[("deltalens", q)]
            goal(d["rss"] <= 100 * mb * a.rss_slack,
                 f"{q}: peak RSS {d['rss'] / mb:.0f} MiB <= {100 * a.rss_slack:.0f} MiB")
            if not a.no_peers and q != "files_all":  # (the whole listing: memory only)
                goal(d["wall_s"] <= 0.5 * open_s, f"{q}: {d['wall_s']:.3f} s <= 0.5 x deltalake's open ({open_s:.2f} s)")
        for q in ("scan_100", "scan_partition"):
            d = dict(results[("deltalens", q)][0], **med[("deltalens", q)])
            goal(d["checkpoint_bytes"] <= a.scan_share * cp_bytes,
                 f"{q}: {d['checkpoint_bytes']:,.0f} bytes of the checkpoint read"
                 f" ({d['checkpoint_bytes'] / cp_bytes:.1%}) <= {a.scan_share:.0%} of its {cp_bytes:,}")
            goal(d["rss"] <= 100 * mb * a.rss_slack,
                 f"{q}: peak RSS {d['rss'] / mb:.0f} MiB <= {100 * a.rss_slack:.0f} MiB")
        if misses:
            sys.exit(f"{len(misses)} goals missed")


if __name__ == "__main__":
    main()

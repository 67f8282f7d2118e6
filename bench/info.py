#!/usr/bin/env python3
"""Benchmark: opening a Delta table (snapshot + file list) with `deltalens info` vs
deltalake (DeltaTable(path) + file list) and DuckDB's delta_scan (a query whose statistics
pruning skips every file, so DuckDB builds the whole file list but reads no data), side by
side in one run.

    scripts/setup --python
    python3 ../shared/bench/make_tables.py BENCH_DIR --only ckpt100k,log2000
    cargo build --release -p deltalens-cli
    python3 bench/info.py BENCH_DIR [--runs 5]

Each measurement is a fresh process; runs are interleaved (deltalens, deltalake, DuckDB,
deltalens, ...) so machine noise hits all three alike. Reported: median wall time of the
whole process and of the engine call alone (for deltalens the process is the engine),
peak RSS, the most threads seen at once, bytes read and requests. deltalens' bytes and
requests come from its counting storage decorator (--io-stats); the peers' bytes are the
growth of /proc/self/io rchar across the engine call.
"""
import argparse
import json
import os
import re
import statistics
import sys
import textwrap

from common import run_rss

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PEER_DELTALAKE = textwrap.dedent("""
    import json, sys, time
    def rchar():
        return int(next(l for l in open('/proc/self/io') if l.startswith('rchar')).split()[1])
    from deltalake import DeltaTable
    r0 = rchar(); t0 = time.perf_counter()
    dt = DeltaTable(sys.argv[1])
    n = len(dt.file_uris())
    v = dt.version()
    t1 = time.perf_counter(); r1 = rchar()
    print(json.dumps({"engine_s": t1 - t0, "bytes": r1 - r0, "files": n, "version": v}))
""")

PEER_DUCKDB = textwrap.dedent("""
    import json, sys, time, os
    def rchar():
        return int(next(l for l in open('/proc/self/io') if l.startswith('rchar')).split()[1])
    import duckdb, duckdb_extension_delta
    ext = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), 'extensions', 'v' + duckdb.__version__, 'delta.duckdb_extension')
    con = duckdb.connect(config={'allow_unsigned_extensions': 'true'})
    con.execute(f"LOAD '{ext}'")
    r0 = rchar(); t0 = time.perf_counter()
    # Open the snapshot and build its file list with statistics, reading no data: ids are
    # never negative, so file skipping on the id statistics prunes every file.
    n = con.execute("SELECT count(*) FROM delta_scan(?) WHERE id < -1", [sys.argv[1]]).fetchone()[0]
    assert n == 0
    t1 = time.perf_counter(); r1 = rchar()
    print(json.dumps({"engine_s": t1 - t0, "bytes": r1 - r0, "files": None}))
""")


def deltalens(binary, table):
    r = run_rss([binary, "info", table, "--json", "--io-stats"])
    info = json.loads(r["out"])
    m = re.search(r"io: (\d+) requests .*?, (\d+) bytes read", r["err"])
    r.update(engine_s=r["wall_s"], requests=int(m.group(1)), bytes=int(m.group(2)),
             files=info["num_files"], version=info["version"])
    return r


def peer(script, table):
    r = run_rss([sys.executable, "-c", script, table])
    d = json.loads(r["out"])
    r.update(engine_s=d["engine_s"], bytes=d["bytes"], files=d["files"], requests=None)
    return r


def log_bytes(table):
    d = os.path.join(table, "_delta_log")
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
               if os.path.isfile(os.path.join(d, f)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_dir")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tables", default="ckpt100k,log2000")
    ap.add_argument("--deltalens", default=os.path.join(ROOT, "target/release/deltalens"))
    a = ap.parse_args()
    print(f"cores: {os.cpu_count()}; runs: {a.runs} (median); fresh process each\n")
    for name in a.tables.split(","):
        table = os.path.join(a.bench_dir, name)
        readers = {
            "deltalens": lambda: deltalens(a.deltalens, table),
            "deltalake": lambda: peer(PEER_DELTALAKE, table),
            "duckdb": lambda: peer(PEER_DUCKDB, table),
        }
        results = {k: [] for k in readers}
        for _ in range(a.runs):
            for k, f in readers.items():
                results[k].append(f())
        med = {k: {m: statistics.median(r[m] for r in v) for m in ("wall_s", "engine_s", "rss", "threads")}
               for k, v in results.items()}
        files = {k: v[0]["files"] for k, v in results.items()}
        print(f"## {name}  (log files: {log_bytes(table) / 1e6:.2f} MB on disk; active files: {files})")
        print(f"{'reader':<10} {'process s':>10} {'engine s':>9} {'peak RSS MiB':>13} {'threads':>8} {'bytes read MB':>14} {'requests':>9}")
        for k, v in results.items():
            m = med[k]
            req = v[0]["requests"]
            print(f"{k:<10} {m['wall_s']:>10.3f} {m['engine_s']:>9.3f} {m['rss'] / 2**20:>13.0f} {m['threads']:>8.0f} "
                  f"{v[0]['bytes'] / 1e6:>14.2f} {req if req is not None else '-':>9}")
        for peer_name in ("deltalake", "duckdb"):
            print(f"deltalens / {peer_name}: process {med['deltalens']['wall_s'] / med[peer_name]['wall_s']:.2f}x, "
                  f"engine {med['deltalens']['engine_s'] / med[peer_name]['engine_s']:.2f}x, "
                  f"RSS {med['deltalens']['rss'] / med[peer_name]['rss']:.2f}x")
        print()


if __name__ == "__main__":
    main()

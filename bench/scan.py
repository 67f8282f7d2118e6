#!/usr/bin/env python3
"""Benchmark: full scan of scan5m to Arrow, side by side in one run, and the bytes a
`--limit 100` preview fetches.

    scripts/setup
    python3 ../shared/bench/make_tables.py BENCH_DIR --only scan5m
    cargo build --release -p deltalens-cli
    python3 bench/scan.py BENCH_DIR/scan5m [--runs 5]

Readers (fresh process each, interleaved): `deltalens scan --format arrow > /dev/null`
(the whole process), deltalake `DeltaTable(p).to_pyarrow_table()`, DuckDB
`SELECT * FROM delta_scan(p)` fetched as Arrow, and `pyarrow.dataset` over the same
parquet files (no Delta: the physical reference). For the Python readers the engine time
is the reader call alone. Then `--limit 100`: bytes fetched by deltalens (counting
decorator) next to `../shared/bench/min_bytes.py` and DuckDB's bytes (rchar growth), and
deltalens' peak RSS.
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

RCHAR = textwrap.dedent("""
    def rchar():
        return int(next(l for l in open('/proc/self/io') if l.startswith('rchar')).split()[1])
""")

PEERS = {
    "deltalake": """
from deltalake import DeltaTable
r0 = rchar(); t0 = time.perf_counter()
t = DeltaTable(sys.argv[1]).to_pyarrow_table()
""",
    "duckdb": """
import duckdb, duckdb_extension_delta, os
ext = os.path.join(os.path.dirname(duckdb_extension_delta.__file__), 'extensions', 'v' + duckdb.__version__, 'delta.duckdb_extension')
con = duckdb.connect(config={'allow_unsigned_extensions': 'true'})
con.execute(f"LOAD '{ext}'")
r0 = rchar(); t0 = time.perf_counter()
t = con.execute("SELECT * FROM delta_scan(?)" + (" LIMIT " + sys.argv[2] if len(sys.argv) > 2 else ""), [sys.argv[1]]).to_arrow_table()
""",
    "pyarrow.dataset": """
import pyarrow.dataset as ds, glob, os
files = sorted(glob.glob(os.path.join(sys.argv[1], '*.parquet')))
r0 = rchar(); t0 = time.perf_counter()
t = ds.dataset(files, format='parquet').to_table()
""",
}


def peer(name, table, *extra):
    code = "import json, sys, time\n" + RCHAR + PEERS[name] + textwrap.dedent("""
        t1 = time.perf_counter(); r1 = rchar()
        print(json.dumps({"engine_s": t1 - t0, "rows": t.num_rows, "bytes": r1 - r0}), flush=True)
        import os; os._exit(0)  # skip interpreter shutdown (deltalake's runtime sometimes aborts there)
    """)
    r = run_rss([sys.executable, "-c", code, table, *extra])
    r.update(json.loads(r["out"]))
    return r


def deltalens(binary, table, *extra):
    cmd = [binary, "scan", table, "--format", "arrow", "--io-stats", *extra]
    r = run_rss(["sh", "-c", "exec " + " ".join(f"'{c}'" for c in cmd) + " > /dev/null"])
    m = re.search(r"io: (\d+) requests .*?, (\d+) bytes read", r["err"])
    r.update(engine_s=r["wall_s"], requests=int(m.group(1)), bytes=int(m.group(2)), rows=None)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--deltalens", default=os.path.join(ROOT, "target/release/deltalens"))
    a = ap.parse_args()
    rows = 5_000_000
    readers = {
        "deltalens": lambda: deltalens(a.deltalens, a.table),
        "deltalake": lambda: peer("deltalake", a.table),
        "duckdb": lambda: peer("duckdb", a.table),
        "pyarrow.dataset": lambda: peer("pyarrow.dataset", a.table),
    }
    res = {k: [] for k in readers}
    for _ in range(a.runs):
        for k, f in readers.items():
            res[k].append(f())
    print(f"cores: {os.cpu_count()}; {a.runs} runs, median; full scan of {a.table} to Arrow\n")
    print(f"{'reader':<16} {'process s':>10} {'engine s':>9} {'M rows/s (engine)':>18} {'peak RSS MiB':>13} {'threads':>8}")
    med = {}
    for k, v in res.items():
        m = {x: statistics.median(r[x] for r in v) for x in ("wall_s", "engine_s", "rss", "threads")}
        med[k] = m
        print(f"{k:<16} {m['wall_s']:>10.3f} {m['engine_s']:>9.3f} {rows / m['engine_s'] / 1e6:>18.1f} {m['rss'] / 2**20:>13.0f} {m['threads']:>8.0f}")
    for p in ("pyarrow.dataset", "deltalake", "duckdb"):
        print(f"deltalens throughput / {p}: {med[p]['engine_s'] / med['deltalens']['engine_s']:.2f}x")

    print("\n--limit 100:")
    lim = [deltalens(a.deltalens, a.table, "--limit", "100") for _ in range(a.runs)]
    duck = [peer("duckdb", a.table, "100") for _ in range(a.runs)]
    mb = json.loads(subprocess.run([sys.executable, os.path.join(ROOT, "../shared/bench/min_bytes.py"), a.table, "100"],
                                   capture_output=True, text=True, check=True).stdout)
    print(f"deltalens: {lim[0]['bytes'] / 1e6:.3f} MB in {lim[0]['requests']} requests (incl. the log), "
          f"peak RSS {statistics.median(r['rss'] for r in lim) / 2**20:.0f} MiB, {statistics.median(r['wall_s'] for r in lim):.3f} s")
    print(f"duckdb:    {statistics.median(r['bytes'] for r in duck) / 1e6:.3f} MB (rchar)")
    print(f"minimum:   {mb['min_page_total'] / 1e6:.3f} MB page-level, {mb['min_rowgroup_total'] / 1e6:.3f} MB row-group level")


if __name__ == "__main__":
    main()

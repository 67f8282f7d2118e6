"""Data files for the scan questions of bench/scale.py. make_scale.py writes logs only; a
scan needs the files it reads. This writes, for one partition of a scale table (the
partition of the checkpoint's first add: an unfiltered LIMIT preview reads from it too),
a real Parquet file per add, with the size the log gives it: the rows and the footer are
real (pyarrow), the bytes between them a sparse hole no reader fetches (a footer's column
offsets are absolute, so the file stays valid at any length). Each file holds
min(numRecords, 100) rows (its statistics say up to 2,000): a LIMIT covered by the
statistics is still covered by the rows, and a scan of the partition reads 10,000 files
of data without writing gigabytes. Written once per table (a marker file says so).
"""
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

ROWS_PER_FILE = 100


def checkpoint_path(table):
    log = os.path.join(table, "_delta_log")
    cps = sorted(f for f in os.listdir(log) if f.endswith(".checkpoint.parquet"))
    return os.path.join(log, cps[-1])


def partition_adds(table):
    """(partition value, [(path, size, stats)]) of the checkpoint's first add's partition."""
    t = pq.read_table(checkpoint_path(table), columns=["add"]).column("add").combine_chunks()
    valid = t.is_valid()
    t = t.filter(valid)
    pv = t.field("partitionValues").to_pylist()
    first = dict(pv[0])["event_date"]
    keep = [i for i, m in enumerate(pv) if dict(m).get("event_date") == first]
    rows = t.take(pa.array(keep))
    return first, list(zip(rows.field("path").to_pylist(), rows.field("size").to_pylist(),
                           rows.field("stats").to_pylist()))


def parquet_body(stats, rows_cap=ROWS_PER_FILE):
    s = json.loads(stats)
    n = min(int(s["numRecords"]), rows_cap)
    lo = int(s["minValues"]["id"])
    t = pa.table({
        "id": pa.array(range(lo, lo + n), pa.int64()),
        "brand": pa.array([f"m{lo % 977:05d}"] * n, pa.string()),
        "price": pa.array([1.5 + (lo + i) % 998 for i in range(n)], pa.float64()),
    })
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def write_sparse(path, size, body):
    footer_len = int.from_bytes(body[-8:-4], "little")
    split = len(body) - 8 - footer_len
    tail = body[split:]
    if len(body) > size:
        raise ValueError(f"{path}: {len(body)} bytes of Parquet do not fit the log's size {size}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(body[:split])
        f.truncate(size - len(tail))
        f.seek(size - len(tail))
        f.write(tail)


def ensure(table):
    """Write the data files once; returns the partition value they are for."""
    marker = os.path.join(table, ".bench-data")
    if os.path.exists(marker):
        return open(marker).read().strip()
    part, adds = partition_adds(table)
    for path, size, stats in adds:
        write_sparse(os.path.join(table, path), size, parquet_body(stats))
    with open(marker, "w") as f:
        f.write(part)
    print(f"{table}: wrote {len(adds)} sparse data files of partition event_date={part}", file=sys.stderr)
    return part

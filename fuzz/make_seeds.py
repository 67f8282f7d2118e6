#!/usr/bin/env python3
"""Seed corpora for the fuzz targets, taken at run time from Delta tables on disk.

    make_seeds.py OUT_DIR TABLE_TREE...

Every directory under a TABLE_TREE that holds a `_delta_log/` is read: commit and other
JSON log files, checkpoints and sidecars, `_last_checkpoint`, deletion vector files, and
what the log holds (schema strings, statistics, partition values, deletion vector
descriptors, file names). Seeds are written to OUT_DIR/<target>/<sha1 of the bytes>, so
running it again adds nothing twice. Nothing is copied into the repository: OUT_DIR is
fuzz/corpus/ (git-ignored). Hand-written seeds live in fuzz/seeds/<target>/.
"""

import hashlib
import json
import os
import struct
import sys

# the order of TYPES in fuzz_targets/partition_values.rs
PARTITION_TYPES = [
    "string", "binary", "byte", "short", "integer", "long", "float", "double", "boolean",
    "date", "timestamp", "timestamp_ntz", "decimal(10,2)", "decimal(38,18)", "decimal(5,0)",
    "decimal(38,0)",
]

MAX_SEED = 256 * 1024

counts = {}


def put(out, target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data or len(data) > MAX_SEED:
        return
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, hashlib.sha1(data).hexdigest())
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
        counts[target] = counts.get(target, 0) + 1


def read(path):
    with open(path, "rb") as f:
        return f.read()


def json_lines(data):
    for line in data.splitlines():
        try:
            yield json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue


def partition_type_index(t):
    if isinstance(t, str) and t in PARTITION_TYPES:
        return PARTITION_TYPES.index(t)
    if isinstance(t, str) and t.startswith("decimal("):
        return PARTITION_TYPES.index("decimal(10,2)")
    return None


def bitmaps(dv_file):
    """The bitmaps of a deletion vector file: after the version byte, (BE length, bitmap,
    BE CRC-32) repeated."""
    i = 1
    while i + 4 <= len(dv_file):
        (n,) = struct.unpack(">I", dv_file[i:i + 4])
        if n == 0 or i + 8 + n > len(dv_file):
            return
        yield dv_file[i + 4:i + 4 + n]
        i += 8 + n


def table(out, root):
    log = os.path.join(root, "_delta_log")
    partition_types = {}
    names = []
    for dirpath, _, files in os.walk(log):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            names.append(os.path.relpath(path, log))
            data = read(path)
            if name.endswith(".json"):
                put(out, "commit_json", data)
                put(out, "table_commit", data)
                for action in json_lines(data):
                    if not isinstance(action, dict):
                        continue
                    md = action.get("metaData")
                    if isinstance(md, dict) and isinstance(md.get("schemaString"), str):
                        put(out, "schema_json", md["schemaString"])
                        try:
                            fields = json.loads(md["schemaString"]).get("fields", [])
                            for f in fields:
                                partition_types[f.get("name")] = f.get("type")
                        except (ValueError, AttributeError):
                            pass
                    for kind in ("add", "remove"):
                        a = action.get(kind)
                        if not isinstance(a, dict):
                            continue
                        if isinstance(a.get("stats"), str):
                            put(out, "stats_json", a["stats"])
                        dv = a.get("deletionVector")
                        if isinstance(dv, dict):
                            put(out, "dv_descriptor", json.dumps(dv))
                        pv = a.get("partitionValues")
                        if isinstance(pv, dict):
                            for col, value in pv.items():
                                idx = partition_type_index(partition_types.get(col))
                                if idx is not None and isinstance(value, str):
                                    put(out, "partition_values", bytes([idx]) + value.encode())
            elif name.endswith(".parquet"):
                put(out, "checkpoint_parquet", data)
            elif name == "_last_checkpoint":
                put(out, "last_checkpoint", data)
    for n in names:
        put(out, "log_path", n)
    for dirpath, _, files in os.walk(root):
        if "_delta_log" in os.path.relpath(dirpath, root).split(os.sep):
            continue
        for name in files:
            if name.endswith(".parquet") and os.path.getsize(os.path.join(dirpath, name)) <= 64 * 1024:
                put(out, "scan_parquet", read(os.path.join(dirpath, name)))
                put(out, "scan_amplification", read(os.path.join(dirpath, name)))
            if name.endswith(".bin"):
                data = read(os.path.join(dirpath, name))
                put(out, "dv_file", data)
                for b in bitmaps(data):
                    put(out, "dv_bitmap", b)


def main():
    out, trees = sys.argv[1], sys.argv[2:]
    for tree in trees:
        if not os.path.isdir(tree):
            print(f"make_seeds: {tree} is not a directory, skipped", file=sys.stderr)
            continue
        for dirpath, dirs, _ in os.walk(tree):
            if "_delta_log" in dirs:
                table(out, dirpath)
                dirs[:] = [d for d in dirs if d != "_delta_log"]
    print("seeds added: " + (", ".join(f"{t} {n}" for t, n in sorted(counts.items())) or "none"))


if __name__ == "__main__":
    main()

"""The health figures of the Delta table at argv[1], by an independent reader, for
crates/cli/tests/health.rs: deltalake's add actions (sizes, numRecords, partitions), a
DataFusion count(*) through deltalake (live rows: numRecords minus them is what deletion
vectors hide), deltalake's history (OPTIMIZE, VACUUM END) and the raw log read with json and
pyarrow (tombstones: the checkpoint's removes and the newer commits', newest action per
logical file). Prints one JSON object, with `now` three days after the newest tombstone."""
import sys, json, os, datetime
import pyarrow as pa, pyarrow.parquet as pq
from deltalake import DeltaTable
p = sys.argv[1]
dt = DeltaTable(p)
v = dt.version()
a = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
MIB = 1 << 20
sizes = [r["size_bytes"] for r in a]
parts = {}
for r in a:
    k = tuple(sorted((c, r[c]) for c in r if c.startswith("partition.")))
    parts[k] = parts.get(k, 0) + r["size_bytes"]
from deltalake import QueryBuilder
live = QueryBuilder().register('t', dt).execute('select count(*) as n from t').read_all()[0][0].as_py()
records = sum(r["num_records"] for r in a)
hist = dt.history()
def newest(op):
    vs = [h["version"] for h in hist if h.get("operation") == op]
    return max(vs) if vs else None
# tombstones, from the raw log: the checkpoint's removes and the commits' after it
log = os.path.join(p, "_delta_log")
cps = sorted(int(f[:20]) for f in os.listdir(log) if ".checkpoint" in f and f[:20].isdigit() and int(f[:20]) <= v)
cp = cps[-1] if cps else None
def key(x):
    dv = x.get("deletionVector") or {}
    return (x["path"], dv.get("storageType"), dv.get("pathOrInlineDv"), dv.get("offset"))
seen, tomb = set(), []
for ver in range(v, -1 if cp is None else cp, -1):
    f = os.path.join(log, "%020d.json" % ver)
    for line in open(f):
        line = line.strip()
        if not line: continue
        act = json.loads(line)
        if "add" in act: seen.add(key(act["add"]))
        if "remove" in act:
            k = key(act["remove"])
            if k not in seen:
                seen.add(k); tomb.append(act["remove"])
if cp is not None:
    for f in os.listdir(log):
        if f.startswith("%020d.checkpoint" % cp) and f.endswith(".parquet"):
            for r in pq.read_table(os.path.join(log, f), columns=["remove"]).column("remove").to_pylist():
                if r and key(r) not in seen: tomb.append(r)
stamps = [t["deletionTimestamp"] for t in tomb if t.get("deletionTimestamp") is not None]
now = (max(stamps) if stamps else 1_700_000_000_000) + 3 * 86_400_000
week = 7 * 86_400_000
within = [t for t in tomb if t.get("deletionTimestamp") is not None and t["deletionTimestamp"] > now - week]
print(json.dumps({
  "now": datetime.datetime.fromtimestamp(now / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3],
  "now_ms": now, "version": v, "checkpoint": cp,
  "files": len(a), "bytes": sum(sizes), "records": records, "hidden": records - live,
  "under_32": sum(1 for s in sizes if s < 32 * MIB), "under_1": sum(1 for s in sizes if s < MIB),
  "partitions": len(parts) if any(k for k in parts) else None,
  "largest_partition_bytes": max(parts.values()) if any(k for k in parts) else None,
  "last_optimize": newest("OPTIMIZE"), "last_vacuum_end": newest("VACUUM END"),
  "commits": len(hist),
  "tombstones": len(tomb), "tombstone_bytes": sum(t.get("size") or 0 for t in tomb),
  "within": len(within), "within_bytes": sum(t.get("size") or 0 for t in within),
}))

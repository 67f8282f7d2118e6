#!/usr/bin/env python3
"""A Delta Sharing server for tests (the provider side of the open protocol, delta-io/delta-sharing
PROTOCOL.md), serving local Delta tables to recipients over HTTP. 127.0.0.1 only; stdlib plus
pyarrow (to read parquet checkpoints). The log replay is its own (JSON commits, classic single
and multi-part checkpoints, v2 checkpoints in JSON or parquet with sidecars; checkpoints are
found by listing _delta_log, so _last_checkpoint, a hint, is not needed); it never reads table
data, only the log.

  sharing_server.py --config CONFIG.json --token TOKEN [--port 0] [--port-file F]
      [--stop-after SECONDS] [--url-ttl-seconds N] [--prefix /delta-sharing]
      [--expire-first-queries N]
      [--max-page-size N]
      [--presign-store s3=http://127.0.0.1:PORT | azure=http://127.0.0.1:PORT]

Prints "listening on http://127.0.0.1:PORT" (flushed) once bound, and writes PORT to --port-file
when given. Stops itself after --stop-after seconds (default 900). A recipient profile:
  {"shareCredentialsVersion": 1, "endpoint": "http://127.0.0.1:PORT/delta-sharing",
   "bearerToken": "TOKEN"}

Endpoints (under --prefix), all needing "Authorization: Bearer TOKEN" (else 401):
  GET  /shares[?maxResults=&pageToken=]                          list shares
  GET  /shares/{share}                                           get share
  GET  /shares/{share}/schemas[?maxResults=&pageToken=]          list schemas
  GET  /shares/{share}/schemas/{schema}/tables[?...]             list tables
  GET  /shares/{share}/all-tables[?...]                          list all tables
  GET  /shares/{share}/schemas/{schema}/tables/{table}/version[?startingTimestamp=]
  HEAD /shares/{share}/schemas/{schema}/tables/{table}           (deprecated form of /version)
  GET  .../tables/{table}/metadata[?version=|timestamp=]         protocol + metaData lines
  POST .../tables/{table}/query  {version|timestamp|startingVersion[,endingVersion],
                                  limitHint, predicateHints, jsonPredicateHints}
  GET  .../tables/{table}/changes?startingVersion=|startingTimestamp=
                                  [&endingVersion=|endingTimestamp=][&includeHistoricalMetadata=]
Names are case-insensitive (and checked against the protocol's Names rules at start). Lists
page with an opaque, tamper-checked nextPageToken (maxResults 0..500, default 500;
--max-page-size N returns at most N items per page whatever maxResults says, as the spec
allows, to exercise a client's paging). NDJSON answers carry Delta-Table-Version and echo the
format used in "delta-sharing-capabilities: responseformat=parquet|delta" (plus
includeendstreamaction=true when asked for, then the last line is an endStreamAction), and echo
a valid "fileidhash" header (parquet: md5 of the path, delta: sha256; by default per format).
Hints (limitHint, predicateHints, jsonPredicateHints) are accepted and ignored: every active file
is returned, which the protocol allows. Not implemented: maxFiles/pageToken paging of query and
changes (400), asyncquery (ignored: answered synchronously, as the spec allows), refresh
tokens (ignored), temporary table credentials (404: url access only).

Response format (the reference server's rules): one format asked for -> that one; several
(responseformat=delta,parquet) -> parquet when the table's minReaderVersion is 1, else delta.
A table using deletion vectors (delta.enableDeletionVectors not false, or any file with a DV)
or column mapping (delta.columnMapping.mode not none) is answered only in delta format and only
when the request lists those readerfeatures (deletionvectors, columnmapping); otherwise 400
UNSUPPORTED_OPERATION. In delta format without any readerfeatures the protocol line is
downgraded to minReaderVersion 1 as the reference server does; with readerfeatures it is the
table's own. Tables needing reader features this replay does not know are refused.
Deletion vectors in delta format: like the reference server, a relative ('u') descriptor, or an
absolute ('p') one pointing inside the table root, becomes storageType 'p' with a pre-signed URL
of the DV file in pathOrInlineDv (offset, sizeInBytes, cardinality kept); inline ('i') ones are
passed through; the file line also gets deletionVectorFileId.

Pre-signed URLs: the server serves table files itself at
  /_files/{table id}/{path}?sp=r&exp=EPOCH_SECONDS&sig=HMAC-SHA256
(GET and HEAD, single byte Range -> 206, unsatisfiable -> 416, expired or bad signature -> 403,
missing -> 404); `presign` is the one function to swap for other stores.
--presign-store swaps it: s3=ENDPOINT (moto: each file is uploaded to the bucket
"shared-tables" when first signed, and its URL is a SigV4 pre-signed GET of it) or
azure=ENDPOINT (azurite's development account: uploaded to the container "shared-tables",
the URL carries a read-only blob SAS). Expired URLs (--expire-first-queries) are signed with an
expiry a minute ago: azurite refuses them (403); moto 5.2 does not check a pre-signed URL's
expiry or signature, so with s3= they only have real S3 URL shapes and range answers. (sp=r is unchecked:
it makes delta-kernel-rs treat the URL as pre-signed and fetch it over plain HTTP.)

Commit timestamps (time travel by timestamp, CDF timestamps, the version endpoint): per table
"timestamps": "auto" (default: the in-commit timestamp when the commit has one, else the commit
file's modification time, as the reference server does), "mtime", or "commitInfo"
(commitInfo.timestamp: the corpus does not keep file times); monotonized like the reference.
Timestamps in requests are ISO 8601 with a zone (2022-01-01T00:00:00Z); others get 400.

Test-only: GET /_test/stats (same token) -> counters: requests (authenticated API requests),
unauthorized, urls_signed, files (every answer on /_files), file_ok, file_partial, file_denied,
file_missing, file_bytes (stats calls themselves not counted).

Errors: {"errorCode": ..., "message": ...} with the reference server's codes:
RESOURCE_DOES_NOT_EXIST 404, INVALID_PARAMETER_VALUE / UNSUPPORTED_OPERATION / MALFORMED_REQUEST
400, UNAUTHENTICATED 401, INTERNAL_ERROR 500. Bodies over 64 KiB get 413.

CONFIG.json:
  {"shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [
      {"name": "t", "location": "/abs/path/to/delta/table",
       "cdf": true,                 # allow /changes (the table must also have CDF enabled)
       "history": true,             # allow version/timestamp/startingVersion (default true)
       "timestamps": "auto",        # see above
       "id": "..."}]}]}]}           # optional; default a stable uuid5 of s.sc.t
"""
import argparse
import base64
import collections
import datetime
import hashlib
import hmac
import json
import os
import re
import secrets
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"
DEFAULT_PREFIX = "/delta-sharing"
MAX_BODY = 64 * 1024
PAGE_MAX = 500  # the reference server's defaultMaxResults, also the cap
STORE_NAME = "shared-tables"
# azurite's well-known development account (public, documented by Microsoft)
AZ_ACCOUNT = "devstoreaccount1"
AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://deltalens.test/delta-sharing")
NDJSON = "application/x-ndjson; charset=utf-8"
JSON_CT = "application/json; charset=utf-8"
CHUNK = 64 * 1024

STATUS = {
    "INVALID_PARAMETER_VALUE": 400,
    "UNSUPPORTED_OPERATION": 400,
    "MALFORMED_REQUEST": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "RESOURCE_DOES_NOT_EXIST": 404,
    "METHOD_NOT_ALLOWED": 405,
    "REQUEST_TOO_LARGE": 413,
    "INTERNAL_ERROR": 500,
}

# reader features this replay understands (the log itself); the ones a recipient must handle
# are checked separately (DATA_FEATURES)
KNOWN_READER_FEATURES = {
    "deletionvectors", "columnmapping", "timestampntz", "v2checkpoint", "vacuumprotocolcheck",
    "typewidening", "typewidening-preview", "varianttype", "varianttype-preview",
    "variantshredding-preview",
}


class ApiError(Exception):
    def __init__(self, code, message, status=None):
        super().__init__(message)
        self.code, self.message = code, message
        self.status = status or STATUS[code]


def bad(message):
    return ApiError("INVALID_PARAMETER_VALUE", message)


def stable_id(kind, name):
    return str(uuid.uuid5(ID_NAMESPACE, f"{kind}:{name}"))


def now_ms():
    return int(time.time() * 1000)


def parse_timestamp(value, param):
    """The spec's Timestamp Format: ISO 8601 in UTC (2022-01-01T00:00:00Z); any explicit
    offset is accepted (the reference parses ISO_OFFSET_DATE_TIME). Returns epoch ms."""
    try:
        t = datetime.datetime.fromisoformat(value.strip())
    except (ValueError, AttributeError):
        raise bad(f"Invalid {param}: {value!r} (expected ISO 8601 like 2022-01-01T00:00:00Z)")
    if t.tzinfo is None:
        raise bad(f"Invalid {param}: {value!r} has no time zone (expected e.g. "
                  "2022-01-01T00:00:00Z)")
    d = t - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    return (d.days * 86400 + d.seconds) * 1000 + d.microseconds // 1000


# ---------------------------------------------------------------- deletion vector descriptors

Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
Z85_INDEX = {c: i for i, c in enumerate(Z85)}


def z85_decode(s):
    if len(s) % 5:
        raise ValueError(f"Z85 text length {len(s)} is not a multiple of 5")
    out = bytearray()
    for i in range(0, len(s), 5):
        n = 0
        for c in s[i:i + 5]:
            if c not in Z85_INDEX:
                raise ValueError(f"not a Z85 character: {c!r}")
            n = n * 85 + Z85_INDEX[c]
        if n >= 1 << 32:
            raise ValueError("Z85 block out of range")
        out += n.to_bytes(4, "big")
    return bytes(out)


def dv_relative_path(dv):
    """Delta PROTOCOL.md: storageType 'u' -> <random prefix><20 chars Z85 UUID>, stored at
    <table>/<prefix>/deletion_vector_<uuid>.bin"""
    p = dv["pathOrInlineDv"]
    if len(p) < 20:
        raise ApiError("INTERNAL_ERROR", f"bad deletion vector path {p!r}")
    prefix, enc = p[:-20], p[-20:]
    try:
        u = uuid.UUID(bytes=z85_decode(enc))
    except ValueError as e:
        raise ApiError("INTERNAL_ERROR", f"bad deletion vector path {p!r}: {e}")
    name = f"deletion_vector_{u}.bin"
    return f"{prefix}/{name}" if prefix else name


def dv_unique_id(dv):
    if not dv:
        return None
    uid = dv["storageType"] + dv["pathOrInlineDv"]
    if dv.get("offset") is not None:
        uid += f"@{dv['offset']}"
    return uid


def file_key(action):
    return action["path"], dv_unique_id(action.get("deletionVector"))


# ---------------------------------------------------------------- log reading

COMMIT_RE = re.compile(r"^(\d{20})\.json$")
CLASSIC_RE = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
MULTI_RE = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
V2_RE = re.compile(r"^(\d{20})\.checkpoint\.([0-9a-fA-F-]{36})\.(json|parquet)$")
ABSOLUTE_RE = re.compile(r"^(file|s3a?|s3n|gs|gcs|abfss?|wasbs?|az|adl|hdfs|https?|dbfs):",
                         re.IGNORECASE)
CHECKPOINT_COLUMNS = ("add", "remove", "metaData", "protocol", "sidecar", "checkpointMetadata",
                      "txn", "domainMetadata")


def arrow_to_py(value, typ):
    """pyarrow's to_pylist gives maps as [(k, v)] lists; make them dicts, recursively."""
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_map(typ):
        return {k: arrow_to_py(v, typ.item_type) for k, v in value}
    if pa.types.is_struct(typ):
        return {typ.field(i).name: arrow_to_py(value.get(typ.field(i).name), typ.field(i).type)
                for i in range(typ.num_fields)}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return [arrow_to_py(v, typ.value_type) for v in value]
    return value


def drop_nulls(d):
    return {k: v for k, v in d.items() if v is not None}


class FileCache:
    """Parsed log files, keyed by (path, size, mtime): log files are immutable. Bounded LRU."""

    def __init__(self, size=256):
        self.size = size
        self.items = collections.OrderedDict()
        self.lock = threading.Lock()

    def get(self, path, loader):
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        value = loader(path)
        with self.lock:
            self.items[key] = value
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value


CACHE = FileCache()


def read_json_actions(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError as e:
                raise ApiError("INTERNAL_ERROR", f"{path}:{n}: invalid JSON: {e}")
    return out


def read_parquet_actions(path):
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    names = set(pf.schema_arrow.names)
    cols = [c for c in CHECKPOINT_COLUMNS if c in names]
    table = pf.read(columns=cols)
    out = []
    for c in cols:
        col = table.column(c)
        typ = col.type
        for v in col.to_pylist():
            if v is not None:
                out.append({c: arrow_to_py(v, typ)})
    return out


def read_actions(path):
    if path.endswith(".json"):
        return CACHE.get(path, read_json_actions)
    return CACHE.get(path, read_parquet_actions)


class Listing:
    def __init__(self, root):
        self.root = root
        self.log = os.path.join(root, "_delta_log")
        try:
            names = os.listdir(self.log)
        except FileNotFoundError:
            raise ApiError("RESOURCE_DOES_NOT_EXIST", "table files missing", status=400)
        except NotADirectoryError:
            raise ApiError("RESOURCE_DOES_NOT_EXIST", "table files missing", status=400)
        self.commits = {}
        multi = collections.defaultdict(dict)  # (v, n) -> {part: name}
        self.checkpoints = collections.defaultdict(list)  # v -> [[names]]
        for name in names:
            m = COMMIT_RE.match(name)
            if m:
                self.commits[int(m.group(1))] = name
                continue
            m = CLASSIC_RE.match(name) or V2_RE.match(name)
            if m:
                self.checkpoints[int(m.group(1))].append([name])
                continue
            m = MULTI_RE.match(name)
            if m:
                multi[(int(m.group(1)), int(m.group(3)))][int(m.group(2))] = name
        for (v, n), parts in multi.items():
            if sorted(parts) == list(range(1, n + 1)):  # only complete multi-part checkpoints
                self.checkpoints[v].append([parts[i] for i in range(1, n + 1)])
        versions = list(self.commits) + list(self.checkpoints)
        if not versions:
            raise ApiError("RESOURCE_DOES_NOT_EXIST", "table files missing (empty _delta_log)",
                           status=400)
        self.latest = max(versions)
        self.earliest_commit = min(self.commits) if self.commits else None

    def path(self, name):
        return os.path.join(self.log, name)

    def commit_actions(self, v):
        if v not in self.commits:
            raise bad(f"the log file of version {v} is missing (log cleaned up?)")
        return read_actions(self.path(self.commits[v]))

    def checkpoint_actions(self, parts):
        acts = []
        for name in parts:
            acts.extend(read_actions(self.path(name)))
        sidecars = [a["sidecar"] for a in acts if "sidecar" in a]
        for sc in sidecars:
            p = sc["path"]
            if ABSOLUTE_RE.match(p) or p.startswith("/"):
                u = urllib.parse.urlparse(p)
                if u.scheme not in ("", "file"):
                    raise ApiError("UNSUPPORTED_OPERATION", f"sidecar outside the table: {p}")
                full = urllib.parse.unquote(u.path)
            else:
                full = os.path.join(self.log, "_sidecars", urllib.parse.unquote(p))
            acts.extend(read_actions(full))
        return acts


class Snapshot:
    def __init__(self, version, protocol, metadata, files):
        self.version, self.protocol, self.metadata, self.files = version, protocol, metadata, files


def load_snapshot(listing, version):
    """The active files at `version`: the newest usable checkpoint at or before it, then the
    commits after it, in order. A file is (path, deletion vector unique id)."""
    if version < 0 or version > listing.latest:
        raise bad(f"version {version} does not exist (the table's latest version is "
                  f"{listing.latest})")
    start = None
    for cv in sorted((v for v in listing.checkpoints if v <= version), reverse=True):
        if all(v in listing.commits for v in range(cv + 1, version + 1)):
            start = cv
            break
    if start is None and not all(v in listing.commits for v in range(0, version + 1)):
        raise bad(f"version {version} cannot be reconstructed: log files are missing")
    protocol = metadata = None
    files = {}

    def apply(actions):
        nonlocal protocol, metadata
        for a in actions:
            if "add" in a and a["add"]:
                add = a["add"]
                files[file_key(add)] = add
            elif "remove" in a and a["remove"]:
                files.pop(file_key(a["remove"]), None)
            elif "metaData" in a and a["metaData"]:
                metadata = a["metaData"]
            elif "protocol" in a and a["protocol"]:
                protocol = a["protocol"]

    if start is not None:
        errors = []
        for parts in listing.checkpoints[start]:
            try:
                acts = listing.checkpoint_actions(parts)
            except (OSError, ValueError) as e:  # a torn checkpoint: try the next candidate
                errors.append(f"{parts[0]}: {e}")
                continue
            apply([a for a in acts if "remove" not in a])  # tombstones are not needed
            break
        else:
            raise ApiError("INTERNAL_ERROR", f"no readable checkpoint at {start}: {errors}")
        first = start + 1
    else:
        first = 0
    for v in range(first, version + 1):
        apply(listing.commit_actions(v))
    if protocol is None or metadata is None:
        raise ApiError("INTERNAL_ERROR", f"no protocol/metaData at version {version}")
    return Snapshot(version, protocol, metadata, files)


def commit_timestamps(listing, mode):
    """version -> commit timestamp (ms) of every commit file present, monotonized."""
    out = []
    for v in sorted(listing.commits):
        path = listing.path(listing.commits[v])
        ts = None
        if mode in ("auto", "commitInfo"):
            for a in read_actions(path):
                ci = a.get("commitInfo")
                if ci:
                    if mode == "auto":
                        ts = ci.get("inCommitTimestamp")
                    else:
                        ts = ci.get("inCommitTimestamp") or ci.get("timestamp")
                    break
        if ts is None:
            ts = int(os.stat(path).st_mtime * 1000)
        out.append([v, int(ts)])
    for i in range(1, len(out)):  # the reference's monotonizeCommitTimestamps
        if out[i][1] <= out[i - 1][1]:
            out[i][1] = out[i - 1][1] + 1
    return dict(out)


# ---------------------------------------------------------------- configuration

def check_name(kind, name):
    """PROTOCOL.md "Names": at most 255 characters; no space, '/', ASCII control characters or
    DEL; schema and table names no '.' either."""
    if not isinstance(name, str) or not name or len(name) > 255 or any(
            c in " /" or ord(c) < 0x20 or ord(c) == 0x7F for c in name) or (
            kind != "share" and "." in name):
        raise ValueError(f"invalid {kind} name {name!r} (see the protocol's Names section)")
    return name


class Table:
    def __init__(self, share, schema, cfg):
        self.share, self.schema = share, schema
        self.name = check_name("table", cfg["name"])
        self.full = f"{share}.{schema}.{self.name}"
        self.id = cfg.get("id") or stable_id("table", self.full.lower())
        loc = cfg["location"]
        if loc.startswith("file://"):
            loc = urllib.parse.unquote(urllib.parse.urlparse(loc).path)
        if not os.path.isabs(loc):
            raise ValueError(f"table {self.full}: location must be an absolute local path")
        self.root = os.path.realpath(loc)
        self.cdf = bool(cfg.get("cdf", False))
        self.history = bool(cfg.get("history", True))
        self.timestamps = cfg.get("timestamps", "auto")
        if self.timestamps not in ("auto", "mtime", "commitInfo"):
            raise ValueError(f"table {self.full}: timestamps must be auto, mtime or commitInfo")


class Catalog:
    def __init__(self, config):
        self.shares = []  # [(name, [(schema, [Table])])], config order
        self.by_id = {}
        seen = set()
        for sh in config.get("shares", []):
            check_name("share", sh["name"])
            if ("share", sh["name"].lower()) in seen:
                raise ValueError(f"duplicate share {sh['name']} (names are case-insensitive)")
            seen.add(("share", sh["name"].lower()))
            schemas = []
            for sc in sh.get("schemas", []):
                check_name("schema", sc["name"])
                key = ("schema", sh["name"].lower(), sc["name"].lower())
                if key in seen:
                    raise ValueError(f"duplicate schema {sh['name']}.{sc['name']} (names are "
                                     "case-insensitive)")
                seen.add(key)
                tables = [Table(sh["name"], sc["name"], t) for t in sc.get("tables", [])]
                for t in tables:
                    if t.full.lower() in seen:
                        raise ValueError(f"duplicate table {t.full} (names are case-insensitive)")
                    seen.add(t.full.lower())
                    self.by_id[t.id] = t
                schemas.append((sc["name"], tables))
            self.shares.append((sh["name"], schemas))

    def share(self, name):
        for s, schemas in self.shares:
            if s.lower() == name.lower():
                return s, schemas
        raise ApiError("RESOURCE_DOES_NOT_EXIST", f"share '{name}' not found")

    def schema(self, share, name):
        s, schemas = self.share(share)
        for sc, tables in schemas:
            if sc.lower() == name.lower():
                return s, sc, tables
        raise ApiError("RESOURCE_DOES_NOT_EXIST", f"schema '{share}.{name}' not found")

    def table(self, share, schema, name):
        missing = ApiError("RESOURCE_DOES_NOT_EXIST",
                           f"[Share/Schema/Table] '{share}/{schema}/{name}' does not exist, "
                           "please contact your share provider for further information.")
        try:
            _, _, tables = self.schema(share, schema)
        except ApiError:
            raise missing
        for t in tables:
            if t.name.lower() == name.lower():
                return t
        raise missing


def share_item(name):
    return {"name": name, "id": stable_id("share", name.lower())}


def table_item(t):
    return {"name": t.name, "schema": t.schema, "share": t.share,
            "shareId": stable_id("share", t.share.lower()), "id": t.id}


# ---------------------------------------------------------------- the server

class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, catalog, token, ttl, prefix=DEFAULT_PREFIX, port=0, max_page=PAGE_MAX):
        if not token:
            raise ValueError("an empty token would let every request in")
        super().__init__((HOST, port), Handler)
        self.catalog, self.token, self.ttl = catalog, token, ttl
        self.prefix = "/" + prefix.strip("/")
        self.max_page = max_page
        self.url_key = secrets.token_bytes(32)
        self.page_key = secrets.token_bytes(32)
        self.lock = threading.Lock()
        self.stats = {"requests": 0, "unauthorized": 0, "urls_signed": 0, "files": 0,
                      "file_ok": 0, "file_partial": 0, "file_denied": 0, "file_missing": 0,
                      "file_bytes": 0}
        # the one place that turns (table, relative path) into a URL; swap for other stores
        self.presign = self.local_presign
        # --expire-first-queries: how many /query answers of each table get expired URLs
        self.expire_queries = 0
        self.expired_queries = {}
        self.answering = threading.local()

    def count(self, key, n=1):
        with self.lock:
            self.stats[key] += n

    @property
    def base(self):
        return f"http://{HOST}:{self.server_address[1]}"

    def file_sig(self, table_id, rel, exp):
        msg = f"{table_id}\n{rel}\n{exp}".encode()
        return hmac.new(self.url_key, msg, hashlib.sha256).hexdigest()

    def use_store(self, spec):
        """--presign-store s3=ENDPOINT | azure=ENDPOINT (127.0.0.1 only: test emulators)."""
        kind, _, endpoint = spec.partition("=")
        if urllib.parse.urlparse(endpoint).hostname != HOST or kind not in ("s3", "azure"):
            raise ValueError(f"--presign-store {spec!r}: s3= or azure= an http://{HOST}:PORT emulator")
        self.uploaded = {}
        if kind == "s3":
            import boto3
            from botocore.config import Config
            self.store = boto3.client(
                "s3", endpoint_url=endpoint, region_name="us-east-1",
                aws_access_key_id="deltalens-test", aws_secret_access_key="deltalens-test-secret",
                config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
            try:
                self.store.create_bucket(Bucket=STORE_NAME)
            except self.store.exceptions.BucketAlreadyOwnedByYou:
                pass
            self.presign = self.s3_presign
        else:
            from azure.storage.blob import BlobServiceClient
            conn = (f"DefaultEndpointsProtocol=http;AccountName={AZ_ACCOUNT};AccountKey={AZ_KEY};"
                    f"BlobEndpoint={endpoint.rstrip('/')}/{AZ_ACCOUNT};")
            self.store = BlobServiceClient.from_connection_string(conn).get_container_client(STORE_NAME)
            if not self.store.exists():
                self.store.create_container()
            self.presign = self.azure_presign

    def _expiry(self):
        return int(time.time()) + (-60 if getattr(self.answering, "expired", False) else self.ttl)

    def _upload(self, table, rel, put):
        """Uploads the file once (a per-key lock: a URL is handed out only once its object
        is there, also to a request answered at the same time on another thread)."""
        key = f"{table.id}/{rel}"
        with self.lock:
            done, key_lock = self.uploaded.setdefault(key, [False, threading.Lock()])
        with key_lock:
            if not self.uploaded[key][0]:
                with open(os.path.join(table.root, rel), "rb") as f:
                    put(key, f.read())
                self.uploaded[key][0] = True
        return key

    def s3_presign(self, table, rel):
        """moto: the file uploaded once, then a SigV4 pre-signed GET (ExpiresIn must be
        positive: an 'expired' one gets one second, and moto does not check it anyway)."""
        key = self._upload(table, rel, lambda k, b: self.store.put_object(Bucket=STORE_NAME, Key=k, Body=b))
        exp = self._expiry()
        url = self.store.generate_presigned_url(
            "get_object", Params={"Bucket": STORE_NAME, "Key": key},
            ExpiresIn=max(exp - int(time.time()), 1))
        self.count("urls_signed")
        return url, exp * 1000

    def azure_presign(self, table, rel):
        """azurite: the file uploaded once, then a read-only blob SAS expiring at the expiry
        (azurite refuses it after that with 403)."""
        from azure.storage.blob import BlobSasPermissions, generate_blob_sas
        key = self._upload(table, rel, lambda k, b: self.store.upload_blob(k, b, overwrite=True))
        exp = self._expiry()
        sas = generate_blob_sas(
            AZ_ACCOUNT, STORE_NAME, key, account_key=AZ_KEY,
            permission=BlobSasPermissions(read=True),
            expiry=datetime.datetime.fromtimestamp(exp, tz=datetime.timezone.utc),
            start=datetime.datetime.fromtimestamp(time.time() - 300, tz=datetime.timezone.utc))
        self.count("urls_signed")
        return f"{self.store.url}/{urllib.parse.quote(key, safe='/')}?{sas}", exp * 1000

    def local_presign(self, table, rel):
        """-> (url, expirationTimestamp ms). `rel` is the decoded path inside table.root.
        While a table's first --expire-first-queries /query answers are written, the URLs
        are already expired (a recipient must ask again: see _query)."""
        exp = int(time.time()) + (-60 if getattr(self.answering, "expired", False) else self.ttl)
        sig = self.file_sig(table.id, rel, exp)
        self.count("urls_signed")
        # sp=r (an Azure SAS's "signed permissions: read") is not checked: it is there because
        # delta-kernel-rs (the official connector's delta format reader) fetches an http(s) URL
        # directly only when its query has a known pre-signing key (X-Amz-Signature, sp,
        # X-Goog-Credential, ...); without one it looks the path up in the table's own store
        url = (f"{self.base}/_files/{table.id}/{urllib.parse.quote(rel, safe='/')}"
               f"?sp=r&exp={exp}&sig={sig}")
        return url, exp * 1000

    # opaque page tokens: base64url(JSON) + "." + HMAC tag, bound to the listing's scope
    def page_token(self, scope, offset):
        body = base64.urlsafe_b64encode(json.dumps([scope, offset]).encode()).decode()
        tag = hmac.new(self.page_key, body.encode(), hashlib.sha256).hexdigest()[:16]
        return f"{body}.{tag}"

    def page_offset(self, scope, token):
        invalid = bad("invalid 'nextPageToken'")
        body, _, tag = token.partition(".")
        want = hmac.new(self.page_key, body.encode(), hashlib.sha256).hexdigest()[:16]
        if not hmac.compare_digest(tag, want):
            raise invalid
        try:
            s, offset = json.loads(base64.urlsafe_b64decode(body.encode()))
        except (ValueError, TypeError):
            raise invalid
        if s != scope or not isinstance(offset, int) or offset < 0:
            raise invalid
        return offset


def relative_in_root(table, path, what="file"):
    """A log path (relative URI-encoded, or absolute file: URI / path) -> decoded path relative
    to the table root. Absolute paths outside the root cannot be served."""
    if ABSOLUTE_RE.match(path) or path.startswith("/"):
        u = urllib.parse.urlparse(path)
        if u.scheme.lower() not in ("", "file"):
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"table {table.full} has a {what} outside its root ({path}); such "
                           "tables cannot be shared by this server")
        full = os.path.realpath(urllib.parse.unquote(u.path))
        if os.path.commonpath([full, table.root]) != table.root:
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"table {table.full} has a {what} outside its root ({path})")
        return os.path.relpath(full, table.root)
    return urllib.parse.unquote(path)


def md5(s):
    return hashlib.md5(s.encode()).hexdigest()


def sha256(s):
    return hashlib.sha256(s.encode()).hexdigest()


class Capabilities:
    def __init__(self, header, fileidhash):
        caps = {}
        for part in (header or "").lower().split(";"):
            k, eq, v = part.partition("=")
            if eq and k.strip():
                caps[k.strip()] = [x.strip() for x in v.split(",") if x.strip()]
        self.formats = caps.get("responseformat") or ["parquet"]
        unknown = set(self.formats) - {"parquet", "delta"}
        if unknown:
            raise bad(f"Unsupported responseformat: {','.join(sorted(unknown))} "
                      "(supported: parquet, delta)")
        self.reader_features = set(caps.get("readerfeatures", []))
        self.end_stream = (caps.get("includeendstreamaction") or ["false"])[0] == "true"
        self.fileidhash = None
        if fileidhash is not None:
            v = fileidhash.strip().lower()
            if v not in ("parquet", "delta"):
                raise bad(f"Unsupported fileidhash: '{fileidhash}'. Supported: parquet, delta")
            self.fileidhash = v

    def choose(self, protocol):
        if len(set(self.formats)) == 1:
            return self.formats[0]
        if protocol.get("minReaderVersion", 1) == 1 and "parquet" in self.formats:
            return "parquet"
        return "delta"


class Responder:
    """Builds the NDJSON lines of one metadata / query / changes answer."""

    def __init__(self, srv, table, caps, fmt):
        self.srv, self.table, self.caps, self.fmt = srv, table, caps, fmt
        self.min_exp = None

    def file_id(self, path):
        scheme = self.caps.fileidhash or self.fmt
        return sha256(path) if scheme == "delta" else md5(path)

    def sign(self, path, what="file"):
        url, exp = self.srv.presign(self.table, relative_in_root(self.table, path, what))
        self.min_exp = exp if self.min_exp is None else min(self.min_exp, exp)
        return url, exp

    def check_features(self, protocol, metadata, dv_present):
        rv = protocol.get("minReaderVersion", 1)
        feats = {f.lower() for f in protocol.get("readerFeatures") or []}
        if rv > 3:
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"table {self.table.full} needs minReaderVersion {rv}; this server "
                           "supports 3 and below")
        if feats and rv != 3:
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"table {self.table.full} has an invalid protocol: readerFeatures "
                           f"with minReaderVersion {rv}")
        unknown = feats - KNOWN_READER_FEATURES
        if unknown:
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"table {self.table.full} needs reader features this server does not "
                           f"support: {sorted(unknown)}")
        conf = metadata.get("configuration") or {}
        needs = set()
        if conf.get("delta.columnMapping.mode", "none").lower() != "none":
            needs.add("columnmapping")
        if conf.get("delta.enableDeletionVectors", "false").lower() != "false" or dv_present:
            needs.add("deletionvectors")
        if not needs:
            return
        if self.fmt == "parquet":
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"table {self.table.full} uses {', '.join(sorted(needs))}, which the "
                           "parquet response format cannot express: ask for "
                           "'delta-sharing-capabilities: responseformat=delta;readerfeatures="
                           f"{','.join(sorted(needs))}'")
        missing = needs - self.caps.reader_features
        if missing:
            raise ApiError("UNSUPPORTED_OPERATION",
                           f"Unsupported Delta Table Properties: table {self.table.full} needs "
                           f"readerfeatures {','.join(sorted(missing))} in the "
                           "delta-sharing-capabilities header")

    def protocol_line(self, protocol, version=None):
        if self.fmt == "parquet":
            return {"protocol": {"minReaderVersion": 1}}
        if self.caps.reader_features:
            p = drop_nulls({"minReaderVersion": protocol.get("minReaderVersion", 1),
                            "minWriterVersion": protocol.get("minWriterVersion", 2),
                            "readerFeatures": protocol.get("readerFeatures"),
                            "writerFeatures": protocol.get("writerFeatures")})
        else:  # the reference's downgrade for clients without advanced features
            w = protocol.get("minWriterVersion", 2)
            p = {"minReaderVersion": 1, "minWriterVersion": w if w < 7 else 2}
        return {"protocol": drop_nulls({"deltaProtocol": p, "version": version})}

    def metadata_line(self, metadata, version=None, snapshot=None):
        extra = {}
        if snapshot is not None:
            extra = {"size": sum(a.get("size") or 0 for a in snapshot.files.values()),
                     "numFiles": len(snapshot.files)}
        if self.fmt == "delta":
            dm = drop_nulls({k: metadata.get(k) for k in (
                "id", "name", "description", "format", "schemaString", "partitionColumns",
                "configuration", "createdTime")})
            dm.setdefault("format", {"provider": "parquet"})
            dm.setdefault("partitionColumns", [])
            dm.setdefault("configuration", {})
            if "format" in dm:
                dm["format"] = {"provider": dm["format"].get("provider", "parquet"),
                                "options": dm["format"].get("options") or {}}
            return {"metaData": drop_nulls({"deltaMetadata": dm, "version": version, **extra})}
        conf = metadata.get("configuration") or {}
        cdf_on = self.table.cdf and conf.get("delta.enableChangeDataFeed", "false") == "true"
        return {"metaData": drop_nulls({
            "id": metadata.get("id"), "name": metadata.get("name"),
            "description": metadata.get("description"),
            "format": {"provider": "parquet"},
            "schemaString": clean_schema(metadata.get("schemaString")),
            "partitionColumns": metadata.get("partitionColumns") or [],
            "configuration": {"enableChangeDataFeed": "true"} if cdf_on else {},
            "version": version, **extra})}

    def delta_action(self, kind, action):
        """A copy of a delta add/remove/cdc with path -> pre-signed URL and DVs made readable."""
        out = {k: v for k, v in action.items()
               if v is not None and k not in ("stats_parsed", "partitionValues_parsed")}
        out["path"], exp = self.sign(action["path"])
        dv = action.get("deletionVector")
        if dv:
            out["deletionVector"] = self.rewrite_dv(dv)
        if kind in ("add", "cdc"):
            out.setdefault("partitionValues", {})
        return out, exp

    def rewrite_dv(self, dv):
        dv = drop_nulls(dict(dv))
        st = dv.get("storageType")
        if st == "i":
            return dv
        if st == "u":
            rel = dv_relative_path(dv)
        elif st == "p":
            rel = relative_in_root(self.table, dv["pathOrInlineDv"], "deletion vector")
        else:
            raise ApiError("INTERNAL_ERROR", f"unknown deletion vector storageType {st!r}")
        url, exp = self.srv.presign(self.table, rel)
        self.min_exp = exp if self.min_exp is None else min(self.min_exp, exp)
        dv["storageType"], dv["pathOrInlineDv"] = "p", url
        return dv

    def file_line(self, kind, action, version=None, timestamp=None):
        """kind: 'file' (snapshot), or 'add' / 'remove' / 'cdc' (changes)."""
        path = action["path"]
        if self.fmt == "delta":
            dkind = "add" if kind == "file" else kind
            single, exp = self.delta_action(dkind, action)
            line = {"id": self.file_id(path), "version": version, "timestamp": timestamp,
                    "expirationTimestamp": exp, "deltaSingleAction": {dkind: single}}
            dv = action.get("deletionVector")
            if dv and dv.get("storageType") != "i":
                line["deletionVectorFileId"] = self.file_id(dv_unique_id(dv))
            return {"file": drop_nulls(line)}
        url, exp = self.sign(path)
        size = action.get("size")
        if size is None:  # remove.size is optional in Delta, required here
            try:
                size = os.path.getsize(os.path.join(self.table.root,
                                                    relative_in_root(self.table, path)))
            except OSError:
                size = 0
        line = {"url": url, "id": self.file_id(path),
                "partitionValues": action.get("partitionValues") or {},
                "size": size, "expirationTimestamp": exp,
                "version": version, "timestamp": timestamp}
        if kind in ("file", "add") and action.get("stats") is not None:
            line["stats"] = action["stats"]
        return {"cdc": "cdf"}.get(kind, kind), drop_nulls(line)

    def wrap(self, kind_line):
        if isinstance(kind_line, tuple):
            kind, line = kind_line
            return {kind: line}
        return kind_line

    def end_stream(self):
        return {"endStreamAction": drop_nulls({"minUrlExpirationTimestamp": self.min_exp})}


def clean_schema(schema_string):
    """The reference server's cleanUpTableSchema: top-level field metadata keeps only
    'comment' in parquet format answers."""
    if not schema_string:
        return schema_string
    try:
        schema = json.loads(schema_string)
    except ValueError:
        return schema_string
    for f in schema.get("fields", []):
        md = f.get("metadata") or {}
        f["metadata"] = {"comment": md["comment"]} if "comment" in md else {}
    return json.dumps(schema, separators=(",", ":"))


def has_dv(actions):
    return any(a.get("deletionVector") for a in actions)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "deltalens-sharing-test"
    timeout = 30

    def log_message(self, fmt, *args):
        sys.stderr.write("sharing: " + (fmt % args) + "\n")

    def do_GET(self):
        self._handle("GET")

    def do_HEAD(self):
        self._handle("HEAD")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_DELETE(self):
        self._handle("DELETE")

    def do_PATCH(self):
        self._handle("PATCH")

    # -- plumbing --

    def _send(self, status, body=b"", ctype=JSON_CT, headers=(), method="GET"):
        self.send_response(status)
        if body or ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(body)

    def _json(self, status, obj, headers=(), method="GET"):
        self._send(status, json.dumps(obj).encode(), JSON_CT, headers, method)

    def _error(self, e, method):
        extra = [("WWW-Authenticate", 'Bearer realm="delta-sharing"')] if e.status == 401 else []
        self._json(e.status, {"errorCode": e.code, "message": e.message}, extra, method)

    def _read_body(self):
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise ApiError("MALFORMED_REQUEST", "Chunked request bodies are not supported",
                           status=411)
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0:
            self.close_connection = True
            raise ApiError("MALFORMED_REQUEST", "Bad Content-Length")
        if n > MAX_BODY:
            self.close_connection = True
            raise ApiError("REQUEST_TOO_LARGE", f"Request body over {MAX_BODY} bytes")
        return self.rfile.read(n) if n else b""

    def _handle(self, method):
        srv = self.server
        try:
            body = self._read_body()
            url = urllib.parse.urlsplit(self.path)
            if url.path.startswith("/_files/"):
                return self._serve_file(method, url)
            self._check_auth()
            query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            if url.path == "/_test/stats":
                if method != "GET":
                    raise ApiError("METHOD_NOT_ALLOWED", f"{method} /_test/stats")
                with srv.lock:
                    stats = dict(srv.stats)
                return self._json(200, stats)
            srv.count("requests")
            if not url.path.startswith(srv.prefix + "/"):
                raise ApiError("RESOURCE_DOES_NOT_EXIST", f"No such endpoint: {url.path}")
            parts = [urllib.parse.unquote(p) for p in url.path[len(srv.prefix) + 1:].split("/")]
            self._route(method, parts, query, body)
        except ApiError as e:
            self._error(e, method)
        except BrokenPipeError:
            self.close_connection = True
        except Exception as e:  # a bug here must still answer, in the protocol's error format
            self.log_message("internal error: %r", e)
            self._error(ApiError("INTERNAL_ERROR", f"{type(e).__name__}: {e}"), method)

    def _check_auth(self):
        h = self.headers.get("Authorization", "")
        if not h.startswith("Bearer "):
            self.server.count("unauthorized")
            raise ApiError("UNAUTHENTICATED", "No bearer token in the Authorization header.")
        if not hmac.compare_digest(h[len("Bearer "):].encode(), self.server.token.encode()):
            self.server.count("unauthorized")
            raise ApiError("UNAUTHENTICATED", "Invalid bearer token.")

    # -- routing --

    def _route(self, method, p, query, body):
        cat = self.server.catalog
        n = len(p)
        if n < 1 or p[0] != "shares" or any(x == "" for x in p):
            raise ApiError("RESOURCE_DOES_NOT_EXIST", f"No such endpoint: /{'/'.join(p)}")

        def only(*methods):
            if method not in methods:
                raise ApiError("METHOD_NOT_ALLOWED",
                               f"{method} is not allowed on /{'/'.join(p)}")

        if n == 1:
            only("GET")
            items = [share_item(s) for s, _ in cat.shares]
            return self._list(items, "shares", query)
        if n == 2:
            only("GET")
            s, _ = cat.share(p[1])
            return self._json(200, {"share": share_item(s)})
        if n == 3 and p[2] == "schemas":
            only("GET")
            s, schemas = cat.share(p[1])
            items = [{"name": sc, "share": s} for sc, _ in schemas]
            return self._list(items, f"schemas:{s.lower()}", query)
        if n == 3 and p[2] == "all-tables":
            only("GET")
            s, schemas = cat.share(p[1])
            items = [table_item(t) for _, tables in schemas for t in tables]
            return self._list(items, f"all-tables:{s.lower()}", query)
        if n == 4 and p[2] == "schemas":
            cat.schema(p[1], p[3])  # 404 for an unknown schema first
            raise ApiError("RESOURCE_DOES_NOT_EXIST", f"No such endpoint: /{'/'.join(p)}")
        if n == 5 and p[2] == "schemas" and p[4] == "tables":
            only("GET")
            s, sc, tables = cat.schema(p[1], p[3])
            return self._list([table_item(t) for t in tables],
                              f"tables:{s.lower()}/{sc.lower()}", query)
        if n == 6 and p[2] == "schemas" and p[4] == "tables":
            only("HEAD")  # the deprecated HEAD form of Query Table Version
            return self._version(cat.table(p[1], p[3], p[5]), query, method)
        if n == 7 and p[2] == "schemas" and p[4] == "tables":
            table = cat.table(p[1], p[3], p[5])
            op = p[6]
            if op == "version":
                only("GET")
                return self._version(table, query, method)
            if op == "metadata":
                only("GET")
                return self._metadata(table, query)
            if op == "query":
                only("POST")
                return self._query(table, body)
            if op == "changes":
                only("GET")
                return self._changes(table, query)
            if op == "temporary-table-credentials":
                raise ApiError("RESOURCE_DOES_NOT_EXIST",
                               "temporary table credentials are not offered: this server only "
                               "supports url access")
        raise ApiError("RESOURCE_DOES_NOT_EXIST", f"No such endpoint: /{'/'.join(p)}")

    def _list(self, items, scope, query):
        srv = self.server
        raw = query.get("maxResults")
        size = PAGE_MAX
        if raw is not None:
            try:
                size = int(raw)
            except ValueError:
                raise bad("expected a number but the string didn't have the appropriate format")
            if size < 0 or size > PAGE_MAX:
                raise bad(f"Acceptable values of 'maxResults' are 0 to {PAGE_MAX}, inclusive. "
                          f"(Default: {PAGE_MAX})")
        size = min(size, srv.max_page)
        token = query.get("pageToken")
        start = srv.page_offset(scope, token) if token else 0
        if start > len(items):
            raise bad("invalid 'nextPageToken'")
        end = start + size
        out = {"items": items[start:end]}
        if end < len(items):
            out["nextPageToken"] = srv.page_token(scope, end)
        self._json(200, out)

    # -- table APIs --

    def _caps(self):
        return Capabilities(self.headers.get("delta-sharing-capabilities"),
                            self.headers.get("fileidhash"))

    def _ndjson(self, version, fmt, caps, lines, method="GET"):
        body = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()
        cap = f"responseformat={fmt}"
        if caps.end_stream:
            cap += ";includeendstreamaction=true"
        headers = [("Delta-Table-Version", str(version)), ("delta-sharing-capabilities", cap)]
        if caps.fileidhash:
            headers.append(("fileidhash", caps.fileidhash))
        self._send(200, body, NDJSON, headers, method)

    def _history_allowed(self, table):
        if not table.history:
            raise bad("Reading table by version or timestamp is not supported because history "
                      f"sharing is not enabled on table: {table.full}")

    def _version(self, table, query, method):
        listing = Listing(table.root)
        ts = query.get("startingTimestamp")
        if ts is None:
            version = listing.latest
        else:
            self._history_allowed(table)
            t = parse_timestamp(ts, "startingTimestamp")
            stamps = commit_timestamps(listing, table.timestamps)
            # the earliest version at or after it (the first one when it is before them all)
            after = [v for v, s in sorted(stamps.items()) if s >= t]
            if not after:
                raise bad(f"startingTimestamp {ts} is after the last commit of the table")
            version = after[0]
        self._send(200, b"", None, [("Delta-Table-Version", str(version))], method)

    def _resolve_version(self, table, listing, version, timestamp):
        if version is not None and timestamp is not None:
            raise bad("Only one of version, timestamp and startingVersion can be set")
        if version is None and timestamp is None:
            return listing.latest, False
        self._history_allowed(table)
        if version is not None:
            if version < 0:
                raise bad("table version cannot be negative.")
            if version > listing.latest:
                raise bad(f"version {version} does not exist (the table's latest version is "
                          f"{listing.latest})")
            return version, True
        t = parse_timestamp(timestamp, "timestamp")
        stamps = commit_timestamps(listing, table.timestamps)
        before = [v for v, s in stamps.items() if s <= t]
        if not before:
            raise bad(f"The provided timestamp ({timestamp}) is before the earliest version "
                      "available in the table's log")
        return max(before), True

    def _metadata(self, table, query):
        caps = self._caps()
        listing = Listing(table.root)
        version = query.get("version")
        if version is not None:
            try:
                version = int(version)
            except ValueError:
                raise bad("version must be a number")
        v, _ = self._resolve_version(table, listing, version, query.get("timestamp"))
        snap = load_snapshot(listing, v)
        fmt = caps.choose(snap.protocol)
        r = Responder(self.server, table, caps, fmt)
        r.check_features(snap.protocol, snap.metadata,
                         has_dv(snap.files.values()))
        lines = [r.protocol_line(snap.protocol), r.metadata_line(snap.metadata, snapshot=snap)]
        self._ndjson(v, fmt, caps, lines)

    def _query(self, table, body):
        srv = self.server
        with srv.lock:
            done = srv.expired_queries.get(table.id, 0)
            expired = done < srv.expire_queries
            srv.expired_queries[table.id] = done + expired
        srv.answering.expired = expired
        try:
            return self._query_answer(table, body)
        finally:
            srv.answering.expired = False

    def _query_answer(self, table, body):
        caps = self._caps()
        try:
            req = json.loads(body or b"{}")
        except ValueError as e:
            raise ApiError("MALFORMED_REQUEST", f"Invalid JSON body: {e}")
        if not isinstance(req, dict):
            raise ApiError("MALFORMED_REQUEST", "The body must be a JSON object")

        def opt_int(name):
            v = req.get(name)
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int):
                raise ApiError("MALFORMED_REQUEST", f"{name} must be an integer")
            return v

        version, starting, ending = opt_int("version"), opt_int("startingVersion"), \
            opt_int("endingVersion")
        opt_int("limitHint")  # a hint: validated, then ignored
        timestamp = req.get("timestamp")
        if timestamp is not None and not isinstance(timestamp, str):
            raise ApiError("MALFORMED_REQUEST", "timestamp must be a string")
        if sum(x is not None for x in (version, timestamp, starting)) > 1:
            raise bad("Only one of version, timestamp and startingVersion can be set")
        if req.get("maxFiles") is not None or req.get("pageToken") is not None:
            raise ApiError("UNSUPPORTED_OPERATION",
                           "maxFiles/pageToken (paged query results) are not supported by this "
                           "test server")
        listing = Listing(table.root)
        if starting is not None:
            return self._query_changes(table, caps, listing, starting, ending,
                                       bool(req.get("includeHistoricalProtocol")))
        v, versioned = self._resolve_version(table, listing, version, timestamp)
        snap = load_snapshot(listing, v)
        fmt = caps.choose(snap.protocol)
        r = Responder(self.server, table, caps, fmt)
        r.check_features(snap.protocol, snap.metadata, has_dv(snap.files.values()))
        ts = None
        if versioned:
            ts = commit_timestamps(listing, table.timestamps).get(v)
        lines = [r.protocol_line(snap.protocol), r.metadata_line(snap.metadata, snapshot=snap)]
        for add in sorted(snap.files.values(), key=lambda a: a["path"]):
            lines.append(r.wrap(r.file_line("file", add, v if versioned else None, ts)))
        if caps.end_stream:
            lines.append(r.end_stream())
        self._ndjson(v, fmt, caps, lines)

    def _query_changes(self, table, caps, listing, start, end, historical_protocol):
        """startingVersion queries (streaming): data change files from start to end."""
        self._history_allowed(table)
        if start < 0:
            raise bad("startingVersion cannot be negative.")
        if start > listing.latest:
            raise bad(f"Provided Start version({start}) for reading change data is invalid. "
                      f"Start version cannot be greater than the latest version of the table"
                      f"({listing.latest}).")
        if end is not None and end > listing.latest:
            raise bad(f"Provided end version({end}) is greater than the latest version of the "
                      f"table({listing.latest}).")
        if end is not None and start > end:
            raise bad(f"startingVersion({start}) must be smaller than or equal to "
                      f"endingVersion({end}).")
        end = listing.latest if end is None else end
        snap = load_snapshot(listing, start)
        per_version = [(v, listing.commit_actions(v)) for v in range(start, end + 1)]
        fmt = caps.choose(snap.protocol)
        r = Responder(self.server, table, caps, fmt)
        changed = [a.get("add") or a.get("remove") for _, acts in per_version for a in acts
                   if a.get("add") or a.get("remove")]
        r.check_features(snap.protocol, snap.metadata, has_dv(changed))
        emit_protocol = historical_protocol and fmt == "delta"
        stamps = commit_timestamps(listing, table.timestamps)
        lines = [r.protocol_line(snap.protocol, start if emit_protocol else None),
                 r.metadata_line(snap.metadata, version=start)]
        for v, acts in per_version:
            ts = stamps.get(v)
            for a in acts:
                if a.get("add") and a["add"].get("dataChange", True):
                    lines.append(r.wrap(r.file_line("add", a["add"], v, ts)))
                elif a.get("remove") and a["remove"].get("dataChange", True):
                    lines.append(r.wrap(r.file_line("remove", a["remove"], v, ts)))
                elif a.get("metaData") and v > start:
                    lines.append(r.metadata_line(a["metaData"], version=v))
                elif a.get("protocol") and v > start and emit_protocol:
                    lines.append(r.protocol_line(a["protocol"], v))
        if caps.end_stream:
            lines.append(r.end_stream())
        self._ndjson(start, fmt, caps, lines)

    def _changes(self, table, query):
        caps = self._caps()
        if not table.cdf:
            raise bad(f"cdf is not enabled on table {table.full}")
        for name in ("maxFiles", "pageToken"):
            if query.get(name) is not None:
                raise ApiError("UNSUPPORTED_OPERATION",
                               f"{name} (paged change results) is not supported by this test "
                               "server")
        sv, st = query.get("startingVersion"), query.get("startingTimestamp")
        ev, et = query.get("endingVersion"), query.get("endingTimestamp")
        if sv is not None and st is not None:
            raise bad("Multiple starting arguments provided for CDF read. Please provide one of "
                      "either startingTimestamp or startingVersion.")
        if ev is not None and et is not None:
            raise bad("Multiple ending arguments provided for CDF read. Please provide one of "
                      "either endingTimestamp or endingVersion.")
        if sv is None and st is None:
            raise bad("No startingVersion or startingTimestamp provided for CDF read.")

        def as_version(s, name):
            try:
                v = int(s)
            except ValueError:
                raise bad(f"{name} is not a valid number.")
            if v < 0:
                raise bad(f"{name} cannot be negative.")
            return v

        listing = Listing(table.root)
        latest = listing.latest
        stamps = None
        if sv is not None:
            start = as_version(sv, "startingVersion")
        else:
            t = parse_timestamp(st, "startingTimestamp")
            stamps = commit_timestamps(listing, table.timestamps)
            after = [v for v, s in sorted(stamps.items()) if s >= t]
            if not after:
                raise bad(f"The provided timestamp ({st}) is after the latest version "
                          "available to this table.")
            start = after[0]
        if start > latest:
            raise bad(f"Provided Start version({start}) for reading change data is invalid. "
                      "Start version cannot be greater than the latest version of the table"
                      f"({latest}).")
        if ev is not None:
            end = as_version(ev, "endingVersion")
        elif et is not None:
            t = parse_timestamp(et, "endingTimestamp")
            stamps = stamps or commit_timestamps(listing, table.timestamps)
            before = [v for v, s in stamps.items() if s <= t]
            if not before:
                raise bad(f"The provided timestamp ({et}) is before the earliest version "
                          "available to this table.")
            end = max(before)
        else:
            end = latest
        if end < start:
            raise bad(f"CDF range from start {start} to end {end} was invalid. End cannot be "
                      "before start.")
        end = min(end, latest)
        historical_md = str(query.get("includeHistoricalMetadata", "")).lower() == "true"
        historical_pr = str(query.get("includeHistoricalProtocol", "")).lower() == "true"
        start_snap = load_snapshot(listing, start)

        def cdf_on(md):
            return (md.get("configuration") or {}).get("delta.enableChangeDataFeed") == "true"

        if not cdf_on(start_snap.metadata):
            raise bad(f"Error getting change data for range [{start} , {end}] as change data was "
                      f"not recorded for version [{start}]")
        per_version = []
        for v in range(start, end + 1):
            acts = listing.commit_actions(v)
            for a in acts:
                if a.get("metaData") and not cdf_on(a["metaData"]):
                    raise bad(f"Error getting change data for range [{start} , {end}] as change "
                              f"data was not recorded for version [{v}]")
            per_version.append((v, acts))
        head = start_snap if historical_md else load_snapshot(listing, latest)
        fmt = caps.choose(head.protocol)
        r = Responder(self.server, table, caps, fmt)
        file_actions = [a.get("add") or a.get("remove") or a.get("cdc")
                        for _, acts in per_version for a in acts
                        if a.get("add") or a.get("remove") or a.get("cdc")]
        r.check_features(head.protocol, head.metadata, has_dv(file_actions))
        emit_protocol = historical_pr and fmt == "delta"
        stamps = stamps or commit_timestamps(listing, table.timestamps)
        lines = [r.protocol_line(head.protocol, head.version if emit_protocol else None),
                 r.metadata_line(head.metadata, version=head.version)]
        for v, acts in per_version:
            ts = stamps.get(v)
            info = next((a["commitInfo"] for a in acts if a.get("commitInfo")), None)
            has_cdc = any(a.get("cdc") for a in acts)
            skip_files = (not has_cdc and info is not None and info.get("operation") == "MERGE"
                          and all((info.get("operationMetrics") or {}).get(k) == "0" for k in (
                              "numTargetRowsInserted", "numTargetRowsUpdated",
                              "numTargetRowsDeleted")))
            for a in acts:
                if a.get("metaData") and historical_md and v > start:
                    lines.append(r.metadata_line(a["metaData"], version=v))
                elif a.get("protocol") and emit_protocol and v > start:
                    lines.append(r.protocol_line(a["protocol"], v))
                elif skip_files:
                    continue
                elif has_cdc:
                    if a.get("cdc"):
                        lines.append(r.wrap(r.file_line("cdc", a["cdc"], v, ts)))
                elif a.get("add") and a["add"].get("dataChange", True):
                    lines.append(r.wrap(r.file_line("add", a["add"], v, ts)))
                elif a.get("remove") and a["remove"].get("dataChange", True):
                    lines.append(r.wrap(r.file_line("remove", a["remove"], v, ts)))
        if caps.end_stream:
            lines.append(r.end_stream())
        self._ndjson(start, fmt, caps, lines)

    # -- pre-signed files --

    def _serve_file(self, method, url):
        srv = self.server
        srv.count("files")
        status = self._file_answer(method, url)
        key = {200: "file_ok", 206: "file_partial", 403: "file_denied", 404: "file_missing"}
        if status in key:
            srv.count(key[status])

    def _file_error(self, status, code, message, method):
        self._json(status, {"errorCode": code, "message": message}, (), method)
        return status

    def _file_answer(self, method, url):
        srv = self.server
        if method not in ("GET", "HEAD"):
            return self._file_error(405, "METHOD_NOT_ALLOWED", f"{method} on a file", method)
        rest = url.path[len("/_files/"):]
        table_id, _, enc = rest.partition("/")
        rel = urllib.parse.unquote(enc)
        q = urllib.parse.parse_qs(url.query)
        exp, sig = (q.get("exp") or [""])[0], (q.get("sig") or [""])[0]
        if not exp.isdigit() or not sig or not hmac.compare_digest(
                sig, srv.file_sig(table_id, rel, int(exp))):
            return self._file_error(403, "PERMISSION_DENIED",
                                    "The request signature does not match", method)
        if int(exp) < time.time():
            return self._file_error(403, "PERMISSION_DENIED", "Request has expired", method)
        table = srv.catalog.by_id.get(table_id)
        if table is None:
            return self._file_error(404, "RESOURCE_DOES_NOT_EXIST", "No such table", method)
        full = os.path.realpath(os.path.join(table.root, rel))
        if os.path.commonpath([full, table.root]) != table.root or not os.path.isfile(full):
            return self._file_error(404, "RESOURCE_DOES_NOT_EXIST", f"No such file: {rel}",
                                    method)
        size = os.path.getsize(full)
        start, end, status = 0, size - 1, 200
        rng = self.headers.get("Range")
        if rng:
            m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", rng)
            if m and (m.group(1) or m.group(2)):  # one range; several: ignored (RFC 9110)
                if m.group(1):
                    start = int(m.group(1))
                    end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                    if m.group(2) and int(m.group(2)) < start:
                        start, end = 0, size - 1  # invalid range: ignored
                    elif start >= size:
                        self._send(416, b"", None, [("Content-Range", f"bytes */{size}")],
                                   method)
                        return 416
                    else:
                        status = 206
                else:
                    n = int(m.group(2))
                    if n == 0:
                        self._send(416, b"", None, [("Content-Range", f"bytes */{size}")],
                                   method)
                        return 416
                    start, end, status = max(0, size - n), size - 1, 206
        length = end - start + 1 if size else 0
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{int(os.path.getmtime(full))}-{size}"')
        self.send_header("Last-Modified", self.date_time_string(os.path.getmtime(full)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if method == "HEAD":
            return status
        left = length
        with open(full, "rb") as f:
            f.seek(start)
            while left > 0:
                chunk = f.read(min(CHUNK, left))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)
        srv.count("file_bytes", length - left)
        return status


def make_server(config, token, ttl, prefix=DEFAULT_PREFIX, port=0, max_page=PAGE_MAX):
    return Server(Catalog(config), token, ttl, prefix, port, max_page)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--stop-after", type=float, default=900.0)
    ap.add_argument("--url-ttl-seconds", type=int, default=3600)
    ap.add_argument("--prefix", default=DEFAULT_PREFIX)
    ap.add_argument("--max-page-size", type=int, default=PAGE_MAX)
    ap.add_argument("--expire-first-queries", type=int, default=0,
                    help="the first N /query answers of each table carry pre-signed URLs that already expired")
    ap.add_argument("--presign-store", help="s3=ENDPOINT (moto) or azure=ENDPOINT (azurite): "
                    "files are uploaded there and their URLs pre-signed by that store")
    a = ap.parse_args(argv)
    if a.url_ttl_seconds <= 0:
        ap.error("--url-ttl-seconds must be positive")
    if not a.token:
        ap.error("--token must not be empty")
    if not 1 <= a.max_page_size <= PAGE_MAX:
        ap.error(f"--max-page-size must be 1..{PAGE_MAX}")
    if a.stop_after <= 0:
        ap.error("--stop-after must be positive")
    with open(a.config) as f:
        config = json.load(f)
    srv = make_server(config, a.token, a.url_ttl_seconds, a.prefix, a.port, a.max_page_size)
    srv.expire_queries = max(a.expire_first_queries, 0)
    if a.presign_store:
        srv.use_store(a.presign_store)
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, a.port_file)
    print(f"listening on http://{HOST}:{port}", flush=True)
    stopper = threading.Timer(a.stop_after, srv.shutdown)
    stopper.daemon = True
    stopper.start()
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stopper.cancel()
        srv.server_close()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A small Unity Catalog REST server for tests: read-only catalog browsing and credential
vending, shaped after the OSS Unity Catalog OpenAPI spec (unitycatalog/unitycatalog,
api/all.yaml) and the OSS server's error format. 127.0.0.1 only; stdlib plus
azure-storage-blob (for real azurite SAS tokens).

  unity_catalog.py serve --port 0 --token TOKEN --config CONFIG.json [--ttl-seconds N]
      [--port-file F] [--stop-after SECONDS]

Prints "listening on http://127.0.0.1:PORT" (flushed) once bound, and writes PORT to
--port-file when given. Stops itself after --stop-after seconds (default 3600).

Endpoints (prefix /api/2.1/unity-catalog), all needing "Authorization: Bearer TOKEN":
  GET  /catalogs[?max_results=&page_token=]          ListCatalogsResponse
  GET  /catalogs/{name}                              CatalogInfo
  GET  /schemas?catalog_name=[&max_results=&page_token=]   ListSchemasResponse
  GET  /schemas/{full_name}                          SchemaInfo
  GET  /tables?catalog_name=&schema_name=[&max_results=&page_token=]   ListTablesResponse
  GET  /tables/{full_name}                           TableInfo
  POST /temporary-table-credentials {table_id, operation}   TemporaryCredentials
Catalog-managed tables (PROTOCOL.md "Catalog-managed tables": the catalog says which staged
commits are ratified and what the latest version is), both API generations of the OSS server:
  GET  /delta/preview/commits  DeltaGetCommits {table_id, table_uri, start_version,
       end_version} as a JSON body (as the OSS server takes it) or as query parameters
       -> DeltaGetCommitsResponse {commits: [DeltaCommitInfo], latest_table_version};
       commits in no particular order (the spec allows any: they come newest first),
       at most max_commits_per_page (config, default 50) from start_version on
  GET  /delta/v1/config?catalog=&protocol-versions=       DeltaCatalogConfig
  GET  /delta/v1/catalogs/{c}/schemas/{s}/tables/{t}      DeltaLoadTableResponse (metadata,
       every unpublished ratified commit newest first, latest-table-version)
  GET  /delta/v1/catalogs/{c}/schemas/{s}/tables/{t}/credentials?operation=READ
       DeltaCredentialsResponse (the same vending as temporary-table-credentials)
Test-only: GET /_test/stats -> {"vends": N, "requests": N, "commits": N} (same token):
successful vends, authenticated API requests (stats calls themselves not counted), and
answers that listed ratified commits (preview commits or loadTable).

Errors are the OSS server's body (GlobalExceptionHandler):
  {"error_code": "TABLE_NOT_FOUND", "message": "Table not found: c.s.t",
   "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TABLE_NOT_FOUND"}]}
with the OSS ErrorCode's HTTP status (UNAUTHENTICATED 401, PERMISSION_DENIED 403,
CATALOG_/SCHEMA_/TABLE_NOT_FOUND 404, INVALID_ARGUMENT 400, UNIMPLEMENTED 501, INTERNAL 500).
Bodies over 64 KiB get 413 (error_code INVALID_ARGUMENT).

CONFIG.json:
  {"aws": {"access_key_id": "...", "secret_access_key": "...",            # static keys, or
           "sts_endpoint": "http://127.0.0.1:PORT", "role_arn": "arn:...", # moto STS AssumeRole
           "region": "us-east-1"},
   "azure": {"account": "devstoreaccount1", "key": "..."},  # default: azurite's dev account
   "catalogs": [{"name": "main", "comment": "...", "schemas": [
       {"name": "default", "external_use": true,      # false: no EXTERNAL USE SCHEMA -> 403
        "tables": [{"name": "t", "storage_location": "s3://bucket/tables/t",
                    "data_source_format": "DELTA",     # returned as-is (PARQUET, ...)
                    "table_type": "EXTERNAL",          # MANAGED, EXTERNAL, VIEW, ...
                    "select": true,                    # false: caller lacks SELECT -> 403
                    "modify": false,                   # true: READ_WRITE allowed
                    "columns": [], "properties": {},
                    "catalog_managed": {                 # a catalog-managed table (MANAGED)
                        "latest_table_version": 3,       # the catalog's latest ratified version
                        "commits": [                     # ratified, not yet published (backfilled)
                            {"version": 2, "file_name": "<20 digits>.<uuid>.json",
                             # each of these is read off the file when the location is
                             # file:// and the field is left out:
                             "timestamp": ICT, "file_size": N,
                             "file_modification_timestamp": MS}]}}]}]}]}
  A catalog-managed table's properties gain delta.feature.catalogManaged=supported and
  io.unitycatalog.tableId (its table_id), as Unity Catalog's are; the commits API refuses
  any other table (INVALID_ARGUMENT, as the OSS server's validateTable).

Credentials by storage_location scheme:
  s3://       aws_temp_credentials: the static keys plus a fresh random session_token, or
              (with aws.sts_endpoint) real AssumeRole credentials from that (moto) STS
  abfss://, abfs://, wasbs://, wasb://, az://
              azure_user_delegation_sas: a real container SAS signed with the account key
              (r+l; READ_WRITE adds a,c,w,d), se = now + ttl, so azurite enforces expiry
  gs://       gcp_oauth_token: a random opaque token (nothing checks it)
  file://     no credential fields (as the OSS server does for local paths)
expiration_time is now + ttl in epoch ms; url is the table's storage_location.
"""
import argparse
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
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# azurite's public development account, kept in one place
from stores import ACCOUNT as AZURITE_ACCOUNT, KEY as AZURITE_KEY

PREFIX = "/api/2.1/unity-catalog"
HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
# the OSS server's PagedListingHelper.DEFAULT_PAGE_SIZE: max_results is capped at this
PAGE_SIZE = 100
# stable ids across runs, so a test can predict table_id from the full name
ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://deltalens.test/unity-catalog")
OWNER = "deltalens-test"
# a staged commit's name: _delta_log/_staged_commits/<v, 20 digits>.<uuid>.json
STAGED_NAME = re.compile(r"[0-9]{20}\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json")
# the OSS DeltaCommitRepository answers at most this many commits per call (a config value
# there); the config's max_commits_per_page overrides it so paging can be tested
COMMITS_PER_PAGE = 50

# OSS io.unitycatalog.server.exception.ErrorCode -> HTTP status (the ones used here)
STATUS = {
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "CATALOG_NOT_FOUND": 404,
    "SCHEMA_NOT_FOUND": 404,
    "TABLE_NOT_FOUND": 404,
    "INTERNAL": 500,
    "UNIMPLEMENTED": 501,
}
AZURE_SCHEMES = {"abfss", "abfs", "wasbs", "wasb", "az"}


class ApiError(Exception):
    def __init__(self, code, message, status=None):
        super().__init__(message)
        self.code, self.message = code, message
        self.status = status or STATUS[code]


def stable_id(kind, full_name):
    return str(uuid.uuid5(ID_NAMESPACE, f"{kind}:{full_name}"))


def now_ms():
    return int(time.time() * 1000)


def is_loopback(url):
    return urllib.parse.urlparse(url).hostname in ("127.0.0.1", "localhost", "::1")


class Catalog:
    """The config, indexed, plus the JSON views of it the spec defines."""

    def __init__(self, config):
        self.aws = config.get("aws") or {}
        azure = config.get("azure") or {}
        self.azure_account = azure.get("account", AZURITE_ACCOUNT)
        self.azure_key = azure.get("key", AZURITE_KEY)
        if self.aws.get("sts_endpoint") and not is_loopback(self.aws["sts_endpoint"]):
            raise ValueError("aws.sts_endpoint must be a loopback emulator (moto)")
        # one timestamp for every securable: the spec wants created_at, tests want stability
        self.created_at = now_ms()
        self.catalogs = {}  # name -> catalog dict
        self.tables_by_id = {}  # table_id -> (catalog, schema, table)
        for c in config.get("catalogs", []):
            self.catalogs[c["name"]] = c
            for s in c.get("schemas", []):
                for t in s.get("tables", []):
                    full = f"{c['name']}.{s['name']}.{t['name']}"
                    self.tables_by_id[stable_id("table", full)] = (c, s, t)

    # -- lookups, with the OSS server's codes and messages --

    def catalog(self, name):
        if name not in self.catalogs:
            raise ApiError("CATALOG_NOT_FOUND", f"Catalog not found: {name}")
        return self.catalogs[name]

    def schema(self, catalog_name, schema_name):
        for s in self.catalog(catalog_name).get("schemas", []):
            if s["name"] == schema_name:
                return s
        raise ApiError("SCHEMA_NOT_FOUND", f"Schema not found: {catalog_name}.{schema_name}")

    def table(self, full_name):
        parts = full_name.split(".")
        if len(parts) != 3 or not all(parts):
            raise ApiError("INVALID_ARGUMENT", f"Invalid table name: {full_name}")
        schema = self.schema(parts[0], parts[1])
        for t in schema.get("tables", []):
            if t["name"] == parts[2]:
                return self.catalogs[parts[0]], schema, t
        raise ApiError("TABLE_NOT_FOUND", f"Table not found: {full_name}")

    # -- catalog-managed tables: the ratified commits the catalog still holds --

    def managed(self, t, full):
        """The table's catalog_managed block, or INVALID_ARGUMENT as the OSS server says
        for a table that is not a managed Delta table."""
        cm = t.get("catalog_managed")
        if not isinstance(cm, dict):
            raise ApiError("INVALID_ARGUMENT",
                           f"Table {full} is not a managed Delta table: only catalog-managed "
                           "tables have commits in the catalog")
        return cm

    def ratified(self, t, full):
        """(latest_table_version, [DeltaCommitInfo as snake_case dicts]) in version order."""
        cm = self.managed(t, full)
        latest = cm.get("latest_table_version")
        if not isinstance(latest, int) or latest < 0:
            raise ApiError("INTERNAL", f"config: {full} needs latest_table_version >= 0")
        out = []
        for c in cm.get("commits", []):
            v, name = c.get("version"), c.get("file_name", "")
            if not isinstance(v, int) or not STAGED_NAME.fullmatch(name) or int(name[:20]) != v:
                raise ApiError("INTERNAL", f"config: {full} commit {c!r} is not "
                                           "<version>.<uuid>.json for its version")
            info = {"version": v, "file_name": name}
            for field in ("timestamp", "file_size", "file_modification_timestamp"):
                info[field] = c.get(field)
            if any(info[f] is None for f in info):
                info.update(self._read_staged(t, name, info))
            out.append(info)
        out.sort(key=lambda c: c["version"])
        return latest, out

    @staticmethod
    def _read_staged(t, name, given):
        """timestamp (the commit's inCommitTimestamp), size and mtime of a local staged file."""
        loc = urllib.parse.urlparse(t.get("storage_location", ""))
        if loc.scheme != "file":
            raise ApiError("INTERNAL", f"config: commit {name} needs timestamp, file_size and "
                                       "file_modification_timestamp off file:// locations")
        path = os.path.join(urllib.parse.unquote(loc.path), "_delta_log", "_staged_commits", name)
        st = os.stat(path)
        ict = given.get("timestamp")
        if ict is None:
            with open(path, "rb") as f:
                for line in f:
                    info = json.loads(line).get("commitInfo") if line.strip() else None
                    if isinstance(info, dict) and "inCommitTimestamp" in info:
                        ict = info["inCommitTimestamp"]
                        break
        return {"timestamp": ict if ict is not None else int(st.st_mtime * 1000),
                "file_size": given.get("file_size") or st.st_size,
                "file_modification_timestamp":
                    given.get("file_modification_timestamp") or int(st.st_mtime * 1000)}

    def properties(self, t, full):
        props = dict(t.get("properties", {}))
        if isinstance(t.get("catalog_managed"), dict):
            props.setdefault("delta.feature.catalogManaged", "supported")
            props.setdefault("io.unitycatalog.tableId", stable_id("table", full))
        return props

    # -- JSON shapes (components/schemas in api/all.yaml) --

    def _audit(self):
        ts = self.created_at
        return {"owner": OWNER, "created_at": ts, "created_by": OWNER,
                "updated_at": ts, "updated_by": OWNER}

    def catalog_info(self, c):
        info = {"name": c["name"], "comment": c.get("comment"),
                "properties": c.get("properties", {}), **self._audit(),
                "id": stable_id("catalog", c["name"])}
        return {k: v for k, v in info.items() if v is not None}

    def schema_info(self, c, s):
        full = f"{c['name']}.{s['name']}"
        info = {"name": s["name"], "catalog_name": c["name"], "comment": s.get("comment"),
                "properties": s.get("properties", {}), "full_name": full, **self._audit(),
                "schema_id": stable_id("schema", full)}
        return {k: v for k, v in info.items() if v is not None}

    def table_info(self, c, s, t):
        full = f"{c['name']}.{s['name']}.{t['name']}"
        info = {
            "name": t["name"], "catalog_name": c["name"], "schema_name": s["name"],
            "table_type": t.get("table_type",
                                "MANAGED" if isinstance(t.get("catalog_managed"), dict)
                                else "EXTERNAL"),
            # VIEWs have no format or location unless the config gives them
            "data_source_format": t.get("data_source_format",
                                        None if t.get("table_type") == "VIEW" else "DELTA"),
            "columns": t.get("columns", []),
            "storage_location": t.get("storage_location"),
            "comment": t.get("comment"),
            "properties": self.properties(t, full),
            **self._audit(),
            "table_id": stable_id("table", full),
            "view_definition": t.get("view_definition"),
        }
        return {k: v for k, v in info.items() if v is not None}


def page(items, query, key="name"):
    """The OSS PagedListingHelper's paging: sorted by name, the token is the last name
    returned; unlike it, next_page_token is left out when nothing follows (as the spec
    says: "Absent if there are no more pages")."""
    raw = query.get("max_results")
    size = PAGE_SIZE
    if raw is not None:
        try:
            n = int(raw)
        except ValueError:
            raise ApiError("INVALID_ARGUMENT", f"Invalid max_results: {raw}")
        if n < 0:
            raise ApiError("INVALID_ARGUMENT", "maxResults must be greater than or equal to 0")
        if n > 0:
            size = min(n, PAGE_SIZE)
    items = sorted(items, key=lambda x: x[key])
    token = query.get("page_token")
    if token:
        items = [x for x in items if x[key] > token]
    out = items[:size]
    more = len(items) > size
    return out, (out[-1][key] if more else None)


def sigv4_post(endpoint, region, service, key_id, secret, body):
    """SigV4-sign a form POST with the stdlib (the server may not depend on botocore)."""
    u = urllib.parse.urlparse(endpoint)
    t = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = t.strftime("%Y%m%dT%H%M%SZ"), t.strftime("%Y%m%d")
    ctype = "application/x-www-form-urlencoded; charset=utf-8"
    signed = "content-type;host;x-amz-date"
    canonical = "\n".join([
        "POST", u.path or "/", "",
        f"content-type:{ctype}\nhost:{u.netloc}\nx-amz-date:{amz_date}\n",
        signed, hashlib.sha256(body).hexdigest()])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    req = urllib.request.Request(endpoint, data=body, method="POST", headers={
        "Content-Type": ctype, "X-Amz-Date": amz_date,
        "Authorization": f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, "
                         f"SignedHeaders={signed}, Signature={sig}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read(MAX_BODY + 1)


class Vendor:
    """Turns (table, operation) into TemporaryCredentials, by storage scheme."""

    def __init__(self, catalog, ttl):
        self.cat, self.ttl = catalog, ttl
        self.sessions = 0
        self.lock = threading.Lock()

    def vend(self, full_name, location, write):
        scheme = urllib.parse.urlparse(location).scheme.lower()
        # whole seconds: a SAS's se= has no finer grain, and the two must agree
        expires = (int(time.time()) + self.ttl) * 1000
        out = {"expiration_time": expires, "url": location}
        if scheme in ("s3", "s3a"):
            out["aws_temp_credentials"] = self._aws(full_name)
        elif scheme in AZURE_SCHEMES:
            out["azure_user_delegation_sas"] = {"sas_token": self._azure(location, write, expires)}
        elif scheme in ("gs", "gcs"):
            out["gcp_oauth_token"] = {"oauth_token": "ya29.test-" + secrets.token_urlsafe(24)}
        elif scheme != "file":
            raise ApiError("INVALID_ARGUMENT", f"Unsupported storage scheme: {scheme}")
        return out

    def _aws(self, full_name):
        aws = self.cat.aws
        if not aws.get("access_key_id") or not aws.get("secret_access_key"):
            raise ApiError("INTERNAL", "no aws access_key_id/secret_access_key in the config")
        if not aws.get("sts_endpoint"):
            # static keys; the session token is fresh so a test can tell vends apart
            return {"access_key_id": aws["access_key_id"],
                    "secret_access_key": aws["secret_access_key"],
                    "session_token": "uc-test-" + secrets.token_urlsafe(32)}
        with self.lock:
            self.sessions += 1
            n = self.sessions
        # real STS refuses < 900 s; expiration_time above is still now + ttl, which is
        # what clients refresh on (moto does not enforce STS expiry anyway)
        form = urllib.parse.urlencode({
            "Action": "AssumeRole", "Version": "2011-06-15",
            "RoleArn": aws.get("role_arn", "arn:aws:iam::123456789012:role/uc-reader"),
            "RoleSessionName": f"uc-{n}-{full_name}"[:64].replace(".", "-"),
            "DurationSeconds": str(max(900, min(self.ttl, 43200)))}).encode()
        try:
            xml = sigv4_post(aws["sts_endpoint"], aws.get("region", "us-east-1"), "sts",
                             aws["access_key_id"], aws["secret_access_key"], form)
        except urllib.error.HTTPError as e:
            raise ApiError("INTERNAL", f"STS AssumeRole failed: HTTP {e.code} "
                                       f"{e.read(2000).decode(errors='replace')}")
        except OSError as e:
            raise ApiError("INTERNAL", f"STS AssumeRole failed: {e}")
        creds = {el.tag.rsplit("}", 1)[-1]: el.text for el in ET.fromstring(xml).iter()}
        return {"access_key_id": creds["AccessKeyId"],
                "secret_access_key": creds["SecretAccessKey"],
                "session_token": creds["SessionToken"]}

    def _azure(self, location, write, expires_ms):
        from azure.storage.blob import ContainerSasPermissions, generate_container_sas

        u = urllib.parse.urlparse(location)
        if u.scheme.lower() == "az":  # az://container/path: the account is the configured one
            container, account = u.netloc, self.cat.azure_account
        else:  # abfss://container@account.dfs.core.windows.net/path
            container, _, host = u.netloc.partition("@")
            account = host.split(".", 1)[0]
        if not container or account != self.cat.azure_account:
            raise ApiError("INVALID_ARGUMENT",
                           f"No key for storage account {account!r} (location {location})")
        perm = ContainerSasPermissions(read=True, list=True, add=write, create=write,
                                       write=write, delete=write)
        return generate_container_sas(
            account, container, account_key=self.cat.azure_key, permission=perm,
            expiry=datetime.datetime.fromtimestamp(expires_ms / 1000, datetime.timezone.utc))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real server; every answer has a length
    server_version = "deltalens-uc-test"
    timeout = 30  # a client that connects and goes quiet does not hold a thread for long

    def log_message(self, fmt, *args):
        sys.stderr.write("uc: " + (fmt % args) + "\n")

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")

    def _send(self, status, obj, extra=()):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, e):
        body = {"error_code": e.code, "message": e.message,
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                             "reason": e.code}]}
        extra = [("WWW-Authenticate", "Bearer")] if e.status == 401 else []
        self._send(e.status, body, extra)

    def _read_body(self):
        if self.headers.get("Transfer-Encoding"):
            # an unread chunked body would be parsed as the next request
            self.close_connection = True
            raise ApiError("INVALID_ARGUMENT", "Chunked request bodies are not supported",
                           status=411)
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0:
            self.close_connection = True
            raise ApiError("INVALID_ARGUMENT", "Bad Content-Length")
        if n > MAX_BODY:
            self.close_connection = True
            raise ApiError("INVALID_ARGUMENT", f"Request body over {MAX_BODY} bytes",
                           status=413)
        return self.rfile.read(n) if n else b""

    def _handle(self, method):
        srv = self.server
        try:
            body = self._read_body()
            self._check_auth()
            url = urllib.parse.urlsplit(self.path)
            query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            if url.path == "/_test/stats" and method == "GET":
                with srv.lock:
                    stats = dict(srv.stats)
                return self._send(200, stats)
            with srv.lock:
                srv.stats["requests"] += 1
            if not url.path.startswith(PREFIX + "/"):
                raise ApiError("NOT_FOUND", f"No such endpoint: {url.path}")
            parts = [urllib.parse.unquote(p) for p in url.path[len(PREFIX) + 1:].split("/")]
            self._send(200, self._route(method, parts, query, body))
        except ApiError as e:
            self._error(e)
        except Exception as e:  # a bug here must still answer, in the server's error format
            self.log_message("internal error: %r", e)
            self._error(ApiError("INTERNAL", f"{type(e).__name__}: {e}"))

    def _check_auth(self):
        h = self.headers.get("Authorization", "")
        if not h.startswith("Bearer "):
            raise ApiError("UNAUTHENTICATED", "No authorization found.")
        if not hmac.compare_digest(h[len("Bearer "):].encode(), self.server.token.encode()):
            raise ApiError("UNAUTHENTICATED", "Invalid access token.")

    def _route(self, method, parts, query, body):
        cat = self.server.catalog
        coll = parts[0]
        if coll == "delta":
            return self._delta(method, parts[1:], query, body)
        known = {"catalogs", "schemas", "tables", "temporary-table-credentials"}
        if coll not in known or len(parts) > 2 or (len(parts) == 2 and not parts[1]):
            raise ApiError("NOT_FOUND", f"No such endpoint: {'/'.join(parts)}")
        if coll == "temporary-table-credentials":
            if method != "POST" or len(parts) != 1:
                raise ApiError("UNIMPLEMENTED", f"{method} /{'/'.join(parts)} is not implemented")
            return self._vend(body)
        if method != "GET":
            raise ApiError("UNIMPLEMENTED",
                           f"{method} /{'/'.join(parts)} is not implemented by this read-only "
                           "test server")
        if coll == "catalogs":
            if len(parts) == 2:
                return cat.catalog_info(cat.catalog(parts[1]))
            rows, token = page(list(cat.catalogs.values()), query)
            return self._listing("catalogs", [cat.catalog_info(c) for c in rows], token)
        if coll == "schemas":
            if len(parts) == 2:
                names = parts[1].split(".")
                if len(names) != 2 or not all(names):
                    raise ApiError("INVALID_ARGUMENT", f"Invalid schema full name: {parts[1]}")
                return cat.schema_info(cat.catalog(names[0]), cat.schema(*names))
            c = cat.catalog(self._required(query, "catalog_name"))
            rows, token = page(c.get("schemas", []), query)
            return self._listing("schemas", [cat.schema_info(c, s) for s in rows], token)
        # tables
        if len(parts) == 2:
            return cat.table_info(*cat.table(parts[1]))
        cname = self._required(query, "catalog_name")
        sname = self._required(query, "schema_name")
        c, s = cat.catalog(cname), cat.schema(cname, sname)
        rows, token = page(s.get("tables", []), query)
        return self._listing("tables", [cat.table_info(c, s, t) for t in rows], token)

    @staticmethod
    def _required(query, name):
        if not query.get(name):
            raise ApiError("INVALID_ARGUMENT", f"Missing required query parameter: {name}")
        return query[name]

    @staticmethod
    def _listing(field, rows, token):
        out = {field: rows}
        if token is not None:
            out["next_page_token"] = token
        return out

    def _vend(self, body):
        try:
            req = json.loads(body or b"null")
        except ValueError as e:
            raise ApiError("INVALID_ARGUMENT", f"Invalid JSON body: {e}")
        if not isinstance(req, dict):
            raise ApiError("INVALID_ARGUMENT", "Body must be a GenerateTemporaryTableCredential")
        table_id, op = req.get("table_id"), req.get("operation")
        if not isinstance(table_id, str) or not table_id:
            raise ApiError("INVALID_ARGUMENT", "table_id is required")
        if op not in ("READ", "READ_WRITE"):
            raise ApiError("INVALID_ARGUMENT", f"operation must be READ or READ_WRITE, got {op!r}")
        return self._vend_checked(self._table_by_id(table_id, "Table not found with id"), op)

    def _table_by_id(self, table_id, missing):
        """(catalog, schema, table) of a table_id, with the OSS server's errors."""
        try:
            uuid.UUID(table_id)
        except ValueError:  # the OSS server's UUID.fromString -> IllegalArgumentException
            raise ApiError("INVALID_ARGUMENT", f"Invalid UUID string: {table_id}")
        found = self.server.catalog.tables_by_id.get(table_id)
        if found is None:
            raise ApiError("TABLE_NOT_FOUND", f"{missing}: {table_id}")
        return found

    def _vend_checked(self, found, op):
        srv = self.server
        c, s, t = found
        full = f"{c['name']}.{s['name']}.{t['name']}"
        # Databricks' rule: vending needs SELECT on the table and EXTERNAL USE SCHEMA on
        # its schema (MODIFY too for READ_WRITE); each can be withheld in the config
        if not t.get("select", True):
            raise ApiError("PERMISSION_DENIED",
                           f"User does not have SELECT on Table '{full}'. Credential vending "
                           "needs SELECT on the table and EXTERNAL USE SCHEMA on its schema.")
        if not t.get("external_use", s.get("external_use", True)):
            raise ApiError("PERMISSION_DENIED",
                           f"User does not have EXTERNAL USE SCHEMA on Schema "
                           f"'{c['name']}.{s['name']}'.")
        if op == "READ_WRITE" and not t.get("modify", False):
            raise ApiError("PERMISSION_DENIED", f"User does not have MODIFY on Table '{full}'.")
        location = t.get("storage_location")
        if not location:
            raise ApiError("INVALID_ARGUMENT",
                           f"Table {full} ({t.get('table_type', 'EXTERNAL')}) has no storage "
                           "location to vend credentials for")
        out = srv.vendor.vend(full, location, op == "READ_WRITE")
        with srv.lock:
            srv.stats["vends"] += 1
        return out

    # -- catalog-managed tables --

    def _delta(self, method, parts, query, body):
        """/delta/preview/commits and /delta/v1/...: read-only, GET only."""
        if method != "GET":
            raise ApiError("UNIMPLEMENTED", f"{method} /delta/{'/'.join(parts)} is not "
                                            "implemented by this read-only test server")
        if parts == ["preview", "commits"]:
            return self._get_commits(query, body)
        if parts == ["v1", "config"]:
            return self._delta_config(query)
        if (len(parts) in (7, 8) and parts[:2] == ["v1", "catalogs"] and parts[3] == "schemas"
                and parts[5] == "tables" and all(parts[1:7])):
            full = f"{parts[2]}.{parts[4]}.{parts[6]}"
            if len(parts) == 7:
                return self._load_table(full)
            if parts[7] == "credentials":
                return self._delta_credentials(full, query)
        raise ApiError("NOT_FOUND", f"No such endpoint: delta/{'/'.join(parts)}")

    def _get_commits(self, query, body):
        """DeltaGetCommits from the JSON body (the OSS server's request object) or, for
        clients that cannot send a body with GET, from the query string."""
        cat = self.server.catalog
        if body:
            try:
                req = json.loads(body)
            except ValueError as e:
                raise ApiError("INVALID_ARGUMENT", f"Invalid JSON body: {e}")
            if not isinstance(req, dict):
                raise ApiError("INVALID_ARGUMENT", "Body must be a DeltaGetCommits object")
        else:
            req = dict(query)
            for k in ("start_version", "end_version"):
                if k in req:
                    try:
                        req[k] = int(req[k])
                    except ValueError:
                        raise ApiError("INVALID_ARGUMENT", f"{k} must be an integer")
        table_id, uri = req.get("table_id"), req.get("table_uri")
        start, end = req.get("start_version"), req.get("end_version")
        if not isinstance(table_id, str) or not table_id:
            raise ApiError("INVALID_ARGUMENT", "Field can not be null: table_id")
        if not isinstance(start, int) or isinstance(start, bool):
            raise ApiError("INVALID_ARGUMENT", "Field can not be null: start_version")
        if start < 0:
            raise ApiError("INVALID_ARGUMENT", "Field must be >=0: start_version")
        if end is not None and (not isinstance(end, int) or isinstance(end, bool) or end < start):
            raise ApiError("INVALID_ARGUMENT", "end_version must be >=start_version if set")
        found = self._table_by_id(table_id, "Table not found")
        c, s, t = found
        full = f"{c['name']}.{s['name']}.{t['name']}"
        self._check_select(found, full)
        if uri is not None and uri.rstrip("/") != (t.get("storage_location") or "").rstrip("/"):
            raise ApiError("INVALID_ARGUMENT",
                           f"table_uri {uri} does not match the table's storage location")
        latest, commits = cat.ratified(t, full)
        oldest = commits[0]["version"] if commits else latest + 1
        per_page = t["catalog_managed"].get("max_commits_per_page", COMMITS_PER_PAGE)
        last = min(end if end is not None else latest, max(start, oldest) + per_page - 1)
        rows = [c for c in commits if start <= c["version"] <= last]
        with self.server.lock:
            self.server.stats["commits"] += 1
        # "Can be in arbitrary order": newest first, so a client that assumes order fails here
        return {"commits": rows[::-1], "latest_table_version": latest}

    def _check_select(self, found, full):
        _, _, t = found
        if not t.get("select", True):
            raise ApiError("PERMISSION_DENIED", f"User does not have SELECT on Table '{full}'.")

    def _delta_config(self, query):
        cat = self.server.catalog
        cat.catalog(self._required(query, "catalog"))
        versions = self._required(query, "protocol-versions").split(",")
        if not any(v.strip().split(".")[0] == "1" for v in versions):
            raise ApiError("INVALID_ARGUMENT",
                           f"No protocol version in common: server 1.0, client {','.join(versions)}")
        base = "/v1/catalogs/{catalog}/schemas/{schema}/tables/{table}"
        return {"endpoints": [f"GET {base}", f"GET {base}/credentials"],
                "protocol-version": "1.0"}

    def _load_table(self, full):
        cat = self.server.catalog
        found = cat.table(full)
        c, s, t = found
        self._check_select(found, full)
        if not t.get("storage_location"):
            raise ApiError("INVALID_ARGUMENT", f"Table {full} has no storage location")
        info = cat.table_info(c, s, t)
        metadata = {
            "etag": hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:16],
            "table-type": info["table_type"] if info["table_type"] in ("MANAGED", "EXTERNAL")
            else "EXTERNAL",
            "table-uuid": info["table_id"],
            "location": t["storage_location"],
            "created-time": cat.created_at,
            "updated-time": cat.created_at,
            "columns": {"type": "struct", "fields": t.get("delta_columns", [])},
            "partition-columns": t.get("partition_columns", []),
            "properties": cat.properties(t, full),
        }
        out = {"metadata": metadata}
        if isinstance(t.get("catalog_managed"), dict):
            latest, commits = cat.ratified(t, full)
            out["commits"] = [{"version": c["version"], "timestamp": c["timestamp"],
                               "file-name": c["file_name"], "file-size": c["file_size"],
                               "file-modification-timestamp": c["file_modification_timestamp"]}
                              for c in reversed(commits)]  # the spec: newest first
            out["latest-table-version"] = latest
            with self.server.lock:
                self.server.stats["commits"] += 1
        return out

    def _delta_credentials(self, full, query):
        op = self._required(query, "operation")
        if op not in ("READ", "READ_WRITE"):
            raise ApiError("INVALID_ARGUMENT", f"operation must be READ or READ_WRITE, got {op!r}")
        vended = self._vend_checked(self.server.catalog.table(full), op)
        config = {}
        aws = vended.get("aws_temp_credentials")
        if aws:
            config = {"s3.access-key-id": aws["access_key_id"],
                      "s3.secret-access-key": aws["secret_access_key"],
                      "s3.session-token": aws["session_token"]}
        elif vended.get("azure_user_delegation_sas"):
            config = {"azure.sas-token": vended["azure_user_delegation_sas"]["sas_token"]}
        elif vended.get("gcp_oauth_token"):
            config = {"gcs.oauth-token": vended["gcp_oauth_token"]["oauth_token"]}
        return {"storage-credentials": [{
            "prefix": vended["url"], "operation": op, "config": config,
            "expiration-time-ms": vended["expiration_time"]}]}


def make_server(config, token, ttl, port=0):
    if not token:
        raise ValueError("an empty token would let every request in")
    srv = ThreadingHTTPServer((HOST, port), Handler)
    srv.daemon_threads = True
    srv.token = token
    srv.catalog = Catalog(config)
    srv.vendor = Vendor(srv.catalog, ttl)
    srv.lock = threading.Lock()
    srv.stats = {"vends": 0, "requests": 0, "commits": 0}
    return srv


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("serve")
    sp.add_argument("--port", type=int, default=0)
    sp.add_argument("--token", required=True)
    sp.add_argument("--config", required=True)
    sp.add_argument("--ttl-seconds", type=int, default=3600)
    sp.add_argument("--port-file")
    sp.add_argument("--stop-after", type=float, default=3600.0)
    a = ap.parse_args(argv)
    if a.ttl_seconds <= 0:
        ap.error("--ttl-seconds must be positive")
    if not a.token:
        ap.error("--token must not be empty")
    with open(a.config) as f:
        config = json.load(f)
    srv = make_server(config, a.token, a.ttl_seconds, a.port)
    port = srv.server_address[1]
    if a.port_file:
        # write then rename: a poller never sees a half-written port
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, a.port_file)
    print(f"listening on http://{HOST}:{port}", flush=True)
    # bounded lifetime: a test that dies without cleanup does not leave us running
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

#!/usr/bin/env python3
"""Self-test for unity_catalog.py: starts it (CLI, port 0, temp config) and checks the
endpoints with urllib. Exits non-zero on any failure; every process it starts is stopped.

  python3 tests/harness/test_unity_catalog.py

When the emulators are at hand it also checks the vended credentials against them:
  moto (python -m moto.server, with boto3): IAM auth switched on, the UC server vends
      AssumeRole credentials from moto STS; GetObject works with them and fails with a
      tampered session token
  azurite ($AZURITE_BLOB, else tools/node_modules/.bin/azurite-blob): the vended SAS lists
      the container, and is refused once its se= has passed
Either is skipped (and said so) when missing.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import stores  # noqa: E402  (azurite's account and key)
import unity_catalog as uc  # noqa: E402

TOKEN = "uc-self-test-token"
API = uc.PREFIX
AZ = f"abfss://warehouse@{stores.ACCOUNT}.dfs.core.windows.net/tables/az_tbl"

failures = []
procs = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def call(port, method, path, body=None, token=TOKEN, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    procs.append(p)
    return p


def wait_for(what, probe, timeout=12):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if probe():
                return True
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not come up within {timeout}s")


def start_uc(tmp, name, config, ttl):
    cfg = os.path.join(tmp, f"{name}.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    pf = os.path.join(tmp, f"{name}.port")
    start([sys.executable, os.path.join(HERE, "unity_catalog.py"), "serve", "--port", "0",
           "--token", TOKEN, "--config", cfg, "--ttl-seconds", str(ttl), "--port-file", pf,
           "--stop-after", "60"],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"{name}.log"), "w"))
    wait_for(name, lambda: os.path.exists(pf))
    with open(pf) as f:
        return int(f.read())


def table(name, location=None, **kw):
    t = {"name": name, "table_type": "EXTERNAL", "data_source_format": "DELTA", **kw}
    if location:
        t["storage_location"] = location
    return t


def main_checks(port):
    ok, body = call(port, "GET", f"{API}/catalogs")
    check(ok == 200 and [c["name"] for c in body["catalogs"]] == ["alpha", "main"]
          and "next_page_token" not in body, f"list catalogs: {ok} {body}")
    ok, p1 = call(port, "GET", f"{API}/catalogs?max_results=1")
    ok2, p2 = call(port, "GET", f"{API}/catalogs?max_results=1&page_token="
                   + urllib.parse.quote(p1.get("next_page_token", "")))
    check(ok == ok2 == 200 and [c["name"] for c in p1["catalogs"]] == ["alpha"]
          and p1.get("next_page_token") and [c["name"] for c in p2["catalogs"]] == ["main"]
          and "next_page_token" not in p2, f"catalog paging max_results=1: {p1} {p2}")
    ok, body = call(port, "GET", f"{API}/catalogs?max_results=-1")
    check(ok == 400 and body["error_code"] == "INVALID_ARGUMENT", f"max_results=-1: {ok} {body}")
    ok, body = call(port, "GET", f"{API}/catalogs/main")
    check(ok == 200 and body["name"] == "main" and body["id"], f"get catalog: {ok} {body}")
    ok, body = call(port, "GET", f"{API}/catalogs/nope")
    check(ok == 404 and body["error_code"] == "CATALOG_NOT_FOUND", f"missing catalog: {ok} {body}")

    ok, body = call(port, "GET", f"{API}/schemas?catalog_name=main")
    full_names = [s["full_name"] for s in body.get("schemas", [])]
    check(ok == 200 and full_names == ["main.default", "main.locked"],
          f"list schemas: {ok} {body}")
    ok, body = call(port, "GET", f"{API}/schemas")
    check(ok == 400 and body["error_code"] == "INVALID_ARGUMENT", f"schemas w/o catalog: {ok}")
    ok, body = call(port, "GET", f"{API}/schemas/main.default")
    check(ok == 200 and body["catalog_name"] == "main" and body["name"] == "default",
          f"get schema: {ok} {body}")
    ok, body = call(port, "GET", f"{API}/schemas/main.gone")
    check(ok == 404 and body["error_code"] == "SCHEMA_NOT_FOUND", f"missing schema: {ok} {body}")

    ok, body = call(port, "GET", f"{API}/tables?catalog_name=main&schema_name=default")
    names = [t["name"] for t in body.get("tables", [])]
    check(ok == 200 and names == sorted(names) and len(names) == 6, f"list tables: {ok} {names}")
    ok, p1 = call(port, "GET", f"{API}/tables?catalog_name=main&schema_name=default&max_results=4")
    ok2, p2 = call(port, "GET", f"{API}/tables?catalog_name=main&schema_name=default&max_results=4"
                   f"&page_token={urllib.parse.quote(p1.get('next_page_token', ''))}")
    check([t["name"] for t in p1["tables"] + p2["tables"]] == names, "table paging max_results=4")

    ok, t = call(port, "GET", f"{API}/tables/main.default.s3_tbl")
    want_id = str(uuid.uuid5(uc.ID_NAMESPACE, "table:main.default.s3_tbl"))
    check(ok == 200 and t["table_id"] == want_id
          and t["storage_location"] == "s3://bkt/tables/s3_tbl"
          and t["data_source_format"] == "DELTA" and t["table_type"] == "EXTERNAL"
          and t["columns"] == [] and isinstance(t["created_at"], int)
          and (t["catalog_name"], t["schema_name"], t["name"]) == ("main", "default", "s3_tbl"),
          f"get table: {ok} {t}")
    ok, pq = call(port, "GET", f"{API}/tables/main.default.pq_tbl")
    check(ok == 200 and pq["data_source_format"] == "PARQUET", f"PARQUET table as-is: {pq}")
    ok, v = call(port, "GET", f"{API}/tables/main.default.a_view")
    check(ok == 200 and v["table_type"] == "VIEW" and "storage_location" not in v,
          f"VIEW as-is: {v}")
    ok, body = call(port, "GET", f"{API}/tables/main.default.missing")
    check(ok == 404 and body["error_code"] == "TABLE_NOT_FOUND" and "message" in body,
          f"missing table: {ok} {body}")
    ok, body = call(port, "GET", f"{API}/tables/main.default")
    check(ok == 400 and body["error_code"] == "INVALID_ARGUMENT", f"2-part table name: {ok}")

    ok, body = call(port, "GET", f"{API}/catalogs", token=None)
    check(ok == 401 and body["error_code"] == "UNAUTHENTICATED", f"no token: {ok} {body}")
    ok, body = call(port, "GET", f"{API}/catalogs", token="wrong")
    check(ok == 401 and body["error_code"] == "UNAUTHENTICATED", f"wrong token: {ok} {body}")
    ok, body = call(port, "POST", f"{API}/temporary-table-credentials", token=None,
                    body={"table_id": want_id, "operation": "READ"})
    check(ok == 401, f"vend without token: {ok}")

    def vend(name, op="READ"):
        _, info = call(port, "GET", f"{API}/tables/main.{name}")
        return call(port, "POST", f"{API}/temporary-table-credentials",
                    body={"table_id": info.get("table_id", str(uuid.uuid4())), "operation": op})

    before = time.time()
    ok, c1 = vend("default.s3_tbl")
    ok2, c2 = vend("default.s3_tbl")
    aws = c1.get("aws_temp_credentials", {})
    check(ok == ok2 == 200 and aws.get("access_key_id") == "test-key"
          and aws.get("secret_access_key") == "test-secret" and aws.get("session_token")
          and aws["session_token"] != c2["aws_temp_credentials"]["session_token"]
          and c1["url"] == "s3://bkt/tables/s3_tbl"
          and abs(c1["expiration_time"] / 1000 - (before + 600)) < 5,
          f"vend s3: {ok} {c1}")
    ok, c = vend("default.az_tbl")
    sas = c.get("azure_user_delegation_sas", {}).get("sas_token", "")
    q = urllib.parse.parse_qs(sas)
    se = q.get("se", [""])[0]
    try:
        se_t = time.mktime(time.strptime(se, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    except ValueError:
        se_t = 0
    check(ok == 200 and "sig" in q and "sp" in q and q["sp"][0] == "rl" and q.get("sr") == ["c"]
          and abs(se_t - c["expiration_time"] / 1000) < 2 and "aws_temp_credentials" not in c,
          f"vend azure SAS (se={se}, sp={q.get('sp')}): {ok} {c}")
    ok, body = vend("default.noselect")
    check(ok == 403 and body["error_code"] == "PERMISSION_DENIED" and "SELECT" in body["message"],
          f"select false: {ok} {body}")
    ok, body = vend("locked.ext")
    check(ok == 403 and body["error_code"] == "PERMISSION_DENIED"
          and "EXTERNAL USE SCHEMA" in body["message"], f"external_use false: {ok} {body}")
    ok, body = vend("default.s3_tbl", "READ_WRITE")
    check(ok == 403 and "MODIFY" in body.get("message", ""), f"READ_WRITE w/o modify: {ok} {body}")
    ok, body = vend("default.a_view")
    check(ok == 400 and body["error_code"] == "INVALID_ARGUMENT", f"vend for a VIEW: {ok} {body}")
    ok, body = call(port, "POST", f"{API}/temporary-table-credentials",
                    body={"table_id": str(uuid.uuid4()), "operation": "READ"})
    check(ok == 404 and body["error_code"] == "TABLE_NOT_FOUND", f"vend unknown id: {ok} {body}")
    ok, body = call(port, "POST", f"{API}/temporary-table-credentials",
                    body={"table_id": "not-a-uuid", "operation": "READ"})
    check(ok == 400 and body["error_code"] == "INVALID_ARGUMENT", f"vend bad uuid: {ok} {body}")
    ok, body = call(port, "POST", f"{API}/temporary-table-credentials",
                    raw=b"{" + b" " * (70 * 1024) + b"}")
    check(ok == 413, f"70 KiB body: {ok}")
    ok, body = call(port, "POST", f"{API}/catalogs", body={"name": "x"})
    check(ok == 501 and body["error_code"] == "UNIMPLEMENTED", f"create catalog: {ok} {body}")

    ok, stats = call(port, "GET", "/_test/stats")
    check(ok == 200 and stats["vends"] == 3 and stats["requests"] > 20, f"stats: {stats}")


def moto_setup(tmp):
    """moto with IAM auth on, a user allowed to assume a role that may read S3."""
    import boto3

    port = free_port()
    ep = f"http://127.0.0.1:{port}"
    start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "moto.log"), "w"))
    wait_for("moto", lambda: urllib.request.urlopen(ep + "/moto-api/", timeout=2).status == 200)
    kw = dict(endpoint_url=ep, region_name="us-east-1", aws_access_key_id="boot",
              aws_secret_access_key="boot")
    iam, s3 = boto3.client("iam", **kw), boto3.client("s3", **kw)
    iam.create_user(UserName="uc")
    key = iam.create_access_key(UserName="uc")["AccessKey"]
    allow = lambda actions: json.dumps({"Version": "2012-10-17", "Statement": [  # noqa: E731
        {"Effect": "Allow", "Action": actions, "Resource": "*"}]})
    iam.put_user_policy(UserName="uc", PolicyName="assume", PolicyDocument=allow("sts:AssumeRole"))
    trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName="uc-reader", AssumeRolePolicyDocument=json.dumps(trust))
    iam.put_role_policy(RoleName="uc-reader", PolicyName="read",
                        PolicyDocument=allow(["s3:GetObject", "s3:ListBucket"]))
    s3.create_bucket(Bucket="bkt")
    s3.put_object(Bucket="bkt", Key="tables/s3_tbl/_delta_log/0.json", Body=b"{}")
    # from here on moto checks every signature, access key and session token
    urllib.request.urlopen(urllib.request.Request(
        ep + "/moto-api/reset-auth", data=b"0", method="POST",
        headers={"Content-Type": "text/plain"}), timeout=5)
    return ep, {"sts_endpoint": ep, "access_key_id": key["AccessKeyId"],
                "secret_access_key": key["SecretAccessKey"],
                "role_arn": role["Role"]["Arn"]}


def azurite_setup(tmp, binary):
    from azure.storage.blob import BlobServiceClient

    port = free_port()
    ep = f"http://127.0.0.1:{port}/{stores.ACCOUNT}"
    start([binary, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location",
           os.path.join(tmp, "azurite"), "--silent", "--disableTelemetry",
           "--skipApiVersionCheck"],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "azurite.log"), "w"))

    def up():
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    wait_for("azurite", up)
    svc = BlobServiceClient.from_connection_string(
        f"DefaultEndpointsProtocol=http;AccountName={stores.ACCOUNT};"
        f"AccountKey={stores.KEY};BlobEndpoint={ep};")
    svc.create_container("warehouse").upload_blob("tables/az_tbl/_delta_log/0.json", b"{}")
    return ep


def emulator_checks(tmp):
    try:
        import boto3  # noqa: F401
        import moto  # noqa: F401
        have_moto = True
    except ImportError:
        have_moto = False
    binary = os.environ.get("AZURITE_BLOB") or os.path.join(
        ROOT, "tools", "node_modules", ".bin", "azurite-blob")
    have_azurite = os.access(binary, os.X_OK)
    if not have_moto:
        print("skip moto STS checks: boto3/moto not importable")
    if not have_azurite:
        print(f"skip azurite SAS checks: no {binary} (set AZURITE_BLOB)")
    if not (have_moto or have_azurite):
        return
    config = {"catalogs": [{"name": "e2e", "schemas": [{"name": "s", "tables": []}]}]}
    tables = config["catalogs"][0]["schemas"][0]["tables"]
    az_ep = azurite_setup(tmp, binary) if have_azurite else None
    if have_moto:
        s3_ep, config["aws"] = moto_setup(tmp)
        tables.append(table("s3_tbl", "s3://bkt/tables/s3_tbl"))
    if have_azurite:
        tables.append(table("az_tbl", AZ))
    ttl = 3
    port = start_uc(tmp, "uc-e2e", config, ttl)

    def vend(name):
        _, info = call(port, "GET", f"{API}/tables/e2e.s.{name}")
        return call(port, "POST", f"{API}/temporary-table-credentials",
                    body={"table_id": info["table_id"], "operation": "READ"})

    if have_moto:
        import boto3
        import botocore.exceptions

        ok, c = vend("s3_tbl")
        a = c.get("aws_temp_credentials", {})
        check(ok == 200 and a.get("access_key_id", "").startswith("ASIA"),
              f"moto STS vend: {ok} {c}")

        def get(token):
            s3 = boto3.client("s3", endpoint_url=s3_ep, region_name="us-east-1",
                              aws_access_key_id=a["access_key_id"],
                              aws_secret_access_key=a["secret_access_key"],
                              aws_session_token=token)
            try:
                return s3.get_object(Bucket="bkt", Key="tables/s3_tbl/_delta_log/0.json")[
                    "Body"].read()
            except botocore.exceptions.ClientError as e:
                return e.response["Error"]["Code"]
        check(get(a.get("session_token")) == b"{}", "moto: GetObject with vended STS creds")
        check(get("tampered") == "InvalidToken", "moto: tampered session token refused")
    if have_azurite:
        ok, c = vend("az_tbl")
        sas = c.get("azure_user_delegation_sas", {}).get("sas_token", "")
        url = f"{az_ep}/warehouse?restype=container&comp=list&prefix=tables/az_tbl/&{sas}"

        def status():
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as e:
                return e.code, e.read()
        st, body = status()
        check(ok == 200 and st == 200 and b"_delta_log/0.json" in body,
              f"azurite: list with vended SAS: {st}")
        time.sleep(max(0.0, c["expiration_time"] / 1000 - time.time()) + 1.5)
        st, body = status()
        check(st == 403, f"azurite: SAS refused after se=: {st}")


def write_managed_table(root):
    """A catalog-managed layout as PROTOCOL.md's example draws it: published 0 and 1, a
    staged copy of 1 (ratified, published), 2 ratified, a rejected 2 and an unratified 3.
    Only this server's answers are checked here (the files are not a Delta table a reader
    is asked to read: that is the CLI's test, on tables real writers wrote)."""
    log = os.path.join(root, "_delta_log")
    staged = os.path.join(log, "_staged_commits")
    os.makedirs(staged)
    ids = {1: "016ae953-37a9-438e-8683-9a9a4a79a395", 2: "7d17ac10-5cc3-401b-bd1a-9c82dd2ea032",
           "2x": "b91807ba-fe18-488c-a15e-c4807dbd2174", 3: "0f707846-cd18-4e01-b40e-84ee0ae987b0"}

    def commit(v, ict):
        return json.dumps({"commitInfo": {"inCommitTimestamp": ict, "txnId": str(v)}}) + "\n"

    for v in (0, 1):
        with open(os.path.join(log, f"{v:020}.json"), "w") as f:
            f.write(commit(v, 1000 + v))
    names = {}
    for key, v, ict in ((1, 1, 1001), (2, 2, 1002), ("2x", 2, 9999), (3, 3, 1003)):
        names[key] = f"{v:020}.{ids[key]}.json"
        with open(os.path.join(staged, names[key]), "w") as f:
            f.write(commit(v, ict))
    return names


def managed_checks(tmp):
    root = os.path.join(tmp, "cm_tbl")
    names = write_managed_table(root)
    location = "file://" + root
    ratified = [{"version": 1, "file_name": names[1]}, {"version": 2, "file_name": names[2]}]
    config = {
        "aws": {"access_key_id": "test-key", "secret_access_key": "test-secret"},
        "catalogs": [{"name": "main", "schemas": [{"name": "cm", "tables": [
            table("t", location, table_type="MANAGED",
                  catalog_managed={"latest_table_version": 2, "commits": ratified}),
            table("paged", location, table_type="MANAGED",
                  catalog_managed={"latest_table_version": 2, "commits": ratified,
                                   "max_commits_per_page": 1}),
            table("s3cm", "s3://bkt/tables/s3cm", table_type="MANAGED",
                  catalog_managed={"latest_table_version": 0, "commits": []}),
            table("plain", "s3://bkt/tables/plain"),
            table("hidden", location, select=False, table_type="MANAGED",
                  catalog_managed={"latest_table_version": 2, "commits": ratified}),
        ]}]}],
    }
    port = start_uc(tmp, "uc-cm", config, 600)
    ok, info = call(port, "GET", f"{API}/tables/main.cm.t")
    tid = info.get("table_id")
    props = info.get("properties", {})
    check(ok == 200 and info.get("table_type") == "MANAGED"
          and props.get("delta.feature.catalogManaged") == "supported"
          and props.get("io.unitycatalog.tableId") == tid,
          f"a catalog-managed table says so in TableInfo: {ok} {info}")
    _, plain = call(port, "GET", f"{API}/tables/main.cm.plain")
    check("delta.feature.catalogManaged" not in plain.get("properties", {}),
          "a plain table does not say it is catalog-managed")

    size1 = os.path.getsize(os.path.join(root, "_delta_log", "_staged_commits", names[1]))
    want = [(2, names[2], 1002), (1, names[1], 1001)]

    def commits(req=None, query=None, tok=TOKEN):
        path = f"{API}/delta/preview/commits"
        if query is not None:
            path += "?" + urllib.parse.urlencode(query)
        return call(port, "GET", path, body=req, token=tok)

    ok, body = commits({"table_id": tid, "table_uri": location, "start_version": 0})
    got = [(c["version"], c["file_name"], c["timestamp"]) for c in body.get("commits", [])]
    c1 = [c for c in body.get("commits", []) if c["version"] == 1]
    check(ok == 200 and got == want and body.get("latest_table_version") == 2
          and c1 and c1[0]["file_size"] == size1 and c1[0]["file_modification_timestamp"] > 0,
          f"preview commits (JSON body): ratified 1 and 2 only, newest first, ICT as timestamp, "
          f"size off the file: {ok} {body}")
    ok, body2 = commits(query={"table_id": tid, "start_version": "0"})
    check(ok == 200 and body2 == body, f"preview commits (query string) answer alike: {ok} {body2}")
    ok, body = commits({"table_id": tid, "start_version": 2})
    check(ok == 200 and [c["version"] for c in body["commits"]] == [2]
          and body["latest_table_version"] == 2, f"start_version=2: {ok} {body}")
    ok, body = commits({"table_id": tid, "start_version": 0, "end_version": 1})
    check(ok == 200 and [c["version"] for c in body["commits"]] == [1]
          and body["latest_table_version"] == 2,
          f"end_version=1 keeps latest_table_version: {ok} {body}")
    ok, body = commits({"table_id": tid, "start_version": 3})
    check(ok == 200 and body["commits"] == [] and body["latest_table_version"] == 2,
          f"past the latest: no commits: {ok} {body}")
    _, pinfo = call(port, "GET", f"{API}/tables/main.cm.paged")
    ok, p1 = commits({"table_id": pinfo["table_id"], "start_version": 0})
    ok2, p2 = commits({"table_id": pinfo["table_id"], "start_version": 2})
    check(ok == ok2 == 200 and [c["version"] for c in p1["commits"]] == [1]
          and [c["version"] for c in p2["commits"]] == [2] and p1["latest_table_version"] == 2,
          f"paging: one commit a call, latest_table_version says more: {p1} {p2}")
    for req, code, what in (
            ({"table_id": tid, "start_version": 2, "end_version": 1}, 400, "end < start"),
            ({"table_id": tid}, 400, "no start_version"),
            ({"table_id": tid, "start_version": -1}, 400, "negative start_version"),
            ({"table_id": tid, "start_version": True}, 400, "a boolean start_version"),
            ({"start_version": 0}, 400, "no table_id"),
            ({"table_id": "nope", "start_version": 0}, 400, "table_id not a UUID"),
            ({"table_id": str(uuid.uuid4()), "start_version": 0}, 404, "unknown table"),
            ({"table_id": tid, "table_uri": "s3://other/t", "start_version": 0}, 400,
             "table_uri of another location"),
            ({"table_id": plain["table_id"], "start_version": 0}, 400,
             "a table that is not catalog-managed"),
            ([1, 2], 400, "a body that is not an object")):
        ok, body = commits(req)
        check(ok == code and isinstance(body, dict) and body.get("error_code"),
              f"preview commits refuses {what}: {ok} {body}")
    _, hidden = call(port, "GET", f"{API}/tables/main.cm.hidden")
    ok, body = commits({"table_id": hidden["table_id"], "start_version": 0})
    check(ok == 403 and body.get("error_code") == "PERMISSION_DENIED",
          f"no SELECT, no commits: {ok} {body}")
    ok, body = commits({"table_id": tid, "start_version": 0}, tok=None)
    check(ok == 401, f"commits need the token: {ok}")

    base = f"{API}/delta/v1/catalogs/main/schemas/cm/tables"
    ok, lt = call(port, "GET", f"{base}/t")
    md = lt.get("metadata", {})
    check(ok == 200 and md.get("location") == location and md.get("table-uuid") == tid
          and md.get("table-type") == "MANAGED" and md.get("etag")
          and md.get("properties", {}).get("io.unitycatalog.tableId") == tid
          and [(c["version"], c["file-name"], c["timestamp"]) for c in lt.get("commits", [])]
          == want and lt["commits"][1]["file-size"] == size1
          and lt.get("latest-table-version") == 2,
          f"loadTable: metadata, ratified commits newest first, latest version: {ok} {lt}")
    ok, lp = call(port, "GET", f"{base}/plain")
    check(ok == 200 and "commits" not in lp and "latest-table-version" not in lp
          and lp["metadata"]["table-type"] == "EXTERNAL", f"loadTable of a plain table: {lp}")
    ok, body = call(port, "GET", f"{base}/nope")
    check(ok == 404 and body.get("error_code") == "TABLE_NOT_FOUND", f"loadTable 404: {ok}")
    ok, body = call(port, "GET", f"{base}/hidden")
    check(ok == 403, f"loadTable without SELECT: {ok}")
    ok, cr = call(port, "GET", f"{base}/s3cm/credentials?operation=READ")
    sc = (cr.get("storage-credentials") or [{}])[0]
    check(ok == 200 and sc.get("prefix") == "s3://bkt/tables/s3cm" and sc.get("operation") == "READ"
          and sc.get("config", {}).get("s3.access-key-id") == "test-key"
          and sc["config"].get("s3.session-token") and sc.get("expiration-time-ms", 0) > 0,
          f"delta/v1 credentials (s3): {ok} {cr}")
    ok, cr = call(port, "GET", f"{base}/t/credentials?operation=READ")
    check(ok == 200 and cr["storage-credentials"][0]["config"] == {},
          f"delta/v1 credentials (file://): no secret: {ok} {cr}")
    ok, body = call(port, "GET", f"{base}/t/credentials")
    check(ok == 400, f"delta/v1 credentials need operation: {ok}")
    ok, body = call(port, "GET", f"{base}/s3cm/credentials?operation=READ_WRITE")
    check(ok == 403, f"delta/v1 READ_WRITE without MODIFY: {ok}")
    ok, cfg = call(port, "GET", f"{API}/delta/v1/config?catalog=main&protocol-versions=1.1")
    check(ok == 200 and cfg.get("protocol-version") == "1.0" and cfg.get("endpoints"),
          f"delta/v1 config: {ok} {cfg}")
    ok, body = call(port, "GET", f"{API}/delta/v1/config?catalog=main&protocol-versions=2.0")
    check(ok == 400, f"delta/v1 config with no common version: {ok}")
    ok, body = call(port, "GET", f"{API}/delta/v1/config?protocol-versions=1.0")
    check(ok == 400, f"delta/v1 config needs catalog: {ok}")
    ok, body = call(port, "POST", f"{API}/delta/preview/commits", body={"table_id": tid})
    check(ok == 501, f"committing is not this read-only server's business: {ok}")
    ok, stats = call(port, "GET", "/_test/stats")
    check(ok == 200 and stats.get("commits", 0) >= 8, f"stats count commit answers: {stats}")


def main():
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            config = {
                "aws": {"access_key_id": "test-key", "secret_access_key": "test-secret"},
                "catalogs": [
                    {"name": "main", "schemas": [
                        {"name": "default", "tables": [
                            table("s3_tbl", "s3://bkt/tables/s3_tbl"),
                            table("az_tbl", AZ),
                            table("pq_tbl", "s3://bkt/tables/pq_tbl",
                                  data_source_format="PARQUET"),
                            {"name": "a_view", "table_type": "VIEW",
                             "view_definition": "SELECT 1"},
                            table("noselect", "s3://bkt/tables/noselect", select=False),
                            table("managed", "s3://bkt/tables/managed", table_type="MANAGED"),
                        ]},
                        {"name": "locked", "external_use": False, "tables": [
                            table("ext", "s3://bkt/tables/ext")]},
                    ]},
                    {"name": "alpha", "comment": "sorts first", "schemas": []},
                ],
            }
            main_checks(start_uc(tmp, "uc", config, 600))
            managed_checks(tmp)
            emulator_checks(tmp)
        except Exception as e:  # a crash is a failure, not a traceback with servers left up
            failures.append(f"{type(e).__name__}: {e}")
            print(f"FAIL {type(e).__name__}: {e}")
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    print(f"{len(failures)} failure(s) in {time.time() - t0:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

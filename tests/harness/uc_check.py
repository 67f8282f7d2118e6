#!/usr/bin/env python3
"""Unity Catalog end to end, with the CLI and `deltalens serve`'s relay:

- a test catalog (tests/harness/unity_catalog.py) registers corpus tables stored in moto
  (IAM auth on: every request's signature, key and session token checked; the catalog
  vends real STS AssumeRole credentials) and in azurite (real SAS, expiry enforced);
- each `uc://` table answers `info`, `schema`, `files`, `history` and `scan` like its
  local directory;
- each catalog error (missing table, no SELECT, no EXTERNAL USE SCHEMA, not Delta, a view,
  a bad token) gives its message; `uc://catalog` and `deltalens catalog` list;
- credentials expire mid-session (ttl 6 s) and `serve` keeps reading through the relay;
  azurite would refuse an expired SAS.

  uc_check.py --cli BIN --azure http://127.0.0.1:P/devstoreaccount1 --tables DIR... \
      [--serve-port N]
Prints what it checked; exits 1 on any failure.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stores  # noqa: E402

TOKEN = "uc-check-token"
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


def start(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    procs.append(p)
    return p


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


def uc_name(table):
    return table.replace("-", "_")


def moto_with_auth(tmp, tables):
    """moto holding the tables, then IAM auth on; the catalog's STS settings."""
    import boto3

    port = free_port()
    ep = f"http://127.0.0.1:{port}"
    start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "moto.log"), "w"))
    wait_for(ep + "/moto-api/")
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
    iam.create_user(UserName="reader")
    reader = iam.create_access_key(UserName="reader")["AccessKey"]
    iam.put_user_policy(UserName="reader", PolicyName="read",
                        PolicyDocument=allow(["s3:GetObject", "s3:ListBucket"]))
    s3.create_bucket(Bucket="ucbucket")
    for name, root in tables.items():
        for d, _, files in os.walk(root):
            for f in files:
                p = os.path.join(d, f)
                s3.upload_file(p, "ucbucket", f"tables/{name}/" + os.path.relpath(p, root).replace(os.sep, "/"))
    # from here on moto checks every signature, access key and session token
    urllib.request.urlopen(urllib.request.Request(
        ep + "/moto-api/reset-auth", data=b"0", method="POST",
        headers={"Content-Type": "text/plain"}), timeout=5)
    return ep, {"sts_endpoint": ep, "access_key_id": key["AccessKeyId"],
                "secret_access_key": key["SecretAccessKey"], "role_arn": role["Role"]["Arn"],
                "region": "us-east-1"}, (reader["AccessKeyId"], reader["SecretAccessKey"])


# one container per run: an azurite instance may be shared with other checks
CONTAINER = f"uc{os.getpid()}"


def catalog_config(names, aws):
    def table(name, location, **kw):
        return {"name": uc_name(name), "storage_location": location, "data_source_format": "DELTA",
                "table_type": "EXTERNAL", **kw}
    return {
        "aws": aws,
        "catalogs": [{"name": "main", "comment": "deltalens tests", "schemas": [
            {"name": "s3", "tables": [table(n, f"s3://ucbucket/tables/{n}") for n in names]},
            {"name": "azure", "tables": [
                table(n, f"abfss://{CONTAINER}@{stores.ACCOUNT}.dfs.core.windows.net/tables/{n}") for n in names]},
            {"name": "errors", "tables": [
                table("parquet_tbl", "s3://ucbucket/tables/demo", data_source_format="PARQUET"),
                {"name": "a_view", "table_type": "VIEW", "data_source_format": "DELTA",
                 "view_definition": "SELECT 1"},
                table("secret_tbl", "s3://ucbucket/tables/demo", select=False)]},
            {"name": "noext", "external_use": False, "tables": [table("demo", "s3://ucbucket/tables/demo")]},
        ]}],
    }


def start_catalog(tmp, config, ttl, tag):
    cfg = os.path.join(tmp, f"uc-{tag}.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    pf = os.path.join(tmp, f"uc-{tag}.port")
    start([sys.executable, os.path.join(HERE, "unity_catalog.py"), "serve", "--token", TOKEN,
           "--config", cfg, "--ttl-seconds", str(ttl), "--port-file", pf, "--stop-after", "900"],
          stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"uc-{tag}.log"), "w"))
    for _ in range(300):
        if os.path.exists(pf):
            return f"http://127.0.0.1:{open(pf).read().strip()}"
        time.sleep(0.1)
    raise SystemExit("the test catalog did not start")


def stats(endpoint):
    req = urllib.request.Request(endpoint + "/_test/stats", headers={"Authorization": f"Bearer {TOKEN}"})
    return json.load(urllib.request.urlopen(req, timeout=5))


def cli(a, env, *args):
    return subprocess.run([a.cli, *args], env=env, capture_output=True, text=True, timeout=300)


def aws_profiles(a, tmp, moto, reader, tables):
    """The user's own AWS credential sources: a profile's static keys and its
    credential_process, from the shared files, on moto with signatures checked."""
    key, secret = reader
    proc = os.path.join(tmp, "creds.py")
    calls = os.path.join(tmp, "creds.calls")
    with open(proc, "w") as f:
        f.write(f"import json\nopen({calls!r}, 'a').write('x\\n')\n"
                f"print(json.dumps({{'Version': 1, 'AccessKeyId': {key!r}, 'SecretAccessKey': {secret!r},"
                f" 'Expiration': '2099-01-01T00:00:00Z'}}))\n")
    config = os.path.join(tmp, "aws-config")
    with open(config, "w") as f:
        f.write(f"[profile proc]\nregion = us-east-1\ncredential_process = {sys.executable} {proc}\n"
                "[profile static]\nregion = us-east-1\n[profile wrong]\nregion = us-east-1\n")
    creds = os.path.join(tmp, "aws-credentials")
    with open(creds, "w") as f:
        f.write(f"[static]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n"
                "[wrong]\naws_access_key_id = AKIAWRONG\naws_secret_access_key = wrong\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "UC_", "DATABRICKS_"))}
    env.update(AWS_CONFIG_FILE=config, AWS_SHARED_CREDENTIALS_FILE=creds, AWS_ENDPOINT_URL=moto,
               AWS_ALLOW_HTTP="true", HOME=tmp)
    name = next(n for n in tables if not partitioned(tables[n]))
    url = f"s3://ucbucket/tables/{name}"
    want = cli(a, env, "info", tables[name], "--json")
    for profile, ok in (("proc", True), ("static", True), ("wrong", False)):
        r = cli(a, dict(env, AWS_PROFILE=profile), "info", url, "--json")
        got = r.returncode == 0 and comparable("info", r.stdout) == comparable("info", want.stdout)
        check(got == ok, f"AWS_PROFILE={profile}: {'reads' if ok else 'is refused'} ({r.stderr.strip()[:200]})")
    n = len(open(calls).read().split()) if os.path.exists(calls) else 0
    check(n == 1, f"the credential_process ran once for one command ({n})")
    print("aws profiles: static keys and credential_process from the shared files read a"
          " signature-checked bucket; a profile with wrong keys is refused", flush=True)


def azure_cli_login(a, tmp, name):
    """With no Azure credential configured and `az` installed, the Azure CLI's login is
    asked for a token (a stand-in `az` records the call; azurite takes no bearer token
    over http, so the read itself is refused by the store, not for want of credentials)."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    calls = os.path.join(tmp, "az.calls")
    az = os.path.join(bindir, "az")
    with open(az, "w") as f:
        f.write(f"#!/bin/sh\necho \"$*\" >> {calls}\n"
                "echo '{\"accessToken\": \"stand-in\", \"expiresOn\": \"2099-01-01 00:00:00.000000\","
                " \"tokenType\": \"Bearer\"}'\n")
    os.chmod(az, 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "UC_"))}
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    r = cli(a, env, "info", f"az://{CONTAINER}/tables/{name}", "-o", "azure_storage_account_name=devstoreaccount1",
            "-o", f"azure_storage_endpoint={a.azure}", "-o", "azure_allow_http=true")
    said = open(calls).read() if os.path.exists(calls) else ""
    check("account get-access-token" in said and "https://storage.azure.com" in said,
          f"the Azure CLI login is asked for a storage token ({said!r}; {r.stderr.strip()[:200]})")
    print("azure cli: with no Azure credential configured, `az account get-access-token` is used", flush=True)


def partitioned(root):
    return any("=" in d for d in os.listdir(root))


def comparable(cmd, out):
    """The parts of an answer that do not depend on where the table is stored."""
    if cmd == "info":
        doc = json.loads(out)
        for k in ("location", "table", "url", "io"):
            doc.pop(k, None)
        return doc
    if cmd == "files":
        doc = json.loads(out)
        rows = doc["files"] if isinstance(doc, dict) and "files" in doc else doc
        return sorted(json.dumps(r, sort_keys=True) for r in rows)
    if cmd == "history":
        # a commit without commitInfo is dated by its file (the copy's upload time)
        return [(h.get("version"), h.get("operation")) for h in json.loads(out)]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--azure", required=True, help="azurite endpoint incl. /devstoreaccount1")
    ap.add_argument("--tables", nargs="+", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="uc-check-")
    try:
        run(a, tmp)
    finally:
        for p in procs:
            p.kill()
    print(f"unity catalog: {checks} checks, {len(failures)} failed")
    sys.exit(1 if failures else 0)


def run(a, tmp):
    tables = {os.path.basename(t.rstrip("/")): t for t in a.tables}
    names = list(tables)
    moto, aws, reader = moto_with_auth(tmp, tables)
    corpus = os.path.join(tmp, "corpus")
    os.makedirs(os.path.join(corpus, "tables"))
    for n, root in tables.items():
        os.symlink(os.path.abspath(root), os.path.join(corpus, "tables", n))
    stores.azure(a.azure, CONTAINER, corpus, names, private=True)
    uc = start_catalog(tmp, catalog_config(names, aws), 600, "main")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AZURE_", "UC_", "DATABRICKS_"))}
    env.update(UC_ENDPOINT=uc, UC_TOKEN=TOKEN, AWS_ENDPOINT_URL=moto, AWS_ALLOW_HTTP="true",
               AWS_REGION="us-east-1")
    # the user's own (wrong) keys must not be used for a catalog table: the vended ones are
    env.update(AWS_ACCESS_KEY_ID="not-the-users-key", AWS_SECRET_ACCESS_KEY="nope")
    azure_opts = ["-o", f"azure_storage_endpoint={a.azure}", "-o", "azure_allow_http=true"]

    # every table, both stores, five commands: equal to the local directory. moto's SigV4
    # check refuses any listing and any key with '=' even when boto3 signs it (checked:
    # SignatureDoesNotMatch), so on moto the log is found by name (as with a key without
    # s3:ListBucket) and partitioned tables' data files are read on azurite only
    skipped = 0
    for n in names:
        for schema in ("s3", "azure"):
            name = f"uc://main.{schema}.{uc_name(n)}"
            for cmd, extra in (("info", ["--json"]), ("schema", ["--json"]), ("files", ["--json"]),
                               ("history", ["--json"]), ("scan", ["--limit", "1000"])):
                opts = azure_opts if schema == "azure" else []
                if schema == "s3" and cmd == "scan" and partitioned(tables[n]):
                    skipped += 1
                    continue
                got = cli(a, env, cmd, name, *extra, *opts)
                want = cli(a, env, cmd, tables[n], *extra)
                ok = got.returncode == 0 and want.returncode == 0 and \
                    comparable(cmd, got.stdout) == comparable(cmd, want.stdout)
                check(ok, f"{cmd} {name} equals the local table ({got.stderr.strip()[:300]})")
    print(f"tables: {len(names)} x 2 stores x 5 commands through uc:// equal to the direct reads,"
          f" less {skipped} scans of partitioned tables on moto ({stats(uc)['vends']} credentials vended)",
          flush=True)

    # each catalog error has its message
    bad_token = dict(env, UC_TOKEN="wrong")
    for name, want, e in (
        ("uc://main.s3.missing", "was not found", env),
        ("uc://main.errors.secret_tbl", "SELECT", env),
        ("uc://main.noext.demo", "EXTERNAL USE SCHEMA", env),
        ("uc://main.errors.parquet_tbl", "not Delta", env),
        ("uc://main.errors.a_view", "is a view", env),
        ("uc://main.s3.demo", "refused the token", bad_token),
        ("uc://main.s3", "it holds uc://main.s3.", env),
        ("uc://main", "uc://main.azure", env),
    ):
        r = cli(a, e, "info", name)
        check(r.returncode in range(1, 8) and want in r.stderr, f"info {name}: expected {want!r} (exit {r.returncode}), got {r.stderr.strip()[:300]}")
    r = cli(a, dict(env, UC_ENDPOINT="http://uc.example.com"), "info", "uc://main.s3.demo")
    check(r.returncode in range(1, 8) and "in clear" in r.stderr, f"a plain-http catalog gets no token: {r.stderr.strip()[:200]}")
    r = cli(a, env, "catalog", "uc://main", "--json")
    listed = [e["name"] for e in json.loads(r.stdout)] if r.returncode == 0 else []
    check(listed == ["uc://main.azure", "uc://main.errors", "uc://main.noext", "uc://main.s3"],
          f"catalog uc://main lists its schemas: {listed} {r.stderr[:200]}")
    r = cli(a, env, "catalog", "uc://main.errors")
    check(r.returncode == 0 and "VIEW" in r.stdout and "PARQUET" in r.stdout, f"catalog lists tables: {r.stdout}")
    print("errors: 9 catalog answers give their messages; catalogs and schemas list", flush=True)

    aws_profiles(a, tmp, moto, reader, tables)
    azure_cli_login(a, tmp, names[0])

    # credentials that expire mid-session are replaced: azurite refuses an expired SAS
    short = start_catalog(tmp, catalog_config(names, aws), 6, "short")
    port = free_port()
    serve_env = dict(env, UC_ENDPOINT=short)
    log = open(os.path.join(tmp, "serve.log"), "w")
    start([a.cli, "serve", f"uc://main.azure.{uc_name(names[0])}", f"uc://main.s3.{uc_name(names[0])}",
           "--port", str(port), "--stop-after", "120", *azure_opts], env=serve_env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    wait_for(base + "/v1/tables")

    def relay_read(table):
        q = urllib.parse.urlencode({"table": table, "path": "_delta_log/00000000000000000000.json"})
        try:
            with urllib.request.urlopen(f"{base}/v1/object?{q}", timeout=30) as r:
                return r.status, len(r.read())
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()[:200]

    for schema in ("azure", "s3"):
        table = f"uc://main.{schema}.{uc_name(names[0])}"
        first = relay_read(table)
        time.sleep(7)  # past the first credentials' expiry
        second = relay_read(table)
        check(first[0] == 200 and second == first, f"{table} through the relay after expiry: {first} then {second}")
    vends = stats(short)["vends"]
    check(vends >= 4, f"credentials were vended again mid-session ({vends} vends for 2 tables)")
    print(f"refresh: relay reads of uc:// tables on azurite and moto succeed across credential expiry"
          f" (ttl 6 s; {vends} vends)", flush=True)


if __name__ == "__main__":
    main()

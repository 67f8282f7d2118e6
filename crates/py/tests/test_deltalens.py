"""deltalens for Python, tested on the conformance corpus (../shared/conformance: every
readable version with expected rows equals them), against deltalake's answers on tables it
writes, through the Arrow PyCapsule interface (pyarrow, polars, DuckDB), and for its errors.

Run by scripts/py-test on the wheel installed into a fresh virtual environment.
"""
import datetime
import hashlib
import json
import os
import pathlib
import subprocess
import time

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import deltalens
from canonical import lines

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = pathlib.Path(os.environ.get("DELTALENS_CONFORMANCE", ROOT.parent / "shared" / "conformance")).resolve()
DEMO = ROOT / "tests" / "fixtures" / "demo"
CLI = os.environ.get("DELTALENS_BIN", str(ROOT / "target" / "debug" / "deltalens"))
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir() and not os.environ.get("DELTALENS_REQUIRE_CORPUS"),
    reason="no conformance corpus",
)


def corpus_tables():
    if not CORPUS.is_dir():
        return []
    return [t["name"] for t in json.loads((CORPUS / "tables.json").read_text())]


def test_the_module_is_the_installed_wheel():
    # not a source tree on the path: what pip installed into the fresh environment
    assert "site-packages" in deltalens.__file__, deltalens.__file__
    assert deltalens.__version__


@needs_corpus
@pytest.mark.parametrize("name", corpus_tables())
def test_every_version_with_expected_rows_reads_them(name):
    meta = next(t for t in json.loads((CORPUS / "tables.json").read_text()) if t["name"] == name)
    t = deltalens.open(str(CORPUS / "tables" / name))
    if meta.get("expect_error"):
        with pytest.raises(deltalens.DeltaLensError) as e:
            t.scan().to_arrow()
        assert e.value.code and str(e.value)
        return
    exp = CORPUS / "expected" / name
    versions = json.loads((exp / "versions.json").read_text())["versions"]
    checked = 0
    for v, e in versions.items():
        if e.get("error"):
            with pytest.raises(deltalens.DeltaLensError):
                t.scan(version=int(v)).to_arrow()
            continue
        if not e.get("data_file"):
            continue
        want = (exp / e["data_file"]).read_text()
        got = "".join(lines(pa.table(t.scan(version=int(v)))))
        assert hashlib.sha256(got.encode()).hexdigest() == e["sha256"] or got == want, f"{name} v{v}"
        checked += 1
    assert checked or all(e.get("error") for e in versions.values())


CLI_DOCS = [
    ("info", lambda t: t.info()),
    ("schema", lambda t: t.schema()),
    ("history", lambda t: t.history()),
    ("files", lambda t: t.files()),
]


@needs_corpus
@pytest.mark.parametrize("name", ["dat_basic_partitioned", "kr_cdf-table-with-dv", "dr_checkpoint-v2-table", "golden_dv-with-columnmapping"])
def test_documents_equal_the_cli_json(name):
    path = str(CORPUS / "tables" / name)
    t = deltalens.open(path)
    for cmd, call in CLI_DOCS:
        cli = json.loads(subprocess.run([CLI, cmd, path, "--json"], capture_output=True, check=True, text=True).stdout)
        assert call(t) == cli, f"{name} {cmd}"


def test_scan_options_and_time_travel_on_the_demo():
    t = deltalens.open(str(DEMO))
    assert t.url == str(DEMO)
    v = t.version()
    assert v == t.info()["version"]
    rows = t.scan(columns=["user_id", "price"], filter="price > 50", limit=7)
    assert rows.columns == ["user_id", "price"]
    got = rows.to_arrow()
    assert got.num_rows == 7 and all(p > 50 for p in got.column("price").to_pylist())
    # the columns as one string, as in the CLI and the HTTP API
    assert t.scan(columns="user_id,price", limit=3).to_arrow().column_names == ["user_id", "price"]
    # TIMESTAMP AS OF (the demo's commits share one modification time: see the deltalake
    # test for one version after another)
    # a time before the first commit or after the last is an error, as in Spark
    for at, says in (("2001-01-01T00:00:00Z", "before the earliest"), (datetime.datetime.now(datetime.timezone.utc), "after the latest")):
        with pytest.raises(deltalens.DeltaLensError) as e:
            t.scan(timestamp=at)
        assert says in str(e.value)


def write_with_deltalake(path):
    """A table deltalake writes: partitioned, four versions (append, append, delete, overwrite)."""
    from deltalake import DeltaTable, write_deltalake

    def batch(ids, part):
        return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids], "p": [part] * len(ids)})

    write_deltalake(path, batch(range(0, 50), "a"), partition_by=["p"])
    write_deltalake(path, batch(range(50, 80), "b"), mode="append")
    DeltaTable(path).delete("id < 10")
    write_deltalake(path, batch(range(100, 105), "c"), mode="overwrite")
    return DeltaTable


def test_equal_to_deltalake_at_every_version(tmp_path):
    DeltaTable = write_with_deltalake(str(tmp_path))
    t = deltalens.open(str(tmp_path))
    assert t.version() == DeltaTable(str(tmp_path)).version() == 3
    assert len(t.history()) == len(DeltaTable(str(tmp_path)).history())
    for v in range(4):
        ours = pa.table(t.scan(version=v)).sort_by("id")
        theirs = DeltaTable(str(tmp_path), version=v).to_pyarrow_table().sort_by("id")
        assert ours.select(["id", "name", "p"]).to_pylist() == theirs.select(["id", "name", "p"]).to_pylist(), f"v{v}"
    # TIMESTAMP AS OF: a commit's time is its log file's modification time (no in-commit
    # timestamps), the version deltalake's load_as_version picks too
    for v in range(4):
        # the commit's time in whole milliseconds, as Delta keeps it (a float st_mtime
        # turned into a datetime can round up past the millisecond: a time after the
        # latest commit, which Spark and deltalens refuse)
        ms = (tmp_path / "_delta_log" / f"{v:020}.json").stat().st_mtime_ns // 1_000_000
        at = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
        theirs = DeltaTable(str(tmp_path))
        theirs.load_as_version(at)
        assert t.info(timestamp=at)["version"] == theirs.version(), f"v{v} at {at}"
        assert pa.table(t.scan(timestamp=at)).sort_by("id").to_pylist() == pa.table(t.scan(version=theirs.version())).sort_by("id").to_pylist()
    # partition pruning by filter, as deltalake's partition filter
    b = t.scan(version=2, filter="p = 'b'").to_arrow()
    assert sorted(b.column("id").to_pylist()) == list(range(50, 80))


def test_the_arrow_stream_goes_to_pyarrow_polars_and_duckdb():
    t = deltalens.open(str(DEMO))
    want = t.scan().to_arrow()
    assert pa.table(t.scan()).equals(want)
    assert pa.RecordBatchReader.from_stream(t.scan()).read_all().equals(want)
    assert pl.DataFrame(t.scan()).height == want.num_rows
    assert t.scan().to_polars().height == want.num_rows
    assert pa.schema(t.scan()) == want.schema
    rows = t.scan(columns=["brand", "price"])
    n = duckdb.sql("SELECT count(*) FROM rows").fetchone()[0]
    assert n == want.num_rows
    # batch by batch
    batches = list(t.scan())
    assert batches and sum(b.num_rows for b in batches) == want.num_rows
    assert all(isinstance(b, pa.RecordBatch) for b in batches)


def test_queries_and_the_change_feed():
    t = deltalens.open(str(DEMO))
    q = t.query(f"SELECT brand, COUNT(*) AS n FROM '{DEMO}' GROUP BY brand ORDER BY n DESC LIMIT 3").to_arrow()
    assert q.column_names == ["brand", "n"] and q.num_rows == 3
    cdf_table = ROOT / "tests" / "fixtures" / "cdf"
    c = deltalens.open(str(cdf_table))
    feed = c.changes(starting_version=0).to_arrow()
    assert {"_change_type", "_commit_version", "_commit_timestamp"} <= set(feed.column_names)
    cli = subprocess.run([CLI, "changes", str(cdf_table), "--from", "0", "--format", "jsonl"], capture_output=True, check=True, text=True).stdout
    assert feed.num_rows == len(cli.splitlines())
    d = c.diff(0, c.version())
    assert isinstance(d, dict) and d


@needs_corpus
def test_change_feed_equals_the_corpus():
    name = "kr_cdf-table-with-dv"
    exp = json.loads((CORPUS / "expected" / name / "cdf.json").read_text())
    t = deltalens.open(str(CORPUS / "tables" / name))
    first = min(int(v) for v in exp["counts_by_version"])
    feed = t.changes(starting_version=first).to_arrow()
    by_version = {}
    for v, kind in zip(feed.column("_commit_version").to_pylist(), feed.column("_change_type").to_pylist()):
        by_version.setdefault(str(v), {}).setdefault(kind, 0)
        by_version[str(v)][kind] += 1
    assert by_version == {v: {k: n for k, n in c.items() if n} for v, c in exp["counts_by_version"].items() if any(c.values())}


def test_errors_name_their_code():
    with pytest.raises(deltalens.DeltaLensError) as e:
        deltalens.open(str(ROOT / "no-such-table")).version()
    assert e.value.code == "invalid_table_url" and "no-such-table" in str(e.value), e.value.code
    empty = ROOT / "target" / "py-empty-dir"
    empty.mkdir(parents=True, exist_ok=True)
    with pytest.raises(deltalens.DeltaLensError) as e:
        deltalens.open(str(empty)).version()
    assert e.value.code == "not_a_table", e.value.code
    t = deltalens.open(str(DEMO))
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.scan(columns=["no_such_column"])
    assert "no_such_column" in str(e.value)
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.scan(filter="price >")
    assert e.value.code == "invalid_parameter"
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.query("SELECT * FROM 's3://elsewhere/t'")
    assert e.value.code == "table_not_allowed"
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.scan(timestamp=datetime.datetime(2024, 1, 1))
    assert e.value.code == "invalid_parameter" and "time zone" in str(e.value)
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.changes()
    assert e.value.code == "invalid_parameter"
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.scan(version=10**6)
    assert e.value.code
    with pytest.raises(deltalens.DeltaLensError) as e:
        deltalens.open(str(DEMO), storage_options={"aws_region": 1.5})
    assert e.value.code == "invalid_parameter"
    # a stream is read once
    rows = t.scan(limit=1)
    rows.to_arrow()
    with pytest.raises(deltalens.DeltaLensError) as e:
        rows.to_arrow()
    assert e.value.code == "rows_consumed"


def test_the_rows_budget_holds():
    t = deltalens.open(str(DEMO), max_rows=10)
    assert t.scan(limit=10).to_arrow().num_rows == 10
    with pytest.raises(deltalens.DeltaLensError) as e:
        t.scan().to_arrow()
    assert e.value.code == "rows_budget_exceeded" and "10" in str(e.value)


def scan_threads():
    return sum(1 for c in pathlib.Path("/proc/self/task").glob("*/comm") if c.read_text().strip() == "deltalens-scan")


def test_a_stream_left_unread_stops_its_scan():
    t = deltalens.open(ROOT / "tests" / "fixtures" / "partitioned")  # a pathlib.Path too
    for _ in range(20):
        rows = t.scan()
        next(iter(rows))
        del rows
    for _ in range(50):
        if scan_threads() == 0:
            break
        time.sleep(0.1)
    assert scan_threads() == 0
    # the table still answers
    assert t.version() >= 0


def test_an_error_ends_the_rows_for_every_reader():
    t = deltalens.open(str(DEMO), max_rows=10)
    rows = t.scan()
    with pytest.raises(deltalens.DeltaLensError) as first:
        for _ in rows:
            pass
    assert first.value.code == "rows_budget_exceeded"
    # the same error again, not an empty or short table
    with pytest.raises(deltalens.DeltaLensError) as again:
        rows.to_arrow()
    assert again.value.code == "rows_budget_exceeded"
    # read to the end: iteration stops, and the stream is read once
    ok = t.scan(limit=5)
    assert sum(b.num_rows for b in ok) == 5
    assert list(ok) == []


def _child_reads(path, q):
    q.put(deltalens.open(path).scan().to_arrow().num_rows)


def test_a_forked_process_reads_with_its_own_runtime():
    import multiprocessing

    t = deltalens.open(str(DEMO))
    want = t.scan().to_arrow().num_rows  # the parent's runtime exists before the fork
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_reads, args=(str(DEMO), q))
    p.start()
    p.join(60)
    assert p.exitcode == 0, "the child hung or failed"
    assert q.get(timeout=5) == want


@needs_corpus
def test_a_shared_table_reads_like_its_directory(tmp_path):
    """A Delta Sharing table, `<profile file>#share.schema.table`, opened through the test
    sharing server (tests/harness/sharing_server.py) on 127.0.0.1: its rows, at the latest
    version and at version 0, equal its directory's (deletion vectors included), and at a
    timestamp (the server names the version: a copy of the demo table whose commits are dated
    a day apart, shared with those times); an unknown table and a wrong token are
    DeltaLensErrors naming their code."""
    import shutil
    import sys

    dv = CORPUS / "tables" / "dk_basic-dv-with-checkpoint"
    timed = tmp_path / "timed"
    shutil.copytree(DEMO, timed)
    base = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    commits = sorted((timed / "_delta_log").glob("*[0-9].json"))
    for i, c in enumerate(commits):
        t = (base + datetime.timedelta(days=i)).timestamp()
        os.utime(c, (t, t))
    config = {"shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [
        {"name": "demo", "location": str(DEMO)}, {"name": "dv", "location": str(dv)},
        {"name": "timed", "location": str(timed), "timestamps": "mtime"}]}]}]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "harness" / "sharing_server.py"), "--config",
         str(tmp_path / "config.json"), "--token", "py-token", "--port-file", str(port_file),
         "--stop-after", "120"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{port_file.read_text().strip()}/delta-sharing"
        profile = tmp_path / "config.share"
        profile.write_text(json.dumps({"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": "py-token"}))
        for name, path in (("demo", DEMO), ("dv", dv)):
            shared, local = deltalens.open(f"{profile}#s.sc.{name}"), deltalens.open(str(path))
            assert shared.version() == local.version()
            for version in (None, 0):
                got = shared.scan(version=version).to_arrow().to_pylist()
                want = local.scan(version=version).to_arrow().to_pylist()
                key = lambda r: json.dumps(r, sort_keys=True, default=str)  # noqa: E731
                assert sorted(got, key=key) == sorted(want, key=key), (name, version)
        shared, local = deltalens.open(f"{profile}#s.sc.timed"), deltalens.open(str(timed))
        key = lambda r: json.dumps(r, sort_keys=True, default=str)  # noqa: E731
        for days in (1, 2.5, len(commits) - 1):
            at = base + datetime.timedelta(days=days)
            assert shared.info(timestamp=at)["version"] == local.info(timestamp=at)["version"] == int(days)
            got = shared.scan(timestamp=at.isoformat()).to_arrow().to_pylist()
            want = local.scan(timestamp=at.isoformat()).to_arrow().to_pylist()
            assert sorted(got, key=key) == sorted(want, key=key), days
            sql = "SELECT COUNT(*) AS n FROM '{}' TIMESTAMP AS OF '" + at.isoformat() + "'"
            got = shared.query(sql.format(f"{profile}#s.sc.timed")).to_arrow().to_pylist()
            assert got == local.query(sql.format(timed)).to_arrow().to_pylist(), days
        with pytest.raises(deltalens.DeltaLensError):
            shared.info(timestamp=base - datetime.timedelta(days=1))
        with pytest.raises(deltalens.DeltaLensError) as e:
            deltalens.open(f"{profile}#s.sc.nope")
        assert e.value.code == "not_found" and "nope" in str(e.value)
        profile.write_text(json.dumps({"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": "wrong"}))
        with pytest.raises(deltalens.DeltaLensError) as e:
            deltalens.open(f"{profile}#s.sc.demo")
        assert e.value.code == "storage_permission_denied"
    finally:
        server.kill()

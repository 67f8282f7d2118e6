#!/usr/bin/env python3
"""A short bounded load test of the worker on 127.0.0.1 (keep-alive connections, one per
client thread): a mix of `GET /v1/scan?limit=100`, `GET /v1/info` and an aggregate
`POST /v1/query` on R2 tables. Prints requests/s, p50/p99 latency and errors; fails on
any error.

  load.py WORKER_URL SECONDS [CLIENTS]
"""
import http.client
import os
import sys
import threading
import time
from urllib.parse import quote, urlparse

url = urlparse(sys.argv[1])
assert url.hostname == "127.0.0.1", "load tests only run against 127.0.0.1"
seconds = min(float(sys.argv[2]), 60.0)
clients = int(sys.argv[3]) if len(sys.argv) > 3 else 8
token = os.environ.get("DELTALENS_WORKER_TOKEN", "")
auth = {"Authorization": f"Bearer {token}"}

REQUESTS = [
    ("GET", "/v1/scan?table=" + quote("r2://TABLES/demo", safe="") + "&limit=100&format=jsonl", None),
    ("GET", "/v1/info?table=" + quote("r2://TABLES/checkpointed", safe=""), None),
    ("POST", "/v1/query?format=json",
     "SELECT brand, COUNT(*), SUM(price) FROM 'r2://TABLES/demo' GROUP BY brand ORDER BY 2 DESC"),
]

lat, errors, lock = [], [], threading.Lock()
deadline = time.monotonic() + seconds


def client(i):
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    n = i
    while time.monotonic() < deadline:
        method, path, body = REQUESTS[n % len(REQUESTS)]
        n += 1
        t = time.perf_counter()
        try:
            c.request(method, path, body=body, headers=auth)
            r = c.getresponse()
            r.read()
            ok = r.status == 200
        except Exception as e:  # connection trouble counts as an error
            ok = False
            c.close()
            c = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
            r = e
        dt = time.perf_counter() - t
        with lock:
            lat.append(dt)
            if not ok:
                errors.append(getattr(r, "status", str(r)))
    c.close()


start = time.monotonic()
threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.monotonic() - start
lat.sort()
pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000
print(f"load: {len(lat)} requests in {elapsed:.1f} s with {clients} clients: "
      f"{len(lat) / elapsed:.1f} req/s, p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, "
      f"{len(errors)} errors")
if errors or not lat:
    print("errors:", errors[:10])
    sys.exit(1)

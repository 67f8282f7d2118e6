#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 proxy for the table stores the tests start (nginx, moto S3,
azurite), on 127.0.0.1 only, stdlib only.

Every request is forwarded with its method, target (path and query: SAS tokens too) and all
its headers, Host included: SigV4 signs Host, so the client's signature stays the one the
client computed for the proxy's address (moto and azurite do not check it; azurite's SAS
does not cover Host). One fresh upstream connection per request; the client's connection
is kept alive. The answer is then faulted according to the mode:

  pass                 forward unchanged (a recording pass-through)
  5xx-then-ok          the first N requests (--times, default 2) per method+target get 503
  reset-mid-body       headers and half the body, then a TCP RST
  short-body           Content-Length of the whole body, half of it sent, then FIN
  wrong-content-range  a ranged GET answered 206 with the right length from another offset
                       and a Content-Range naming that other offset (not the requested one);
                       a range covering the whole object keeps its bytes and gets a label
                       that does not match the request (see _moved_range)
  range-ignored        Range (and If-Range) stripped: 200 with the whole object
  stall                the request is read and never answered (--stall seconds, then close)
  stall-mid-body       headers and half the body, then nothing for --stall seconds
  all-200              every request, existing path or not, gets 200 and an HTML page
                       (upstream is never contacted)
  403-on-list          listings (S3 list-type=2 / any S3 GET on a bucket with a list query,
                       Azure comp=list, WebDAV PROPFIND) get 403 with an AccessDenied body

OPTIONS (CORS preflights) always pass; answers the proxy makes up (503, 403, the HTML page,
502, and the control answers below) carry Access-Control-Allow-Origin: * when the request
has an Origin, so a browser test sees the status rather than a CORS failure.

With --times N > 0 a mode faults only the first N requests per method+target (5xx-then-ok
defaults to 2, the others to 0 = every request). Bodies of fewer than 2 bytes and HEAD
answers are not truncated (there is nothing to cut): `stats()` counts what was faulted.

Control (same port): GET /__faultproxy/mode?name=MODE[&times=N] switches the mode (and
resets the per-target counts), GET /__faultproxy/reset?table=NAME resets the counts of one
table's targets (paths holding NAME/ or NAME%2F), GET /__faultproxy/stats returns JSON
counts. With --no-store every answer says Cache-Control: no-store (for browsers).

In Python:
    from faultproxy import start_proxy
    p = start_proxy("http://127.0.0.1:9000", "reset-mid-body")   # serving on p.port
    ...; p.set_mode("pass"); p.reset_counts(lambda key: "t1/" in key); p.stats(); p.stop()
From a shell (for scripts/browser-test, scripts/worker-test):
    faultproxy.py --upstream http://127.0.0.1:9000 --mode stall [--port 0] [--lifetime 3600]
        [--stall 90] [--times N] [--log FILE] [--no-store]
    (prints "faultproxy 127.0.0.1:PORT -> UPSTREAM mode MODE" once listening)

Bounded: the proxy stops itself after --lifetime seconds (default 3600), every socket read
has a timeout, a stall lasts --stall seconds (default 90) and bodies are capped at 256 MiB.
"""
import argparse
import asyncio
import collections
import json
import socket
import struct
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

MODES = [
    "pass",
    "5xx-then-ok",
    "reset-mid-body",
    "short-body",
    "wrong-content-range",
    "range-ignored",
    "stall",
    "stall-mid-body",
    "all-200",
    "403-on-list",
]
DEFAULT_TIMES = {"5xx-then-ok": 2}
HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
       "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"}
MAX_BODY = 256 << 20
MAX_HEAD = 1 << 20
IO_TIMEOUT = 30.0  # every socket read/connect to upstream, and a client's idle keep-alive
HTML = (b"<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>It works!</h1>"
        b"<p>This is not a Delta table, only a page every path answers with.</p></body></html>\n")


class BadRequest(Exception):
    pass


async def read_head(reader, timeout):
    data = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    lines = data[:-4].decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if ":" not in line:
            raise BadRequest(f"bad header line {line!r}")
        k, v = line.split(":", 1)
        headers.append((k.strip(), v.strip()))
    return lines[0], headers


def get(headers, name):
    name = name.lower()
    for k, v in headers:
        if k.lower() == name:
            return v
    return None


async def read_body(reader, headers, timeout, until_eof=False):
    if (get(headers, "transfer-encoding") or "").lower().endswith("chunked"):
        out = bytearray()
        while True:
            size_line = await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                # trailers until the empty line
                while (await asyncio.wait_for(reader.readuntil(b"\r\n"), timeout)) != b"\r\n":
                    pass
                return bytes(out)
            if len(out) + size > MAX_BODY:
                raise BadRequest("body too large")
            out += await asyncio.wait_for(reader.readexactly(size), timeout)
            await asyncio.wait_for(reader.readexactly(2), timeout)
    n = get(headers, "content-length")
    if n is not None:
        n = int(n)
        if n > MAX_BODY:
            raise BadRequest("body too large")
        return await asyncio.wait_for(reader.readexactly(n), timeout) if n else b""
    if until_eof:
        out = bytearray()
        while True:
            chunk = await asyncio.wait_for(reader.read(1 << 16), timeout)
            if not chunk:
                return bytes(out)
            out += chunk
            if len(out) > MAX_BODY:
                raise BadRequest("body too large")
    return b""


def parse_content_range(v):
    # "bytes a-b/size"
    try:
        unit, rest = v.split(" ", 1)
        span, size = rest.split("/", 1)
        a, b = span.split("-", 1)
        return int(a), int(b), int(size)
    except (ValueError, AttributeError):
        return None


def is_list(method, target):
    if method == "PROPFIND":
        return True
    q = parse_qs(urlsplit(target).query)
    if q.get("comp") == ["list"]:
        return True  # Azure List Blobs (restype=container&comp=list)
    if "list-type" in q:
        return True  # S3 ListObjectsV2
    # S3 ListObjects v1: GET /bucket?prefix=... (a bucket path: one segment)
    path = urlsplit(target).path.strip("/")
    return method == "GET" and path and "/" not in path and bool({"prefix", "delimiter", "marker"} & q.keys())


class Response:
    def __init__(self, status, reason, headers, body):
        self.status, self.reason, self.headers, self.body = status, reason, headers, body


class FaultProxy:
    """One listening proxy in front of one upstream. Thread-safe control methods."""

    def __init__(self, upstream, mode="pass", *, times=None, stall_seconds=90.0,
                 lifetime=3600.0, port=0, log_path=None, name=None, no_store=False):
        u = urlsplit(upstream)
        if u.scheme != "http" or u.hostname not in ("127.0.0.1", "localhost"):
            raise ValueError(f"upstream must be http://127.0.0.1:PORT, got {upstream}")
        self.upstream = (u.hostname, u.port or 80)
        self.upstream_url = f"http://{u.hostname}:{u.port or 80}"
        self.stall_seconds = float(stall_seconds)
        self.lifetime = float(lifetime)
        self.req_port = port
        self.no_store = no_store
        self.name = name or upstream
        self.port = None
        self._lock = threading.Lock()
        self._log = open(log_path, "a", buffering=1) if log_path else None
        self._counts = collections.Counter()
        self._methods = collections.Counter()
        self._faulted = collections.Counter()
        self.records = collections.deque(maxlen=20000)
        self._loop = None
        self._server = None
        self._thread = None
        self._ready = threading.Event()
        self._writers = set()
        self.set_mode(mode, times)

    # ---- control -------------------------------------------------------------------
    def set_mode(self, mode, times=None):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
        with self._lock:
            self.mode = mode
            self.times = DEFAULT_TIMES.get(mode, 0) if times is None else int(times)
            self._counts.clear()

    def reset_counts(self, match):
        """Forget the per-target counts (of --times) of the targets `match(key)` accepts
        (key: "METHOD TARGET"): the next requests to them are faulted again."""
        with self._lock:
            for key in [k for k in self._counts if match(k)]:
                del self._counts[key]

    def stats(self):
        with self._lock:
            return {
                "mode": self.mode,
                "times": self.times,
                "requests": sum(self._methods.values()),
                "methods": dict(self._methods),
                "faulted": dict(self._faulted),
            }

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    # ---- lifecycle -----------------------------------------------------------------
    def start(self):
        self._thread = threading.Thread(target=self._run, name=f"faultproxy-{self.name}",
                                        daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fault proxy did not start")
        if self.port is None:
            raise RuntimeError("fault proxy could not bind")
        return self

    def _run(self):
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except OSError as e:
            print(f"faultproxy: {e}", file=sys.stderr)
        finally:
            # stalled handlers still sleeping: cancel them before the loop goes
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    async def _serve(self):
        self._stop = asyncio.Event()
        try:
            self._server = await asyncio.start_server(
                self._client, "127.0.0.1", self.req_port, limit=MAX_HEAD, backlog=256)
        except OSError:
            self._ready.set()
            raise
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await asyncio.wait_for(self._stop.wait(), self.lifetime)
        except asyncio.TimeoutError:
            print(f"faultproxy {self.port}: lifetime {self.lifetime:.0f} s over, stopping",
                  file=sys.stderr)
        self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        await asyncio.sleep(0)

    def stop(self):
        if self._loop and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:
                pass
        if self._thread:
            self._thread.join(10)
        if self._log:
            self._log.close()
            self._log = None

    def wait(self):
        """Block until the lifetime is over (the CLI's foreground mode)."""
        while self._thread.is_alive():
            self._thread.join(1)

    # ---- bookkeeping ---------------------------------------------------------------
    def _applies(self, method, target):
        with self._lock:
            if self.times <= 0:
                return True
            key = f"{method} {target}"
            self._counts[key] += 1
            return self._counts[key] <= self.times

    def _record(self, method, target, status, fault):
        rec = {"t": round(time.time(), 3), "method": method, "target": target,
               "status": status, "fault": fault, "mode": self.mode}
        with self._lock:
            self._methods[method] += 1
            if fault:
                self._faulted[fault] += 1
            self.records.append(rec)
            if self._log:
                self._log.write(json.dumps(rec) + "\n")

    # ---- upstream ------------------------------------------------------------------
    async def _upstream(self, method, target, headers, body):
        r, w = await asyncio.wait_for(asyncio.open_connection(*self.upstream, limit=MAX_HEAD),
                                      IO_TIMEOUT)
        try:
            lines = [f"{method} {target} HTTP/1.1"]
            for k, v in headers:
                if k.lower() in HOP or k.lower() == "content-length":
                    continue
                lines.append(f"{k}: {v}")
            if body or method not in ("GET", "HEAD", "OPTIONS", "DELETE"):
                lines.append(f"Content-Length: {len(body)}")
            lines.append("Connection: close")
            w.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await asyncio.wait_for(w.drain(), IO_TIMEOUT)
            while True:
                status_line, rh = await read_head(r, IO_TIMEOUT)
                parts = status_line.split(" ", 2)
                status = int(parts[1])
                if status >= 200 or status == 101:
                    break  # skip 1xx interim answers
            reason = parts[2] if len(parts) > 2 else ""
            if method == "HEAD" or status in (204, 304):
                rbody = b""
            else:
                rbody = await read_body(r, rh, IO_TIMEOUT, until_eof=True)
            return Response(status, reason, rh, rbody)
        finally:
            w.close()

    # ---- client side ---------------------------------------------------------------
    async def _client(self, reader, writer):
        self._writers.add(writer)
        writer.transport.set_write_buffer_limits(0)
        try:
            while True:
                try:
                    request_line, headers = await read_head(reader, IO_TIMEOUT * 2)
                except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError,
                        asyncio.LimitOverrunError):
                    return
                try:
                    method, target, version = request_line.split(" ", 2)
                    body = await read_body(reader, headers, IO_TIMEOUT)
                except (ValueError, BadRequest, asyncio.IncompleteReadError,
                        asyncio.TimeoutError) as e:
                    await self._send(writer, Response(400, "Bad Request", [], str(e).encode()),
                                     "GET")
                    return
                close = (get(headers, "connection") or "").lower() == "close" or \
                    version == "HTTP/1.0"
                keep = await self._handle(writer, method, target, headers, body)
                if close or not keep:
                    return
        except (ConnectionError, asyncio.TimeoutError, OSError):
            return
        except asyncio.CancelledError:
            # the proxy stops (lifetime over or stop()) while a stall sleeps
            writer.transport.abort()
            return
        finally:
            self._writers.discard(writer)
            if not writer.transport.is_closing():
                writer.close()

    async def _send(self, writer, resp, method, cut=None, keep_length=False):
        """Write `resp`; with `cut` only the first `cut` body bytes (Content-Length stays
        the whole body's)."""
        hs = [(k, v) for k, v in resp.headers
              if k.lower() not in HOP and (keep_length or k.lower() != "content-length")
              and not (self.no_store and k.lower() in ("cache-control", "expires"))]
        if self.no_store:
            hs.append(("Cache-Control", "no-store"))
        if not keep_length:
            hs.append(("Content-Length", str(len(resp.body))))
        head = f"HTTP/1.1 {resp.status} {resp.reason}\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in hs) + "\r\n"
        body = b"" if method == "HEAD" else resp.body
        if cut is not None:
            body = body[:cut]
        writer.write(head.encode("latin-1") + body)
        await asyncio.wait_for(writer.drain(), IO_TIMEOUT)

    def _control(self, target):
        u = urlsplit(target)
        q = parse_qs(u.query)
        if u.path == "/__faultproxy/mode" and "name" in q:
            try:
                self.set_mode(q["name"][0], q.get("times", [None])[0])
            except ValueError as e:
                return Response(400, "Bad Request", [("Content-Type", "text/plain")],
                                str(e).encode())
        if u.path == "/__faultproxy/reset" and "table" in q:
            t = q["table"][0]
            self.reset_counts(lambda k: any(t + sep in k for sep in ("/", "%2F", "%2f")))
        return Response(200, "OK", [("Content-Type", "application/json")],
                        json.dumps(self.stats()).encode())

    async def _handle(self, writer, method, target, headers, body):
        """Answer one request; False closes the client connection."""
        if target.startswith("/__faultproxy/"):
            resp = self._control(target)
            resp.headers += self._cors_headers(headers)  # a browser test switches modes too
            await self._send(writer, resp, method)
            return True
        mode = self.mode
        fault = None
        if method == "OPTIONS":
            mode = "pass"  # CORS preflights pass: the browser then sends the faulted request
        cors = self._cors_headers(headers)
        if mode == "all-200":
            self._record(method, target, 200, "all-200")
            await self._send(writer, Response(200, "OK", [("Content-Type", "text/html")] + cors,
                                              HTML), method)
            return True
        if mode == "403-on-list" and is_list(method, target) and self._applies(method, target):
            self._record(method, target, 403, "403-on-list")
            xml = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
                   b"<Message>Access Denied (fault proxy: listing refused)</Message></Error>")
            await self._send(writer, Response(403, "Forbidden",
                                              [("Content-Type", "application/xml")] + cors, xml),
                             method)
            return True
        if mode == "stall" and self._applies(method, target):
            self._record(method, target, 0, "stall")
            await asyncio.sleep(self.stall_seconds)
            writer.transport.abort()
            return False
        if mode == "5xx-then-ok" and self._applies(method, target):
            self._record(method, target, 503, "503")
            xml = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>ServiceUnavailable'
                   b"</Code><Message>fault proxy: try again</Message></Error>")
            await self._send(writer, Response(503, "Service Unavailable",
                                              [("Content-Type", "application/xml")] + cors, xml),
                             method)
            return True
        if mode == "range-ignored" and get(headers, "range") is not None:
            headers = [(k, v) for k, v in headers if k.lower() not in ("range", "if-range")]
            fault = "range-ignored"
        try:
            resp = await self._upstream(method, target, headers, body)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError,
                BadRequest) as e:
            self._record(method, target, 502, "upstream-error")
            await self._send(writer, Response(502, "Bad Gateway",
                                              [("Content-Type", "text/plain")] + cors,
                                              f"fault proxy: upstream: {e}".encode()), method)
            return True
        n = len(resp.body)
        if mode == "wrong-content-range" and method == "GET" and resp.status == 206 \
                and get(headers, "range") and self._applies(method, target):
            moved = await self._moved_range(method, target, headers, body, resp)
            if moved is not None:
                resp, fault = moved, "wrong-content-range"
        if mode in ("reset-mid-body", "short-body", "stall-mid-body") and method != "HEAD" \
                and n >= 2 and self._applies(method, target):
            self._record(method, target, resp.status, mode)
            await self._send(writer, resp, method, cut=n // 2)
            if mode == "reset-mid-body":
                await asyncio.sleep(0.05)
                sock = writer.transport.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
            elif mode == "short-body":
                writer.close()
            else:
                await asyncio.sleep(self.stall_seconds)
                writer.transport.abort()
            return False
        if mode == "stall-mid-body" and method == "HEAD" and self._applies(method, target):
            self._record(method, target, 0, "stall")
            await asyncio.sleep(self.stall_seconds)
            writer.transport.abort()
            return False
        self._record(method, target, resp.status, fault)
        await self._send(writer, resp, method, keep_length=(method == "HEAD"))
        return True

    @staticmethod
    def _cors_headers(headers):
        """For answers the proxy makes up: let a browser page read them (the stores' own
        answers carry the stores' CORS headers)."""
        if get(headers, "origin") is None:
            return []
        return [("Access-Control-Allow-Origin", "*"),
                ("Access-Control-Expose-Headers", "Content-Range, Content-Length, ETag")]

    async def _moved_range(self, method, target, headers, body, resp):
        """The same length from another offset, labelled as that offset: or None when the
        range covers the whole object."""
        cr = parse_content_range(get(resp.headers, "content-range") or "")
        if cr is None:
            return None
        a, b, size = cr
        length = b - a + 1
        for s in (a + length, a - length, 0, size - length, a + 1, a - 1):
            if s != a and s >= 0 and s + length <= size:
                break
        else:
            # the whole object: no other offset holds as many bytes. Label the same bytes
            # as another span of a one-byte-larger object: a suffix request gets them as
            # bytes 0..L-1 of L+1 (not its suffix), a bounded one as bytes 1..L.
            rng = (get(headers, "range") or "").strip()
            if rng.startswith("bytes=-"):
                label = f"bytes 0-{length - 1}/{size + 1}"
            else:
                label = f"bytes 1-{length}/{size + 1}"
            rh = [(k, v) for k, v in resp.headers if k.lower() != "content-range"]
            rh.append(("Content-Range", label))
            return Response(206, resp.reason, rh, resp.body)
        hs = [(k, v) for k, v in headers if k.lower() != "range"]
        hs.append(("Range", f"bytes={s}-{s + length - 1}"))
        other = await self._upstream(method, target, hs, body)
        if other.status != 206 or len(other.body) != length:
            return None
        rh = [(k, v) for k, v in resp.headers if k.lower() not in ("content-range", "etag")]
        rh.append(("Content-Range", f"bytes {s}-{s + length - 1}/{size}"))
        etag = get(resp.headers, "etag")
        if etag:
            rh.append(("ETag", etag))
        return Response(206, resp.reason, rh, other.body)


def start_proxy(upstream, mode="pass", **kw):
    """Start a proxy in a background thread; returns it (`.port`, `.url`, `.set_mode()`,
    `.stats()`, `.records`, `.stop()`)."""
    return FaultProxy(upstream, mode, **kw).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT")
    ap.add_argument("--mode", default="pass", choices=MODES)
    ap.add_argument("--times", type=int, default=None,
                    help="fault only the first N requests per method+target (0: all)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--stall", type=float, default=90.0, help="seconds a stall lasts")
    ap.add_argument("--lifetime", type=float, default=3600.0, help="stop after this many seconds")
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--no-store", action="store_true",
                    help="answer with Cache-Control: no-store (a browser's HTTP cache would "
                         "otherwise answer the next mode's reads without the fault)")
    a = ap.parse_args()
    p = start_proxy(a.upstream, a.mode, times=a.times, stall_seconds=a.stall,
                    lifetime=a.lifetime, port=a.port, log_path=a.log, no_store=a.no_store)
    print(f"faultproxy 127.0.0.1:{p.port} -> {p.upstream_url} mode {a.mode}", flush=True)
    try:
        p.wait()
    except KeyboardInterrupt:
        p.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Read-only proof: which HTTP methods the table stores received.

nginx (`access_log FILE;`, the default combined format), moto_server (werkzeug's request
log on stderr) and azurite (its console access log, on unless --silent) all write one line
per request holding `"METHOD TARGET HTTP/1.1" STATUS`; the fault proxy
(tests/harness/faultproxy.py --log) writes JSON lines with "method". This module counts
the methods in those logs, from a mark on (set it after the stores are loaded: loading
them uses PUT), and fails on anything but GET and HEAD (OPTIONS too with --browser:
CORS preflights). PROPFIND is counted on its own and passes unless --strict: object_store's
HTTP store lists a directory with a WebDAV PROPFIND (nginx answers 405 and the reader
falls back to probing); RFC 4918 defines it as safe, it changes nothing.

  readonly.py mark MARKS.json NAME=LOG...      remember where each log ends now
  readonly.py check [--since MARKS.json] [--browser] [--strict] NAME=LOG...
      prints `read-only: N requests, methods: GET=…, HEAD=…, other=0` and one line per
      store; exits 1 if another method appears or no request was seen at all

In Python: `summarise({"nginx": path, ...}, since=marks)` and `verdict(summary)`.
"""
import collections
import json
import os
import re
import sys

READ = ("GET", "HEAD")
PREFLIGHT = ("OPTIONS",)
SAFE = ("PROPFIND",)  # read-only WebDAV listing
REQUEST = re.compile(r'"([A-Z][A-Z-]*) (\S+) HTTP/[0-9.]+" (\d{3})')
# for a shell script starting nginx: `access_log FILE;` with the default format is enough


def mark(logs):
    """{log path: its current size} (a missing log counts as empty)."""
    return {p: (os.path.getsize(p) if os.path.exists(p) else 0) for p in logs.values()}


def requests(path, since=0):
    """(method, target, status) of every request in one log from byte offset `since`."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as f:
        f.seek(since)
        for raw in f:
            line = raw.decode("utf-8", "replace")
            if line.startswith("{"):
                try:
                    r = json.loads(line)
                    out.append((r["method"], r.get("target", ""), r.get("status", 0)))
                    continue
                except (ValueError, KeyError):
                    pass
            m = REQUEST.search(line)
            if m:
                out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def summarise(logs, since=None):
    """{store name: Counter of methods} over `logs` ({name: path}) from the marks."""
    since = since or {}
    return {name: collections.Counter(m for m, _, _ in requests(p, since.get(p, 0)))
            for name, p in logs.items()}


def allowed_methods(browser=False, strict=False):
    return set(READ) | (set(PREFLIGHT) if browser else set()) | (set() if strict else set(SAFE))


def verdict(summary, browser=False, examples=None, strict=False):
    """(ok, text): ok when only GET/HEAD (OPTIONS for browsers, PROPFIND unless strict)
    appear and at least one request was seen."""
    allowed = allowed_methods(browser, strict)
    total = collections.Counter()
    for c in summary.values():
        total.update(c)
    n = sum(total.values())
    other = {m: k for m, k in total.items() if m not in allowed}
    shown = [f"{m}={total.get(m, 0)}" for m in (READ + (PREFLIGHT if browser else ()))]
    shown += [f"{m}={total[m]} (WebDAV listing, safe)" for m in SAFE if total.get(m) and not strict]
    text = [f"read-only: {n} requests, methods: {', '.join(shown)}, other={sum(other.values())}"
            + (f" ({', '.join(f'{m}={k}' for m, k in sorted(other.items()))})" if other else "")]
    for name, c in summary.items():
        text.append(f"  {name}: {sum(c.values())} requests"
                    + "".join(f", {m}={k}" for m, k in sorted(c.items())))
    if examples:
        text += [f"  not read-only: {e}" for e in examples]
    ok = not other and n > 0
    if n == 0:
        text.append("read-only: no request was logged at all (is logging on?)")
    return ok, "\n".join(text)


def offenders(logs, since=None, browser=False, limit=10, strict=False):
    allowed = allowed_methods(browser, strict)
    since = since or {}
    out = []
    for name, p in logs.items():
        for m, t, s in requests(p, since.get(p, 0)):
            if m not in allowed and len(out) < limit:
                out.append(f"{name}: {m} {t} -> {s}")
    return out


def _logs(args):
    logs = {}
    for a in args:
        name, _, path = a.partition("=")
        if not path:
            sys.exit(f"expected NAME=LOG, got {a!r}")
        logs[name] = path
    return logs


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("mark", "check"):
        sys.exit(__doc__)
    if argv[0] == "mark":
        with open(argv[1], "w") as f:
            json.dump(mark(_logs(argv[2:])), f)
        return
    argv = argv[1:]
    since, browser, strict = None, False, False
    while argv and argv[0].startswith("--"):
        if argv[0] == "--since":
            since = json.load(open(argv[1]))
            argv = argv[2:]
        elif argv[0] == "--browser":
            browser = True
            argv = argv[1:]
        elif argv[0] == "--strict":
            strict = True
            argv = argv[1:]
        else:
            sys.exit(f"unknown option {argv[0]}")
    logs = _logs(argv)
    ok, text = verdict(summarise(logs, since), browser,
                       offenders(logs, since, browser, strict=strict), strict)
    print(text)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

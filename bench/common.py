"""Shared helpers of the benchmarks: run a fresh process, measure it."""
import os
import subprocess
import sys
import threading
import time


def run_rss(cmd, discard_stdout=False, timeout_s=None):
    """Run cmd; wall time, the child's own peak RSS (wait4), most threads seen, output
    (stdout to /dev/null with discard_stdout: a listing of a million files). A child still
    running after timeout_s seconds is killed and the benchmark stops, naming it."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL if discard_stdout else subprocess.PIPE,
                         stderr=subprocess.PIPE)
    threads = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for line in f:
                        if line.startswith("Threads:"):
                            threads[0] = max(threads[0], int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.002)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    killed = threading.Event()

    def kill():
        killed.set()
        p.kill()

    timer = threading.Timer(timeout_s, kill) if timeout_s else None
    if timer:
        timer.daemon = True
        timer.start()
    # stderr is drained while stdout is read: a child that logs more than a pipe holds
    # (--io-log on a 3M-file table) would otherwise block on it, and the reader on stdout
    errs = []
    drain = threading.Thread(target=lambda: errs.append(p.stderr.read()), daemon=True)
    drain.start()
    out = p.stdout.read() if p.stdout else b""
    drain.join()
    err = errs[0] if errs else b""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    stop.set()
    if timer:
        timer.cancel()
    if killed.is_set():
        sys.exit(f"{' '.join(cmd)} did not finish in {timeout_s} s (the timeout); killed")
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err.decode()}")
    return {"wall_s": wall, "rss": ru.ru_maxrss * 1024, "threads": threads[0],
            "out": out.decode(), "err": err.decode()}



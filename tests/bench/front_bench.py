#!/usr/bin/env python3
"""make bench-front: cold start of sp mcp, from process start to the
initialize answer, median of 20, against a baseline measured in the same
run (`sp catalog` on the same policy: the same binary loading the same
policy, without children or sandbox); and the VmRSS of the broker, the
frontend and the executor while idle.  Printed, not asserted."""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("SP_SRCDIR", "."), "tests",
                                "integration"))
from front_lib import policy, tmpdir  # noqa: E402
from proc_lib import (INITIALIZE, SP, confined_children, finish,  # noqa
                      sp_env, start, status_field)

RUNS = 20


def cold_start(config):
    t0 = time.perf_counter()
    p = start(config)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    line = p.stdout.readline()
    t1 = time.perf_counter()
    finish(p)
    if not line.startswith(b'{"jsonrpc":"2.0","id":0,"result"'):
        sys.exit("bench-front: no initialize answer: %r" % line)
    return t1 - t0


def baseline(config):
    t0 = time.perf_counter()
    subprocess.run([SP, "catalog", "--config", config], env=sp_env(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - t0


def idle_rss(config):
    p = start(config)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    p.stdout.readline()
    kids = confined_children(p.pid)
    time.sleep(0.3)
    rss = {"broker": status_field(p.pid, "VmRSS")}
    for role, pid in sorted(kids.items()):
        rss[role] = status_field(pid, "VmRSS")
    finish(p)
    return rss


def main():
    config = policy(tmpdir(), 9)
    base = statistics.median(baseline(config) for _ in range(RUNS))
    cold = statistics.median(cold_start(config) for _ in range(RUNS))
    print("bench-front: cold start to the initialize answer, median of %d: "
          "%.1f ms; baseline (sp catalog, same policy): %.1f ms; ratio %.1fx"
          % (RUNS, cold * 1000, base * 1000, cold / base))
    for role, rss in idle_rss(config).items():
        print("bench-front: idle VmRSS %-8s %s" % (role, rss))


if __name__ == "__main__":
    main()

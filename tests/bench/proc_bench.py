#!/usr/bin/env python3
"""Measures (prints, does not assert) the cold start of sp mcp -- from
process start to the initialize response, median of 20 -- and the
resident memory of the three processes together in an idle session."""
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ.get("SP_SRCDIR", "."), "tests",
                                "integration"))
from sptest.mcp import INITIALIZE  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import finish, read_line, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

RUNS = 20


def cold_start(cfg):
    t0 = time.monotonic()
    p = start(cfg)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    line = read_line(p)
    elapsed = time.monotonic() - t0
    status, _, _ = finish(p)
    return elapsed, line, status


def rss_kib(pid):
    v = status_field(pid, "VmRSS")
    return int(v.split()[0]) if v else 0


def pss_kib(pid):
    """Proportional share: shared library pages split among users."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    tmp = tmpdir()
    cfg = shared_target_policy(tmp, audit=False)
    times, ok = [], True
    for _ in range(RUNS):
        elapsed, line, status = cold_start(cfg)
        ok = ok and b'"protocolVersion"' in line and status == 0
        times.append(elapsed * 1000)
    check("%d cold starts answered initialize and ended with 0" % RUNS, ok)
    print("# cold start to initialize response: median %.2f ms "
          "(min %.2f, max %.2f) over %d runs" %
          (statistics.median(times), min(times), max(times), RUNS))
    p = start(cfg)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    line = read_line(p)
    check("idle session answered initialize within 5 s",
          b'"protocolVersion"' in line, line)
    kids = confined_children(p.pid)
    time.sleep(0.2)
    pids = dict(kids, broker=p.pid)
    parts = {r: rss_kib(k) for r, k in pids.items()}
    pss = {r: pss_kib(k) for r, k in pids.items()}
    finish(p)
    check("RSS read for the three processes", len(parts) == 3, parts)
    for name, kib in (("RSS", parts), ("PSS (shared pages split)", pss)):
        print("# idle %s: %d KiB total (%s)" % (name, sum(kib.values()),
              ", ".join("%s %d KiB" % kv for kv in sorted(kib.items()))))
    done()


main()

#!/usr/bin/env python3
"""`make bench-audit`: the cost of auditing, printed, not asserted.

Calls per second through the real `sp mcp` against a local HTTP target,
with and without an audit path, for a read-only tool (records synced in
groups) and a mutating one (intent and execution each fsynced before the
action and before the result), one call at a time and 4 in flight
(at 8, the HTTP engine's per-host connection cap, throughput without
audit collapses for reasons outside the audit).  The baseline
(no audit path) is measured in the same run; each figure is the median
of ROUNDS sessions."""
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ.get("SP_SRCDIR", "."),
                                "tests", "integration"))
from sptest.mcp import outcome  # noqa: E402
from sptest.policy import get_and_put_item_policy  # noqa: E402
from sptest.run import drive_item_calls, start, tmpdir  # noqa: E402
from sptest.target import Target  # noqa: E402

CALLS = 300
ROUNDS = 3


def rate(cfg, tool, window):
    p = start(cfg)
    t0 = time.monotonic()
    got = drive_item_calls(p, CALLS, tool, window=window)
    elapsed = time.monotonic() - t0
    p.wait(30)
    p.stdout.close()
    p.stderr.close()
    ok = sum(1 for v in got.values() if outcome(v) == "ok")
    if ok != CALLS:
        sys.exit("bench-audit: only %d of %d calls succeeded" % (ok, CALLS))
    return CALLS / elapsed


def main():
    target = Target(lifetime=3600)
    plain = get_and_put_item_policy(tmpdir(), target.url, audit=False)
    audited_dir = tmpdir()
    audited = get_and_put_item_policy(audited_dir, target.url)
    print("bench-audit: %d calls per session, median of %d; log in %s" %
          (CALLS, ROUNDS, audited_dir))
    for window in (1, 4):
        for tool, what in (("get_item", "read-only"),
                           ("put_item", "mutating")):
            base, aud = [], []
            for _ in range(ROUNDS):	# interleaved: drift hits both alike
                base.append(rate(plain, tool, window))
                aud.append(rate(audited, tool, window))
            base, aud = statistics.median(base), statistics.median(aud)
            print("  %-9s %d in flight: no audit %6.0f calls/s, audited "
                  "%6.0f calls/s, ratio %.2f" % (what, window, base, aud,
                                                 aud / base))
    target.stop()


main()

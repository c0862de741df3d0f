#!/usr/bin/env python3
"""More calls in one write than max_inflight, with stdin left open: the
frontend holds the extra frames back, lets them in as results come, and
delivers every answer without waiting for more input.  A frontend that
read fd 0 (a blocking pipe) when it was only woken to finish a held-back
chunk stalled here until the client wrote again -- a client that waits
for its answers never does (seen at 16 in flight in the benchmark)."""
import json
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, call  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import finish, read_line, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402


def answers_for(p, ids, timeout, pending=b""):
    """The tools/call answers among the next lines, until every id in ids
    was answered or timeout passed (read_line may return several lines)."""
    end, got = time.monotonic() + timeout, {}
    while set(got) != set(ids) and time.monotonic() < end:
        if b"\n" not in pending:
            more = read_line(p, max(0.05, end - time.monotonic()))
            if not more:
                break
            pending += more
            continue
        line, pending = pending.split(b"\n", 1)
        msg = json.loads(line)
        if msg.get("id") in ids:
            got[msg["id"]] = msg
    return got


def test_held_back_frames(tmp, target, calls, inflight):
    cfg = get_item_and_fetch_policy(tmp, target.port,
                                    limits={"max_inflight": inflight})
    p = start(cfg)
    try:
        p.stdin.write(INITIALIZE)
        p.stdin.flush()
        first = read_line(p, 10)  # the initialize answer, alone so far
        ids = list(range(1, calls + 1))
        # One write, and stdin stays open while we wait for every answer.
        p.stdin.write(b"".join(call(i, arguments={"id": "n%d" % i})
                               for i in ids))
        p.stdin.flush()
        got = answers_for(p, ids, 10)
        check("%d calls in one write, max_inflight %d, stdin open: every "
              "call answered" % (calls, inflight),
              first.endswith(b"\n") and sorted(got) == ids,
              "answered %s of %s" % (sorted(got), ids))
        check("... each answer a tool result, and the target saw each once",
              all("result" in m for m in got.values()) and
              sorted(r["path"] for r in target.wait_requests(calls)) ==
              sorted("/items/n%d" % i for i in ids),
              [r["path"] for r in target.requests()])
    finally:
        status, _, err = finish(p)
    check("... and the session ends 0 at end of input", status == 0,
          (status, err[-300:]))


def main():
    for calls, inflight in ((3, 2), (40, 16)):
        tmp = tmpdir()
        target = Target(tmp, "recorder")
        try:
            test_held_back_frames(tmp, target, calls, inflight)
        finally:
            target.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()

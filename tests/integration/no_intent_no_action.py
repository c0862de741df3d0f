#!/usr/bin/env python3
"""No intent, no action (docs/design.md section 6), through the real `sp mcp`:

- a mutating tool's intent is in the audit file before the target sees
  the request (the target reads the file as each request arrives);
- once the log can no longer be written (its last record was tampered
  with, so the writer refuses to chain on it), a call is answered
  "failed", not run, and the target receives nothing;
- a mutating tool's result is held until its execution record is acked
  (the test build's broker:late-ack acks late); a read-only one is not."""
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log  # noqa: E402
from sptest.mcp import (INITIALIZE, item_calls, outcome, request,  # noqa: E402
                        responses)
from sptest.policy import get_and_put_item_policy  # noqa: E402
from sptest.run import SP_TEST, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402


def intent_before_request():
    tmp = tmpdir()
    log = os.path.join(tmp, "audit.jsonl")
    target = Target(lifetime=3600, audit_path=log)
    cfg = get_and_put_item_policy(tmp, target.url)
    status, out, err = finish(start(cfg), item_calls(5, "put_item"))
    target.stop()
    reqs = target.requests()
    check("five mutating calls reached the target", len(reqs) == 5 and
          status == 0, (len(reqs), err))
    missing = []
    for r in reqs:
        n = int(r["path"].rsplit("/", 1)[1])
        intents = [a for a in r["audit"] if a["kind"] == "intent" and
                   a["args"]["n"] == n]
        done_already = [a for a in r["audit"] if a["kind"] == "execution"
                        and intents and a["call"] == intents[0]["call"]]
        if len(intents) != 1 or done_already:
            missing.append((n, r["audit"]))
    check("each request found its intent (by its value-audited n) already "
          "in the file, and no execution yet", not missing, missing[:1])


def no_intent_no_action(tool):
    tmp = tmpdir()
    target = Target(lifetime=3600)
    cfg = get_and_put_item_policy(tmp, target.url)
    log = os.path.join(tmp, "audit.jsonl")
    p = start(cfg)
    first = drive_one(p, INITIALIZE + request(1, "tools/call", {
        "name": tool, "arguments": {"id": "a", "card": "1234567", "n": 1}}),
        2)
    check("%s: the first call ran" % tool,
          outcome(first.get(1)) == "ok" and len(target.requests()) == 1,
          first)
    # A read-only result goes out before its execution record is written:
    # forge only once the writer is done with call 1, or its record would
    # be appended after the forged line and the intent below chain on it.
    check("%s: the first call's execution record is in the file" % tool,
          wait_for_execution(log, 1), read_log(log)[0])
    with open(log, "ab") as f:	# the log can no longer be chained on
        f.write(b'{"kind":"forged \\"$(x)\\""}\n')
    status, out, err = finish(p, request(2, "tools/call", {
        "name": tool, "arguments": {"id": "b", "card": "7654321", "n": 2}}))
    got = responses(out)
    target.stop()
    check("%s: the call whose intent could not be written is answered "
          "failed" % tool, outcome(got.get(2)) == "failed", got)
    check("%s: its message says nothing was sent" % tool,
          "nothing was sent" in str(got.get(2)), got.get(2))
    check("%s: the target received no request for it" % tool,
          len(target.requests()) == 1, target.requests())
    recs, _ = read_log(log)
    check("%s: no intent or execution of call 2 in the file" % tool,
          [r["kind"] for r in recs if r.get("args", {}).get("n") == 2] == [],
          recs)


def wait_for_execution(log, n, seconds=60.0):
    """True once the execution record of the call whose audited n is n is
    in the log."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        recs, _ = read_log(log)
        if any(r.get("kind") == "execution" and
               r.get("args", {}).get("n") == n for r in recs):
            return True
        time.sleep(0.01)
    return False


def drive_one(p, data, lines):
    """Writes data and reads lines responses, leaving the session open."""
    p.stdin.write(data)
    p.stdin.flush()
    return responses(b"".join(p.stdout.readline() for _ in range(lines)))


# Calls timed in held_until_acked: a read-only result that waited for
# its ack would take 3000 ms every time, a loaded machine only sometimes.
TIMED_CALLS = 5


def held_until_acked(tool, mutating):
    tmp = tmpdir()
    target = Target(lifetime=3600)
    log = os.path.join(tmp, "audit.jsonl")
    p = start(get_and_put_item_policy(tmp, target.url), binary=SP_TEST,
              hook="broker:late-ack")
    drive_one(p, INITIALIZE, 1)
    times, answers = [], {}
    for rid in range(1, (1 if mutating else TIMED_CALLS) + 1):
        t0 = time.monotonic()
        answers.update(drive_one(p, request(rid, "tools/call", {
            "name": tool, "arguments": {"id": "a", "card": "1234567",
                                        "n": 7}}), 1))
        times.append(time.monotonic() - t0)
    recs, _ = read_log(log)
    finish(p)
    target.stop()
    check("%s: the call ran (%d)" % (tool, len(times)),
          all(outcome(answers.get(rid)) == "ok"
              for rid in range(1, len(times) + 1)), answers)
    # The hook acks 3000 ms late by a libevent timer, which may fire a
    # coarse-clock tick (a few ms) early as seen from this process: 2900 ms
    # still proves the wait, and a read-only call takes a few ms -- the
    # fastest of several, since load slows some calls, never speeds one.
    if mutating:
        check("%s: the result waited for the late ack (%.0f ms >= 2900)" %
              (tool, times[0] * 1000), times[0] >= 2.9, times)
        check("%s: its execution record was in the file before the result"
              % tool, any(r["kind"] == "execution" for r in recs), recs)
    else:
        check("%s: a read-only result does not wait (fastest of %d: "
              "%.0f ms < 2900)" % (tool, len(times), min(times) * 1000),
              min(times) < 2.9, times)


def main():
    intent_before_request()
    no_intent_no_action("get_item")
    no_intent_no_action("put_item")
    held_until_acked("put_item", True)
    held_until_acked("get_item", False)
    done()


main()

#!/usr/bin/env python3
"""One receive path for every channel (common/channel.h): each process
takes from each peer only the record types its peer table permits in the
channel's state, in the version it speaks, and ends on anything else
with one line naming the peer, the state and what was wrong.  The test
build's stray hooks (child/test_hook.h) make one process send another a
header past its own table: a type the receiver never takes once greeted,
a type it takes only after the hello (sent before it), the next
protocol version, or an operator's approval (OPERATOR_ANSWER), which the
executor takes from the broker alone.  The receiver must end the session with status 70; an
executor that refused a record acts on nothing (a real HTTP target counts
zero requests, though a call was sent), and what it refused from a
greeted frontend is audited as a violation (before its own hello the
broker takes nothing from it).  The broker logs as "sp", the name it runs
under."""
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP_TEST, reap, start, stop, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

VERSION = "record version 2 is not spoken here (version 1)"

# hook -> (the process that must refuse, its line after "sp[NAME]: ",
#          the violation the executor audits, or None)
CASES = [
    ("frontend:stray-broker", "broker",
     "channel frontend (ready): record type 2 not permitted", None),
    ("frontend:early-broker", "broker",
     "channel frontend (hello): record type 5 not permitted", None),
    ("frontend:version-broker", "broker",
     "channel frontend (ready): " + VERSION, None),
    ("executor:stray-frontend", "frontend",
     "channel executor (ready): record type 2 not permitted", None),
    ("executor:early-frontend", "frontend",
     "channel executor (hello): record type 3 not permitted", None),
    ("executor:version-frontend", "frontend",
     "channel executor (ready): " + VERSION, None),
    ("frontend:stray-executor", "executor",
     "channel frontend (ready): record type 1 not permitted",
     "unexpected-record"),
    ("frontend:approval-executor", "executor",
     "channel frontend (ready): record type 10 not permitted",
     "unexpected-record"),
    ("frontend:early-executor", "executor",
     "channel frontend (hello): record type 2 not permitted", None),
    ("frontend:version-executor", "executor",
     "channel frontend (ready): " + VERSION, "unknown-record"),
    ("broker:stray-executor", "executor",
     "channel broker (ready): record type 1 not permitted", None),
    ("broker:version-executor", "executor",
     "channel broker (ready): " + VERSION, None),
]

# A call with quotes, a newline, $() and multibyte text, held by the
# frontend until the executor's hello: it must never be acted on.
CALL = request(1, "tools/call", {"name": "get_item", "arguments": {
    "id": "it's \"$(id)\"\n%2e%2e \u00e9t\u00e9"}})


def audit(tmp):
    path = os.path.join(tmp, "audit.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def run(hook, role, line, violation):
    tmp = tmpdir()
    target = Target(tmp)
    try:
        run_with(tmp, target, hook, role, line, violation)
    finally:
        target.stop()


def run_with(tmp, target, hook, role, line, violation):
    api = {"api": {"type": "http",
                   "base_url": "http://127.0.0.1:%d" % target.port}}
    p = start(shared_target_policy(tmp, targets=api), binary=SP_TEST,
              hook=hook)
    try:
        # stdin stays open: the session must end on the record alone
        p.stdin.write(INITIALIZE + CALL)
        p.stdin.flush()
        status = p.wait(timeout=30)
    except Exception as e:  # noqa: a hang is the failure shown
        stop(p)
        check("%s: the session ends on its own" % hook, False, e)
        return
    out, err = reap(p)
    err = err.decode("utf-8", "replace")
    want = "sp[%s]: error: %s" % ("sp" if role == "broker" else role, line)
    check("%s: the %s says so in one line" % (hook, role),
          any(l == want for l in err.splitlines()), err[-1500:])
    check("%s: the session ends 70" % hook, status == 70, (status, err))
    if role != "executor":
        return
    check("%s: the target saw nothing" % hook, target.requests() == [],
          target.requests())
    log = audit(tmp)
    if hook.startswith("frontend:") and violation is not None:
        refused = [r.get("reason") for r in log if r["kind"] == "violation"]
        check("%s: the executor audited %s" % (hook, violation),
              refused == [violation], refused)


def main():
    for case in CASES:
        run(*case)
    done()


main()

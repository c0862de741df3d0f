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
under.

Then a header that is right and permitted, with a body that does not
decode (badbody-PEER, and badhello-PEER before the sender's hello), on
every row of every channel table that takes a record (docs/design.md
section 1): fatal on each, as a refused header is, except the
frontend's action records at the executor, which are audited and
answered while the session goes on.  (The frontend's broker row takes
nothing, so any record on it is refused by type.)"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request, responses  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP_TEST, finish, reap, start, stop, tmpdir  # noqa: E402
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

BODY = "does not decode: "

# hook -> (the process whose row it tests, its line's start after
#          "sp[NAME]: error: ", the violation the executor audits or None);
# every one is fatal.  The executor's audit of a bad hello from the
# frontend cannot be written: the broker takes nothing from the executor
# before the executor's own hello, which follows the frontend's.
BAD_BODIES = [
    ("frontend:badbody-broker", "broker",
     "channel frontend (ready): record type 5 " + BODY, None),
    ("executor:badbody-broker", "broker",
     "channel executor (ready): record type 5 " + BODY, None),
    ("executor:badbody-frontend", "frontend",
     "channel executor (ready): record type 3 " + BODY, None),
    ("broker:badbody-executor", "executor",
     "channel broker (ready): record type 6 " + BODY, None),
    ("frontend:badhello-broker", "broker",
     "channel frontend (hello): record type 1 " + BODY, None),
    ("executor:badhello-broker", "broker",
     "channel executor (hello): record type 1 " + BODY, None),
    ("executor:badhello-frontend", "frontend",
     "channel executor (hello): record type 1 " + BODY, None),
    ("frontend:badhello-executor", "executor",
     "channel frontend (hello): record type 1 " + BODY, None),
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


def run_with(tmp, target, hook, role, line, violation, prefix=False):
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
          any(l == want or prefix and l.startswith(want)
              for l in err.splitlines()), err[-1500:])
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


def run_bad_body(hook, role, line, violation):
    tmp = tmpdir()
    target = Target(tmp)
    try:
        run_with(tmp, target, hook, role, line, violation, prefix=True)
    finally:
        target.stop()


def run_audited_action():
    """The frontend's action record that does not decode, call id 77:
    audited with that id, answered (the frontend logs the answer to a
    call it never made), and the session goes on: the real call is
    answered by the target, the only request it sees, and the session
    ends 0 when the client closes its end."""
    hook = "frontend:badbody-executor"
    tmp = tmpdir()
    target = Target(tmp)
    try:
        api = {"api": {"type": "http",
                       "base_url": "http://127.0.0.1:%d" % target.port}}
        p = start(shared_target_policy(tmp, targets=api), binary=SP_TEST,
                  hook=hook)
        status, out, err = finish(p, INITIALIZE + CALL, timeout=30)
        check("%s: the session goes on and ends 0" % hook, status == 0,
              (status, err[-1500:]))
        refused = [(r.get("reason"), r.get("call")) for r in audit(tmp)
                   if r["kind"] == "violation"]
        check("%s: the executor audited undecodable-action for call 77"
              % hook, refused == [("undecodable-action", 77)], refused)
        check("%s: the executor answered call 77" % hook,
              re.search(r"sp\[frontend\]: error: result for call 77, "
                        r"which is not in flight", err) is not None,
              err[-1500:])
        answer = responses(out).get(1) or {}
        check("%s: the real call is answered ok" % hook,
              answer.get("isError") is False, out[-1500:])
        paths = [r.get("path") for r in target.requests()]
        check("%s: the target saw the real call alone" % hook,
              len(paths) == 1, paths)
    finally:
        target.stop()


def main():
    for case in CASES:
        run(*case)
    for case in BAD_BODIES:
        run_bad_body(*case)
    run_audited_action()
    done()


main()

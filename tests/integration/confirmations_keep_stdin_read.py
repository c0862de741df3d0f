#!/usr/bin/env python3
"""Confirmations at the session's limits (docs/design.md section 8.2):
every call slot (max_inflight) taken by a call whose question is out to
the client, and the client sends one more tools/call before the human
answers.  The frontend must still read the human's answers, which come
after that call on stdin: a call kept back until a slot frees stops the
reading, and then no answer could arrive before the questions expire.
So the extra call is refused at once, saying why, and the two accepted
calls reach the target, once each, well before their expiry.  And the
executor killed while a question is out: the call never had an answer,
so the client hears that nothing was sent; the client gone while one
is out: withdrawn."""
import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import audit_records  # noqa: E402
from sptest.confirm import ConfirmSession, decisions  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP_TEST, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

# The questions' expiry: far above what the answers need, and what a
# frontend that stopped reading would make every call wait for.
TIMEOUT_S = 40
NAMES = ["a \"$(id)\"\n-x", "b \u00e9t\u00e9 \u202etxt.exe"]


def structured(got, rid):
    return got.get(rid, ({},))[0].get("result", {}).get(
        "structuredContent", {})


def answer(s, req, qty):
    s.send((json.dumps({"jsonrpc": "2.0", "id": req["id"],
                        "result": {"action": "accept",
                                   "content": {"qty": str(qty)}}}) +
            "\n").encode())


def test_full_table_of_questions():
    tmp = tmpdir()
    target = Target(tmp, "recorder", 2 * TIMEOUT_S + 60)
    path = confirmed_create_item_policy(tmp, target.port, timeout_s=TIMEOUT_S)
    with open(path) as f:
        doc = json.load(f)
    doc["limits"]["max_inflight"] = 2
    with open(path, "w") as f:
        json.dump(doc, f)
    s = ConfirmSession(path, lambda req: None)
    start = time.monotonic()
    s.call(1, "create_item", {"name": NAMES[0], "qty": 3})
    s.call(2, "create_item", {"name": NAMES[1], "qty": 17})
    while len(s.asked) < 2 and time.monotonic() - start < 30:
        time.sleep(0.02)
    # the table is full of questions; one more call, then the answers
    s.call(3, "get_item", {"id": "x-3"})
    for req in list(s.asked):
        answer(s, req, 3 if req["params"]["message"].startswith("Create 3 ")
               else 17)
    got = s.wait([1, 2, 3], TIMEOUT_S * 2)
    took = time.monotonic() - start
    s.close()
    posts = [r for r in target.requests() if r["method"] == "POST"]
    gets = [r for r in target.requests() if r["method"] == "GET"]
    check("two questions fill max_inflight 2, a third call comes, then "
          "the human's answers: both accepted calls ran, in %.1f s (the "
          "questions expire after %d s)" % (took, TIMEOUT_S),
          structured(got, 1).get("outcome") == "ok" and
          structured(got, 2).get("outcome") == "ok" and
          len(posts) == 2 and took < TIMEOUT_S / 2,
          (structured(got, 1), structured(got, 2), took, s.stderr[-800:]))
    r3 = structured(got, 3)
    check("... the third call was refused at once, saying calls wait for a "
          "human, and did not reach the target",
          r3.get("outcome") == "denied" and
          "confirmation" in r3.get("message", "") and gets == [],
          (r3, gets))
    check("... the audit has asked, asked, accepted, accepted",
          sorted(decisions(tmp)) == ["accepted", "accepted", "asked",
                                     "asked"], decisions(tmp))
    target.stop()


def test_full_table_of_running_calls():
    """The control: a full table of calls that end by themselves still
    keeps the next call back (it is not refused) until a slot frees."""
    tmp = tmpdir()
    target = Target(tmp, "recorder", 120)
    path = confirmed_create_item_policy(tmp, target.port, timeout_s=TIMEOUT_S)
    with open(path) as f:
        doc = json.load(f)
    doc["limits"]["max_inflight"] = 2
    with open(path, "w") as f:
        json.dump(doc, f)
    s = ConfirmSession(path, lambda req: None)
    for rid in (1, 2, 3):
        s.call(rid, "get_item", {"id": "r-%d" % rid})
    got = s.wait([1, 2, 3], 60)
    s.close()
    check("three reads on max_inflight 2: all three ran (the third waited "
          "for a slot, not refused)",
          all(structured(got, i).get("outcome") == "ok" for i in (1, 2, 3))
          and len(target.requests()) == 3, (got, target.requests()))
    target.stop()


def test_executor_dies_while_asking():
    """The executor killed while a question is out: it never had an
    answer, so it cannot have acted; the client hears that nothing was
    sent (not "check its effect") and that the question is moot."""
    tmp = tmpdir()
    target = Target(tmp, "recorder", 120)
    path = confirmed_create_item_policy(tmp, target.port, timeout_s=TIMEOUT_S)
    s = ConfirmSession(path, lambda req: None, binary=SP_TEST)
    s.call(1, "create_item", {"name": NAMES[0], "qty": 3})
    s.call(2, "get_item", {"id": "y \"2\""})
    start = time.monotonic()
    while len(s.asked) < 1 and time.monotonic() - start < 30:
        time.sleep(0.02)
    first = s.wait([2], 30)
    os.kill(s.executor_pid(), signal.SIGKILL)
    got = s.wait([1], 30)
    status = s.close()
    r = structured(got, 1)
    check("executor killed while a question waits: the call is failed, "
          "saying nothing was sent",
          r.get("outcome") == "failed" and
          "nothing was sent" in r.get("message", "") and
          structured(first, 2).get("outcome") == "ok", (r, first))
    asked = s.asked[0]["id"] if s.asked else None
    moot = [n for n in s.notes if n.get("method") ==
            "notifications/cancelled" and
            n.get("params", {}).get("requestId") == asked]
    check("... the client is told the question is moot", len(moot) == 1,
          s.notes)
    posts = [q for q in target.requests() if q["method"] == "POST"]
    intents = [a for a in audit_records(tmp) if a.get("kind") == "intent"
               and a.get("tool") == "create_item"]
    check("... nothing reached the target, no intent, the audit has "
          "asked alone; the session ends 70",
          posts == [] and intents == [] and decisions(tmp) == ["asked"] and
          status == 70, (posts, intents, decisions(tmp), status))
    target.stop()


def test_client_gone_while_asking():
    """The client's input ends while a question is out: the call is
    withdrawn, audited so, and never acts."""
    tmp = tmpdir()
    target = Target(tmp, "recorder", 120)
    path = confirmed_create_item_policy(tmp, target.port, timeout_s=TIMEOUT_S)
    s = ConfirmSession(path, lambda req: None)
    s.call(1, "create_item", {"name": NAMES[1], "qty": 5})
    start = time.monotonic()
    while len(s.asked) < 1 and time.monotonic() - start < 30:
        time.sleep(0.02)
    status = s.close()
    took = time.monotonic() - start
    r = structured(s.wait([1], 5), 1)
    posts = [q for q in target.requests() if q["method"] == "POST"]
    check("the client's input ends while a question waits: withdrawn, "
          "nothing sent, the session ends 0 in %.1f s (the question would "
          "expire after %d s)" % (took, TIMEOUT_S),
          decisions(tmp) == ["asked", "withdrawn"] and posts == [] and
          took < TIMEOUT_S / 2 and status == 0,
          (decisions(tmp), posts, took, status))
    check("... the call is still answered: denied, nothing was sent",
          r.get("outcome") == "denied" and
          "nothing was sent" in r.get("message", ""), r)
    target.stop()


def main():
    test_client_gone_while_asking()
    test_executor_dies_while_asking()
    test_full_table_of_questions()
    test_full_table_of_running_calls()
    done()


if __name__ == "__main__":
    main()

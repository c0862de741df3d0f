#!/usr/bin/env python3
"""Issue 14 finding 2 through the real sp mcp: every tools/call spends
limits.calls_per_session, refused or not; past the budget a call is
refused unread and the session closes (exit 75) after 32 more; runs of
identical rejections are folded into one record with "repeated": N;
and the broker stops writing rejections after 1 MiB of them
(AUDIT_EVENT_NOTES_MAX) and ends the session, naming why in session-end.
What reached the target is counted in its request log."""
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import (INITIALIZE, call, first_bad_line,  # noqa: E402
                        messages, request)
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import SP, finish, sp_env, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

OVER_BUDGET_MAX = 32            # MCP_OVER_BUDGET_MAX
NOTES_MAX = 1024 * 1024         # AUDIT_EVENT_NOTES_MAX
# Arguments of the wrong type (id is a string of at most 64): quotes,
# $(), %2e%2e, multibyte text, a leading '-', quantities other than one.
BAD_ARGS = [{"id": 7}, {"id": ["$(id)", "%2e%2e"]}, {"id": {"q": "\"\n"}},
            {"id": None}, {"id": -1.5}, {"id": "\u00e9" * 65}]


def audit(tmp):
    path = os.path.join(tmp, "audit.jsonl")
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()], os.path.getsize(path)


def folded(records):
    """[(reason, repeated)] of the rejection records, in order."""
    return [(r.get("reason"), r.get("repeated")) for r in records
            if r["kind"] == "rejection"]


def refused_total(records):
    """Rejections the records stand for: one each, N for "repeated": N."""
    return sum(r.get("repeated", 1) for r in records
               if r["kind"] == "rejection")


def run(config, data, timeout=120):
    p = subprocess.run([SP, "mcp", "--config", config], input=data,
                       capture_output=True, timeout=timeout, env=sp_env())
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def test_ten_thousand_refusals(tmp, target):
    """10 000 refused calls then a valid one, in one input: 200 invalid
    results, 32 denied, then the session closes; the valid call reaches
    nothing; the log holds a few records, not 10 000 (3.86 MB on main)."""
    data = INITIALIZE + b"".join(
        call(i, arguments=BAD_ARGS[i % len(BAD_ARGS)])
        for i in range(1, 10001)) + call("valid -1", arguments={"id": "ok"})
    status, out, err = run(get_item_and_fetch_policy(tmp, target.port), data)
    msgs = messages(out)
    outcomes = [m.get("result", {}).get("structuredContent", {}).get(
        "outcome") for m in msgs[1:]]
    check("10 000 refused calls: 200 invalid, %d denied, then exit 75" %
          OVER_BUDGET_MAX,
          outcomes == ["invalid"] * 200 + ["denied"] * OVER_BUDGET_MAX and
          status == 75 and first_bad_line(out) is None,
          (status, outcomes[195:205], len(outcomes), err[-400:]))
    time.sleep(0.3)
    records, size = audit(tmp)
    kinds = [r["kind"] for r in records]
    check("... the valid call after them reached nothing and has no "
          "intent", target.requests() == [] and "intent" not in kinds,
          (target.requests(), kinds))
    end = records[-1]
    check("... audit %d bytes for 10 000 refusals (under 8 KiB), the "
          "runs folded" % size,
          size < 8192 and folded(records) == [
              ("invalid-arguments", None), ("invalid-arguments", 199),
              ("budget-spent", None),
              ("budget-spent", OVER_BUDGET_MAX - 1)],
          (size, folded(records)))
    check("... session-end: 232 rejections, why the session closed",
          end["kind"] == "session-end" and end["rejections"] == 232 and
          refused_total(records) == 232 and end["status"] == 75 and
          end["why"] == "calls past the budget" and
          end["audit_dropped"] == 0, end)


def test_valid_call_after_budget(tmp, target):
    """calls_per_session 5, five refused calls: the sixth, valid, is
    denied and reaches nothing; the session goes on (a ping) and ends 0."""
    p = start(get_item_and_fetch_policy(tmp, target.port,
                                        limits={"calls_per_session": 5}))
    data = INITIALIZE + b"".join(call(i, arguments=BAD_ARGS[i])
                                 for i in range(5))
    data += call(5, arguments={"id": "-rf \"$(id)\" %2e%2e \u20ac"})
    status, out, err = finish(p, data + request(6, "ping"))
    msgs = {m.get("id"): m for m in messages(out)}
    sc = msgs.get(5, {}).get("result", {}).get("structuredContent", {})
    check("budget 5 spent by 5 refused calls: a valid 6th is denied",
          sc.get("outcome") == "denied" and "budget of 5 calls" in
          sc.get("message", "") and 6 in msgs and status == 0,
          (msgs.get(5), status, err[-300:]))
    time.sleep(0.3)
    records, _ = audit(tmp)
    check("... the target saw nothing, no intent; four refusals folded",
          target.requests() == [] and
          "intent" not in [r["kind"] for r in records] and
          folded(records) == [("invalid-arguments", None),
                              ("invalid-arguments", 4),
                              ("budget-spent", None)],
          (target.requests(), folded(records)))


def test_sent_and_refused_share_the_budget(tmp, target):
    """calls_per_session 4: valid, refused, valid, refused, valid: the
    fifth is denied by the frontend, so the executor, which counts the
    calls it accepts, never has to refuse one on the budget."""
    p = start(get_item_and_fetch_policy(tmp, target.port,
                                        limits={"calls_per_session": 4}))
    data = INITIALIZE
    for i in range(5):
        data += call(i, arguments={"id": "n%d" % i} if i % 2 == 0
                     else BAD_ARGS[i])
    status, out, err = finish(p, data)
    got = {m.get("id"): m.get("result", {}).get("structuredContent", {})
           .get("outcome") for m in messages(out)}
    check("valid, refused, valid, refused: the fifth call is denied",
          [got.get(i) for i in range(5)] ==
          ["ok", "invalid", "ok", "invalid", "denied"] and status == 0,
          (got, err[-300:]))
    reqs = target.wait_requests(2)
    time.sleep(0.3)
    records, _ = audit(tmp)
    check("... two reached the target, two intents, no violation",
          # the two run at once: either may reach the target first
          sorted(r["path"] for r in target.requests()) ==
          ["/items/n0", "/items/n2"] and
          [r["kind"] for r in records].count("intent") == 2 and
          "violation" not in [r["kind"] for r in records],
          (reqs, [r["kind"] for r in records]))


def test_malformed_frames_fold(tmp, target):
    """on_invalid "reject": 5 000 identical parse errors leave one record
    and one with "repeated": 4999."""
    path = get_item_and_fetch_policy(tmp, target.port,
                                     server={"on_invalid": "reject"})
    bad = '{"jsonrpc": \u00e9 "$(id)"}\n'.encode()   # not JSON
    status, out, err = run(path, INITIALIZE + bad * 5000)
    time.sleep(0.3)
    records, size = audit(tmp)
    check("5 000 parse errors: 2 records, %d bytes of audit" % size,
          folded(records) == [("parse-error", None), ("parse-error", 4999)]
          and records[-1].get("rejections") == 5000 and status == 0,
          (folded(records)[:4], status, err[-300:]))


def alternating_policy(tmp, port):
    """calls_per_session 100000 and a tool the profile may not call, so
    two refusal reasons can alternate and nothing folds."""
    path = get_item_and_fetch_policy(tmp, port,
                                     limits={"calls_per_session": 100000})
    with open(path) as f:
        doc = json.load(f)
    doc["tools"].append({"name": "put_item", "description": "Write one.",
                         "target": "api", "scope": "write",
                         "mutating": True,
                         "http": {"method": "PUT", "path": "/items/{id}"},
                         "params": {"id": {"type": "string",
                                           "maxLength": 64}}})
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_notes_limit(tmp, target):
    """Refusals that alternate between two reasons fold into nothing:
    after 1 MiB of them the broker writes no more, ends the session in
    order and says why; every call that reached the target still has its
    intent (an intent is never dropped)."""
    data = INITIALIZE
    for i in range(1, 10001):
        if i % 1000 == 0:
            data += call(i, arguments={"id": "v%d" % i})
        elif i % 2:
            data += call(i, "put_item", {"id": "w\"$(id)\"%d" % i})
        else:
            data += call(i, arguments=BAD_ARGS[i % len(BAD_ARGS)])
    status, out, err = run(alternating_policy(tmp, target.port), data)
    time.sleep(0.3)
    records, size = audit(tmp)
    end = records[-1]
    with open(os.path.join(tmp, "audit.jsonl"), "rb") as f:
        notes = sum(len(l) + 1 for l in f.read().split(b"\n")
                    if b'"kind":"rejection"' in l)
    check("alternating refusals: the session ends on the audit limit",
          end["kind"] == "session-end" and
          end["why"] == "audit limit reached" and end["audit_dropped"] > 0
          and status == 0, (end, status, err[-300:]))
    check("... %d bytes of rejections written, %d dropped, file %d bytes"
          % (notes, end.get("audit_dropped", 0), size),
          NOTES_MAX * 0.9 < notes < NOTES_MAX + 4096 and
          size < NOTES_MAX + 64 * 1024, (notes, size))
    intents = [r for r in records if r["kind"] == "intent"]
    check("... %d calls reached the target, each with its intent" %
          len(target.requests()),
          len(intents) == len(target.requests()) and
          end["audit_failures"] == 0,
          (len(intents), len(target.requests()), end))


def main():
    for test in (test_ten_thousand_refusals, test_valid_call_after_budget,
                 test_sent_and_refused_share_the_budget,
                 test_malformed_frames_fold, test_notes_limit):
        tmp = tmpdir()
        target = Target(tmp, "recorder")
        try:
            test(tmp, target)
        finally:
            target.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()

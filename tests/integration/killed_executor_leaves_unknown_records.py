#!/usr/bin/env python3
"""An executor killed mid-call (docs/design.md section 1, invariant 6): the
client is told "unknown", and the audit log says the same.  Two calls
(one read-only, one mutating) are held by a local HTTP target that does
not answer; a third has completed.  After kill -9 of the executor the
broker writes, before session-end, an execution record with outcome
"unknown" for each held call's intent and none for the completed one,
and `sp audit verify` passes.

And the other way round: calls cancelled while their intent waits for
the broker's ack (test hook broker:late-intent-ack) never run, and the
executor says so with an execution record of its own, so the broker has
no open call left to call unknown, and a session whose max_inflight is 2
still runs a fourth call after three such cancellations."""
import json
import os
import signal
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402
from sptest.mcp import INITIALIZE, outcome, request, responses  # noqa: E402
from sptest.mcp import cancel  # noqa: E402
from sptest.policy import get_and_put_item_policy  # noqa: E402
from sptest.procfs import confined_children, gone_within  # noqa: E402
from sptest.run import (SP_TEST, finish, read_line, start,  # noqa: E402
                        stop, tmpdir)
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

HELD = 2


def holding_target():
    """Every request whose path holds "hold" waits until released."""
    return Target(lifetime=600, hold_matching="hold")


def wait_for_requests(target, n, timeout=30):
    return [r["path"] for r in target.wait_requests(n, timeout)]


def call(rid, tool, item):
    return request(rid, "tools/call", {"name": tool, "arguments": {
        "id": item, "card": "4111-0000-9876", "n": -3}})


def cancelled_before_start():
    tmp = tmpdir()
    srv = holding_target()
    cfg = get_and_put_item_policy(tmp, srv.url)
    with open(cfg) as f:
        doc = json.load(f)
    doc["limits"]["max_inflight"] = 2
    with open(cfg, "w") as f:
        json.dump(doc, f)
    log = os.path.join(tmp, "audit.jsonl")
    p = start(cfg, binary=SP_TEST, hook="broker:late-intent-ack")
    data = INITIALIZE
    for i, rid in enumerate(("c-1", "c \"2\"", -3)):
        data += call(rid, "put_item" if i % 2 else "get_item",
                     "never-%d" % i) + cancel(rid)
    data += call("after", "get_item", "after-\u00e9")
    p.stdin.write(data)
    p.stdin.flush()
    read_line(p, 10)				# initialize
    answer = read_line(p, 30)
    status, out, err = finish(p, timeout=30)
    got = responses(answer + out)
    check("cancelled calls: the call after them is answered ok with "
          "max_inflight 2", outcome(got.get("after")) == "ok" and
          status == 0, (got, status, err))
    paths = wait_for_requests(srv, 1, 5)
    check("only that call reached the target", len(paths) == 1 and
          "after" in paths[0], paths)
    recs, tail = read_log(log)
    intents = sorted(r["call"] for r in recs if r["kind"] == "intent")
    execs = [r for r in recs if r["kind"] == "execution"]
    check("the cancelled calls had intents (they were cancelled while "
          "their intent waited)", len(intents) >= 3, recs)
    check("every intent has one execution, none unknown, all from the "
          "executor", intents == sorted(r["call"] for r in execs) and
          not any(r["outcome"] == "unknown" or r["from"] != "executor"
                  for r in execs), recs)
    check("no intent was refused", "refused" not in err and
          recs[-1].get("audit_failures") == 0, err)
    status, verr = verify(log)
    check("sp audit verify passes after the cancellations", status == 0,
          verr)
    srv.stop()


def main():
    cancelled_before_start()
    tmp = tmpdir()
    srv = holding_target()
    cfg = get_and_put_item_policy(tmp, srv.url)
    log = os.path.join(tmp, "audit.jsonl")
    p = start(cfg)
    p.stdin.write(INITIALIZE + call("done-1", "get_item", "plain"))
    p.stdin.flush()
    read_line(p, 10)				# initialize
    first = read_line(p, 10)			# the completed call
    check("a first call completes", b'"done-1"' in first, first)
    p.stdin.write(call("held \"r\" $(id)", "get_item", "hold-\"r\"-%2e%2e") +
                  call(-7, "put_item", "hold-\u00e9-$(x)"))
    p.stdin.flush()
    paths = wait_for_requests(srv, 1 + HELD)
    kids = confined_children(p.pid)
    if not check("both held calls reached the target and wait there",
                 len(paths) == 1 + HELD and "executor" in kids,
                 (paths, kids)):
        srv.release("hold")
        stop(p)
        done()
    os.kill(kids["executor"], signal.SIGKILL)
    status, out, err = finish(p, timeout=30)
    srv.release("hold")
    got = responses(first + out)
    check("the session ends with 70", status == 70, err)
    check("the client was told unknown for both held calls",
          outcome(got.get("held \"r\" $(id)")) == "unknown" and
          outcome(got.get(-7)) == "unknown", got)
    check("nothing left running", gone_within(kids.values(), 5), kids)

    recs, tail = read_log(log)
    intents = {r["call"]: r for r in recs if r["kind"] == "intent"}
    execs = [r for r in recs if r["kind"] == "execution"]
    by_call = {}
    for r in execs:
        by_call.setdefault(r["call"], []).append(r)
    check("three intents, and exactly one execution for each",
          len(intents) == 3 and sorted(by_call) == sorted(intents) and
          all(len(v) == 1 for v in by_call.values()), recs)
    unknown = [r for r in execs if r.get("outcome") == "unknown"]
    check("the two held calls have execution records with outcome "
          "unknown, written by the broker",
          len(unknown) == HELD and
          all(r["from"] == "broker" and r["reason"] == "executor-ended"
              for r in unknown) and
          sorted(r["tool"] for r in unknown) == ["get_item", "put_item"],
          unknown)
    check("the completed call keeps its own execution (ok, from the "
          "executor)", [r.get("outcome") for r in execs
                        if r["from"] == "executor"] == ["ok"], execs)
    end = [i for i, r in enumerate(recs) if r["kind"] == "session-end"]
    last_exec = max(i for i, r in enumerate(recs)
                    if r["kind"] == "execution")
    check("the unknown records come before session-end, which counts "
          "them", len(end) == 1 and last_exec < end[0] and
          recs[end[0]]["executions"] == 3 and
          recs[end[0]]["intents"] == 3, recs[-3:])
    check("stderr says how many calls were audited as unknown",
          "the executor ended with 2 calls unreported" in err, err)
    status, verr = verify(log)
    check("sp audit verify passes", status == 0 and tail == b"", verr)
    srv.stop()
    done()


main()

#!/usr/bin/env python3
"""The executor enforces the session's limits itself (DESIGN.md invariant
3): a compromised frontend (the test build's forge-burst hook) sends five
well-formed actions at once, past the frontend's own counting.  With
limits.calls_per_session 3, exactly three reach the HTTP target; with
limits.max_inflight 2 and a slow target, exactly two do.  Each refused
call is answered "denied" with a message naming the limit, and audited as
a violation from the executor."""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_lib import HttpTarget, write_policy  # noqa
from proc_lib import (INITIALIZE, SP_TEST, check, done, finish,  # noqa
                      start, tmpdir)

DENIED = "4"  # enum record_outcome


def doc(tmp, port, path, limits):
    limits = dict(limits, call_timeout_ms=5000)
    return {
        "sallyport": 1,
        "server": {"name": "exec-limits"},
        "limits": limits,
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": path},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["read"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


def run(name, path, limits, reached, reason, words):
    tmp = tmpdir()
    target = HttpTarget(tmp)
    try:
        config = write_policy(tmp, doc(tmp, target.port, path, limits))
        p = start(config, binary=SP_TEST, hook="frontend:forge-burst")
        status, _, err = finish(p, INITIALIZE, timeout=20)
        requests = target.requests()
    finally:
        target.stop()
    check("%s: the session ends with 0" % name, status == 0, err)
    check("%s: exactly %d of 5 forged calls reach the target" %
          (name, reached), len(requests) == reached,
          [r.get("path") for r in requests])
    answers = re.findall(r"forge burst: call (\d+) outcome (\d+): (.*)", err)
    denied = [a for a in answers if a[1] == DENIED]
    check("%s: the other %d are answered denied, naming the limit" %
          (name, 5 - reached), len(answers) == 5 and
          len(denied) == 5 - reached and
          all(words in a[2] for a in denied), err)
    audit = os.path.join(tmp, "audit.jsonl")
    log = [json.loads(l) for l in open(audit).read().splitlines()]
    v = [r for r in log if r["kind"] == "violation"]
    check("%s: each refusal audited as %s from the executor" % (name, reason),
          len(v) == 5 - reached and
          all(r.get("reason") == reason and r.get("from") == "executor"
              for r in v), v)
    check("%s: session-end counts them" % name,
          log[-1]["kind"] == "session-end" and
          log[-1].get("violations") == 5 - reached, log[-1])


def main():
    run("calls_per_session", "/items/{id}",
        {"calls_per_session": 3}, 3, "calls-per-session-exceeded",
        "limits.calls_per_session")
    run("max_inflight", "/slow/400/{id}",
        {"max_inflight": 2}, 2, "max-inflight-exceeded",
        "limits.max_inflight")
    done()


main()

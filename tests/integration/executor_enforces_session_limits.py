#!/usr/bin/env python3
"""The executor enforces the session's limits itself (docs/design.md invariant
3): a compromised frontend (the test build's forge-burst hook) sends five
well-formed actions at once, past the frontend's own counting.  With
limits.calls_per_session 3, exactly three reach the HTTP target; with
limits.max_inflight 2 and a target that holds each request until the
test releases it -- once the other three were refused, an event, not a
guessed response time -- exactly two do.  Each refused
call is answered "denied" with a message naming the limit, and audited as
a violation from the executor."""
import json
import os
import re
import select
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP_TEST, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

DENIED = "4"  # enum record_outcome


def doc(tmp, port, path, limits):
    limits = dict(limits, call_timeout_ms=120000)
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


def stderr_until(p, pattern, n, timeout=60):
    """sp's stderr as it comes, until pattern matched n times or timeout."""
    fd, data = p.stderr.fileno(), b""
    end = time.monotonic() + timeout
    while len(re.findall(pattern, data)) < n:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace")


def run(name, path, limits, reached, reason, words):
    tmp = tmpdir()
    target = Target(tmp, lifetime=600)
    try:
        config = write_policy(tmp, doc(tmp, target.port, path, limits))
        p = start(config, binary=SP_TEST, hook="frontend:forge-burst")
        p.stdin.write(INITIALIZE)
        p.stdin.flush()
        # The refusals come back while the admitted calls are held.
        denial = rb"forge burst: call \d+ outcome " + DENIED.encode()
        early = stderr_until(p, denial, 5 - reached)
        check("%s: %d refusals answered while the admitted calls wait" %
              (name, 5 - reached),
              len(re.findall(denial.decode(), early)) == 5 - reached, early)
        target.release("burst")
        status, _, err = finish(p, timeout=120)
        err = early + err
        requests = [r for r in target.requests()
                    if not r["path"].startswith("/release/")]
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
    run("max_inflight", "/hold/burst/{id}",
        {"max_inflight": 2}, 2, "max-inflight-exceeded",
        "limits.max_inflight")
    done()


main()

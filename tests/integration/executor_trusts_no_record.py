#!/usr/bin/env python3
"""The executor trusts no record (docs/design.md invariant 3).  A compromised
frontend (the test build's forge hook) sends action records that each
break one check: the executor refuses each, answers the call as invalid or
denied, counts it and has it audited as a violation; a good record passes
every check and reaches the HTTP engine and the target, which is up and
counts: the forged records reach it never, the good one and the real
call once each."""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, only_protocol, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP_TEST, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import shared_target  # noqa: E402

TOOLS = [
    {"name": "get_item", "description": "Read one item.", "target": "api",
     "scope": "read", "http": {"method": "GET", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
    {"name": "put_item", "description": "Replace one item.", "target": "api",
     "scope": "write", "mutating": True,
     "http": {"method": "PUT", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
]

# case -> (outcome number of enum record_outcome, audited reason)
EXPECTED = {
    "index": (5, "tool-index-out-of-range"),
    "fingerprint": (5, "fingerprint-mismatch"),
    "values": (5, "invalid-values"),
    "scope": (4, "scope-not-granted"),
}


def main():
    tmp = tmpdir()
    p = start(shared_target_policy(tmp, tools=TOOLS), binary=SP_TEST,
              hook="frontend:forge")
    status, out, err = finish(p, INITIALIZE + request(1, "tools/call", {
        "name": "get_item", "arguments": {"id": "x\"y\n$(z)"}}))
    check("the session itself goes on and ends with 0", status == 0, err)
    outcomes = dict(re.findall(r"forge (\w+): call \d+ outcome (\d+)", err))
    for case, (outcome, reason) in EXPECTED.items():
        check("forged %s: answered with outcome %d" % (case, outcome),
              outcomes.get(case) == str(outcome), err)
    check("the good record passes every check: answered ok by the target",
          re.search(r"forge good: call 5 outcome 1: HTTP 200", err)
          is not None, err)
    # sp has ended: every connection it made is queued at the target.
    conns, reqs = shared_target().seen()
    check("the target saw two requests, on their own paths: the good "
          "record's and the real call's (%d)" % len(reqs),
          len(reqs) == 2 and len(conns) <= 2 and
          "/items/x%22y%0A%24%28z%29" in [r["path"] for r in reqs],
          (conns, reqs))
    log = [json.loads(l) for l in
           open(os.path.join(tmp, "audit.jsonl")).read().splitlines()]
    reasons = [r.get("reason") for r in log if r["kind"] == "violation"]
    want = [r for _, r in EXPECTED.values()] + ["undecodable-action"]
    check("each refusal is audited as a violation, in order",
          reasons == want, reasons)
    check("violations come from the executor, with the record's hash",
          all(r.get("from") == "executor" and len(r.get("sha256", "")) == 64
              for r in log if r["kind"] == "violation"), log)
    end = log[-1]
    check("session-end counts 5 violations and 0 rejections apart",
          end["kind"] == "session-end" and end.get("violations") == 5 and
          end.get("rejections") == 0, end)
    lines = out.splitlines()
    result = json.loads(lines[-1]) if lines else {}
    sc = result.get("result", {}).get("structuredContent", {})
    check("a real tools/call through the frontend: outcome ok, HTTP 200, "
          "not an error", only_protocol(out) is None and
          sc.get("outcome") == "ok" and sc.get("http", {}).get("status") ==
          200 and result["result"].get("isError") is False, out)
    done()


main()

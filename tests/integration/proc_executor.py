#!/usr/bin/env python3
"""The executor trusts no record (DESIGN.md invariant 3).  A compromised
frontend (the test build's forge hook) sends action records that each
break one check: the executor refuses each, answers the call as invalid or
denied, counts it and has it audited as a violation; a good record passes
every check and reaches the HTTP engine: its target (port 9) refuses the
connection, so it is answered "failed"."""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_lib import (INITIALIZE, SP_TEST, check, done, finish,  # noqa
                      only_protocol, policy, request, start, tmpdir)

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
    p = start(policy(tmp, tools=TOOLS), binary=SP_TEST,
              hook="frontend:forge")
    status, out, err = finish(p, INITIALIZE + request(1, "tools/call", {
        "name": "get_item", "arguments": {"id": "x\"y\n$(z)"}}))
    check("the session itself goes on and ends with 0", status == 0, err)
    outcomes = dict(re.findall(r"forge (\w+): call \d+ outcome (\d+)", err))
    for case, (outcome, reason) in EXPECTED.items():
        check("forged %s: answered with outcome %d" % (case, outcome),
              outcomes.get(case) == str(outcome), err)
    check("the good record passes every check: refused at connect",
          re.search(r"forge good: call 5 outcome 2: .*connect", err)
          is not None, err)
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
    check("a real tools/call through the frontend: outcome failed, "
          "connection refused, isError", only_protocol(out) is None and
          sc.get("outcome") == "failed" and
          "connect" in sc.get("message", "") and
          result["result"].get("isError") is True, out)
    done()


main()

#!/usr/bin/env python3
"""A confirm tool called in a 2026-07-28 (modern) session: the
input_required flow is not built, so the call fails closed -- denied at
once, saying why, with a rejection in the audit log and no request at the
HTTP target -- while a read tool in the same session still works
(docs/design.md section 8.2; the legacy flow is tests/sdk/sdk_confirm.mjs)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from confirm_lib import audit_records, write_policy  # noqa: E402
from front_lib import Target  # noqa: E402
from proc_lib import check, done, finish, request, start, tmpdir  # noqa: E402

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def modern_call(rid, name, arguments):
    return request(rid, "tools/call", {"name": name, "arguments": arguments,
                                       "_meta": META})


def main():
    tmp = tmpdir()
    target = Target(tmp)
    cfg = write_policy(tmp, target.port)
    p = start(cfg)
    _, out, err = finish(p, modern_call(1, "create_item",
                                     {"name": "w \u00e9", "qty": 5}) +
                      modern_call(2, "get_item", {"id": "r1"}),
                      timeout=60)
    msgs = {m.get("id"): m for m in (json.loads(l) for l in out.splitlines()
                                     if l.strip())}
    sc = msgs.get(1, {}).get("result", {}).get("structuredContent", {})
    check("modern session, confirm tool: denied at once",
          sc.get("outcome") == "denied" and
          msgs[1]["result"].get("isError") is True, msgs.get(1))
    check("... saying it asks only in 2025-11-25 sessions",
          "only in protocol 2025-11-25 sessions" in sc.get("message", ""),
          sc)
    check("... nothing was sent to the target",
          [r for r in target.requests() if r["method"] == "POST"] == [],
          target.requests())
    check("... a rejection in the audit log names why, no confirmation",
          any(r.get("kind") == "rejection" and
              r.get("reason") == "confirm-not-in-this-era"
              for r in audit_records(tmp)) and
          not any(r.get("kind") in ("confirmation", "intent") and
                  r.get("tool") == "create_item"
                  for r in audit_records(tmp)),
          audit_records(tmp))
    check("... while a read tool in the same session runs",
          msgs.get(2, {}).get("result", {}).get("structuredContent", {})
          .get("outcome") == "ok", msgs.get(2))
    target.stop()
    return done()


if __name__ == "__main__":
    sys.exit(main())

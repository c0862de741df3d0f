#!/usr/bin/env python3
"""A duplicate whose first result has left the executor's ring
(docs/design.md section 9: the last DISPATCH_KEPT_MAX, 32, mutating
results are kept): the real sp mcp against a real HTTP target counting
what reached it.

- within dedupe_ms, after 32 other mutating calls ended, an identical
  call is answered failed, saying the result is no longer held, and
  never reaches the target;
- the call just inside the ring (the oldest of the last 32) is still
  answered with a copy of its result, marked duplicate_of."""
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

KEPT = 32  # DISPATCH_KEPT_MAX, executor/dispatch_int.h


def doc(tmp, port):
    return {
        "sallyport": 1,
        "server": {"name": "limits-dup-ring"},
        "limits": {"call_timeout_ms": 120000, "dedupe_ms": 3600000},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [{"name": "put_item", "description": "Store an item.",
                   "target": "api", "scope": "rw", "mutating": True,
                   "http": {"method": "PUT", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["rw"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


def reached(target):
    return [urllib.parse.unquote(r["path"][len("/items/"):])
            for r in target.requests() if r["path"].startswith("/items/")]


def main():
    tmp = tmpdir()
    target = Target(tmp, lifetime=600)
    values = ["first 'q' $(id)"] + ["-v%d\nü" % n for n in range(1, KEPT + 1)]
    try:
        s = Session(write_policy(tmp, doc(tmp, target.port)))
        answers = {}
        for n, v in enumerate(values):
            s.call(10 + n, "put_item", {"id": v})
            answers.update(s.wait([10 + n]))
        check("%d different calls pass" % len(values),
              all(structured(answers.get(10 + n)).get("outcome") == "ok"
                  for n in range(len(values))), answers)
        s.call(100, "put_item", {"id": values[0]})
        gone = structured(s.wait([100]).get(100))
        check("the duplicate of a call whose result left the ring is "
              "answered failed", gone.get("outcome") == "failed" and
              "no longer held" in gone.get("message", ""), gone)
        s.call(101, "put_item", {"id": values[1]})
        kept = structured(s.wait([101]).get(101))
        first = structured(answers.get(11))
        check("the oldest result still in the ring is copied, marked "
              "duplicate_of", kept.get("outcome") == "ok" and
              kept.get("duplicate_of") is not None and
              kept.get("http") == first.get("http"), (kept, first))
        status = s.close()
    finally:
        target.stop()
    check("each value reached the target once, the duplicates never",
          sorted(reached(target)) == sorted(values), reached(target))
    check("the session ends with 0", status == 0,
          s.stderr.decode("utf-8", "replace"))
    done()


main()

#!/usr/bin/env python3
"""min_interval_ms with state_dir (docs/design.md section 9) is shared by
every sp mcp of the host, like per_day: real sp processes sharing one
state_dir, and a real HTTP target counting what reached it.

- a second live session's identical call inside the interval is denied
  and never reaches the target; a call with another value is not;
- a session started after the first ended (a client that reconnects) is
  denied the identical call too;
- after the interval the identical call passes again;
- a line of the older format ({"day","tool","who"}, no key) is still
  read: it counts for per_day."""
import json
import os
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

INTERVAL_MS = 20000  # far above a session's start on a loaded machine
WHO = "profile:default"  # pipes carry no peer uid: per profile
SAME = "x 'q' $(id)\n-ü"


def doc(tmp, port, state):
    def tool(name, limits):
        return {"name": name, "description": "Limited.",
                "target": "api", "scope": "read",
                "http": {"method": "GET", "path": "/" + name + "/{id}"},
                "params": {"id": {"type": "string", "maxLength": 64}},
                "limits": limits}
    return {
        "sallyport": 1,
        "server": {"name": "limits-interval"},
        "limits": {"call_timeout_ms": 120000},
        "state_dir": state,
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [tool("poll_item", {"min_interval_ms": INTERVAL_MS}),
                  tool("count_item", {"per_day": 2})],
        "profiles": {"default": {"scopes": ["read"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


class Caller:
    def __init__(self, config):
        self.s = Session(config)
        self.next = 100

    def call(self, tool, value):
        self.next += 1
        self.s.call(self.next, tool, {"id": value})
        return structured(self.s.wait([self.next]).get(self.next))


def reached(target, tool):
    return [urllib.parse.unquote(r["path"][len(tool) + 2:])
            for r in target.requests()
            if r["path"].startswith("/" + tool + "/")]


def within(t0, what):
    elapsed = (time.monotonic() - t0) * 1000
    check("%s: still inside the interval (%d of %d ms)" %
          (what, elapsed, INTERVAL_MS), elapsed < INTERVAL_MS - 1000)


def interval(config, target):
    a, b = Caller(config), Caller(config)
    t0 = time.monotonic()
    first = a.call("poll_item", SAME)
    check("the first session's call passes", first.get("outcome") == "ok",
          first)
    second = b.call("poll_item", SAME)
    within(t0, "the second session")
    m = second.get("message", "")
    check("a second live session's identical call is denied by "
          "min_interval_ms", second.get("outcome") == "denied" and
          "min_interval_ms of poll_item" in m and "allowed again at 20" in m,
          second)
    other = b.call("poll_item", "other value")
    check("another value is not refused", other.get("outcome") == "ok", other)
    status = [a.s.close()]
    c = Caller(config)
    again = c.call("poll_item", SAME)
    within(t0, "the reconnected session")
    check("a session started after the first ended is denied too",
          again.get("outcome") == "denied", again)
    check("the denied calls never reached the target",
          sorted(reached(target, "poll_item")) == sorted([SAME,
                                                          "other value"]),
          reached(target, "poll_item"))
    time.sleep(max(0.0, t0 + INTERVAL_MS / 1000 + 1 - time.monotonic()))
    after = b.call("poll_item", SAME)
    check("after the interval the identical call passes",
          after.get("outcome") == "ok", after)
    check("two identical requests reached the target, in all",
          reached(target, "poll_item").count(SAME) == 2,
          reached(target, "poll_item"))
    return a, b, c, status


def old_lines(c, target, state_file):
    with open(state_file, "a") as f:
        f.write(json.dumps({"day": int(time.time() // 86400),
                            "tool": "count_item", "who": WHO}) + "\n")
    r = [c.call("count_item", "1"), c.call("count_item", "2")]
    check("a line of the older format counts for per_day: one of two left",
          [x.get("outcome") for x in r] == ["ok", "denied"], r)
    check("one count_item request reached the target",
          reached(target, "count_item") == ["1"],
          reached(target, "count_item"))
    with open(state_file) as f:
        lines = [json.loads(l) for l in f.read().split("\n") if l]
    polls = [l for l in lines if l.get("tool") == "poll_item"]
    check("each passing poll_item call left its key and start",
          len(polls) == 3 and all(len(l.get("key", "")) == 64 and
                                  isinstance(l.get("start"), int)
                                  for l in polls), polls)


def main():
    tmp = tmpdir()
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    state_file = os.path.join(state, "limits.jsonl")
    target = Target(tmp, lifetime=600)
    try:
        config = write_policy(tmp, doc(tmp, target.port, state))
        a, b, c, status = interval(config, target)
        old_lines(c, target, state_file)
        status += [b.s.close(), c.s.close()]
    finally:
        target.stop()
    err = (a.s.stderr + b.s.stderr + c.s.stderr).decode("utf-8", "replace")
    check("the sessions end with 0", status == [0, 0, 0], err)
    done()


main()

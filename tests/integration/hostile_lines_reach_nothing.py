#!/usr/bin/env python3
"""The article's two tests through the real `sp mcp`, a real executor and
a real HTTP target: every hostile line in a fresh session yields exactly
one error, the session closes with 65, and the target's request log stays
empty even when a valid tools/call follows; one complete valid request
executes exactly once.  Then the same session in noisy surroundings:
stdout stays pure protocol."""
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, call, first_bad_line, messages  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

MAX_FRAME = 4096
FOLLOW = call(99)	# a valid call after the bad line: must never run

# (name, bytes sent after initialize).  Each is followed by FOLLOW unless
# the input ends inside it.
HOSTILE = [
    ("debug line before a valid request",
     b"DEBUG: connecting to \"api\" $(id)\n" + call(1)),
    ("banner after a valid request on the same line",
     call(1)[:-1] + b" Server ready \xc3\xa9\n"),
    ("two joined objects", call(1)[:-1] + call(2)),
    ("plausible method with malformed params",
     b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"get_item"}\n'),
    ("invalid UTF-8",
     b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":'
     b'{"name":"get_item","arguments":{"id":"\xc0\xaf%2e%2e"}}}\n'),
    ("over-long line",
     b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":'
     b'{"name":"get_item","arguments":{"id":"' + b"x" * (2 * MAX_FRAME) +
     b'"}}}\n'),
    ("null", b"null\n"),
    ("jsonrpc 1.0",
     b'{"jsonrpc":"1.0","id":6,"method":"tools/call","params":'
     b'{"name":"get_item","arguments":{"id":"42"}}}\n'),
    ("a batch", b"[" + call(7)[:-1] + b"]\n"),
]
TRUNCATED = ("truncated JSON then end of input",
             b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":'
             b'{"name":"get_item","argu')


def one_hostile(config, target, name, data):
    conns0, reqs0 = target.seen()
    p = start(config)
    status, out, err = finish(p, INITIALIZE + data, timeout=15)
    bad = first_bad_line(out, expect_lines=2)
    msgs = messages(out) if bad is None else []
    errors = [m for m in msgs if "error" in m]
    check("%s: stdout is the initialize answer and one error" % name,
          bad is None and len(errors) == 1 and "result" in msgs[0],
          bad or out)
    check("%s: the session closes with 65" % name, status == 65,
          "status %r; %s" % (status, err))
    # sp has ended; seen() waits until what it sent is logged.
    conns, reqs = target.seen()
    conns, reqs = conns[len(conns0):], reqs[len(reqs0):]
    check("%s: the target saw no connection and no request" % name,
          conns == [] and reqs == [], (conns, reqs))


def valid_once(config, target):
    _, reqs0 = target.seen()
    p = start(config)
    status, out, err = finish(p, INITIALIZE + call("once \"1\""), timeout=15)
    bad = first_bad_line(out, expect_lines=2)
    check("one valid request: two answers, pure protocol", bad is None,
          bad or out)
    check("one valid request: exit 0 at end of input", status == 0, err)
    msgs = messages(out) if bad is None else []
    reqs = target.seen()[1][len(reqs0):]
    check("one valid request executes exactly once",
          len(reqs) == 1 and reqs[0]["path"] == "/items/42", reqs)
    res = msgs[1].get("result", {}) if len(msgs) > 1 else {}
    check("... and its answer is outcome ok",
          res.get("structuredContent", {}).get("outcome") == "ok", msgs)


def noisy(config, target, tmp):
    quiet = os.path.join(tmp, "empty-dir")
    os.mkdir(quiet)
    env = {"LD_DEBUG": "statistics", "MALLOC_CHECK_": "3",
           "SP_CONFIG": "", "HOME": quiet}
    p = start(config, env=env, cwd=quiet)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    first = p.stdout.readline()
    time.sleep(3)		# a first request after a long idle
    p.stdin.write(call("idle") + call(2, arguments={"id": "a\"b\n$()"}))
    status, out, err = finish(p, b"", timeout=15)
    out = first + out
    bad = first_bad_line(out, expect_lines=3)
    check("noisy surroundings (LD_DEBUG, MALLOC_CHECK_, no config dir, "
          "idle): stdout is pure protocol", bad is None, bad or out)
    check("noisy surroundings: exit 0", status == 0, err[-2000:])


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    try:
        config = get_item_and_fetch_policy(
            tmp, target.port, limits={"max_frame_bytes": MAX_FRAME})
        for name, data in HOSTILE:
            one_hostile(config, target, name, data + FOLLOW)
        one_hostile(config, target, *TRUNCATED)
        valid_once(config, target)
        noisy(config, target, tmp)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

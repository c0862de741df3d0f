#!/usr/bin/env python3
"""The 2026-07-28 era through the real sp mcp, on raw frames
(docs/design.md sections 5 and 6), counting what reached a real HTTP
target and what the audit log holds:

- a modern tools/call without its _meta envelope, with an unsupported
  version, or without client capabilities reaches nothing (-32600 before
  any era, -32602, -32022); a good one reaches the target once;
- initialize, ping and logging/setLevel in a modern session, and
  server/discover in a legacy one, are -32601;
- a process that answered only server/discover and ping leaves no
  session in the audit log, whether its input ends or it is sent SIGTERM
  (the v2 SDK's probe sibling); one given anything else leaves one;
- progress (tests/sp-test, interval shortened with SP_TEST_PROGRESS_MS):
  a call with a progress token gets notifications/progress carrying the
  token as sent, with increasing values, and none after its response; a
  call without one gets none; in both eras."""
import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, messages, request  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import (SP_TEST, finish, read_line,  # noqa: E402
                        start, tmpdir)
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
META = {VERSION: "2026-07-28", CAPS: {}}
PROGRESS_MS = 100


def modern(rid, method, params=None, meta=META):
    p = dict(params or {})
    if meta is not None:
        p["_meta"] = meta
    return request(rid, method, p)


def get_item(rid, item, meta=META):
    return modern(rid, "tools/call", {"name": "get_item",
                                      "arguments": {"id": item}}, meta)


def by_id(msgs):
    return {json.dumps(m.get("id")): m for m in msgs if "id" in m}


def code(m):
    return m.get("error", {}).get("code")


def audit_kinds(tmp):
    path = os.path.join(tmp, "audit.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l)["kind"] for l in f if l.strip()]


def test_envelope(tmp, target, config):
    frames = (get_item(1, "before", meta=None) +
              modern("d", "server/discover") +
              get_item(2, "no-meta", meta=None) +
              get_item(3, "no-caps", meta={VERSION: "2026-07-28"}) +
              get_item(4, "old", meta={VERSION: "2025-11-25", CAPS: {}}) +
              get_item(5, "future", meta={VERSION: "2026-07-29 $(x)",
                                          CAPS: {}}) +
              modern(6, "initialize", {"protocolVersion": "2025-11-25",
                                       "capabilities": {}}) +
              modern(7, "ping") +
              modern(8, "logging/setLevel", {"level": "debug"}) +
              get_item(9, "good \"one\" \u00e9"))
    status, out, err = finish(start(config), frames)
    got = by_id(messages(out))
    check("a modern call before any era, without _meta: -32600",
          code(got.get("1", {})) == -32600, got.get("1"))
    check("server/discover answers 2026-07-28 among its versions",
          "2026-07-28" in got.get('"d"', {}).get("result", {})
          .get("supportedVersions", []), got.get('"d"'))
    check("no _meta, no capabilities: -32602",
          code(got.get("2", {})) == -32602 and
          code(got.get("3", {})) == -32602, [got.get("2"), got.get("3")])
    data = got.get("5", {}).get("error", {}).get("data", {})
    offered = got.get('"d"', {}).get("result", {}).get("supportedVersions")
    check("another version: -32022 naming what server/discover offers",
          code(got.get("4", {})) == -32022 and code(got.get("5", {})) ==
          -32022 and data.get("supported") == offered and
          len(offered) == 3 and
          data.get("requested") == "2026-07-29 $(x)", (got.get("5"),
                                                        offered))
    check("initialize, ping, logging/setLevel: -32601 in the modern era",
          all(code(got.get(str(i), {})) == -32601 for i in (6, 7, 8)),
          [got.get(str(i)) for i in (6, 7, 8)])
    res = got.get("9", {}).get("result", {})
    check("the good call is ok, with resultType",
          res.get("resultType") == "complete" and
          res.get("structuredContent", {}).get("outcome") == "ok", res)
    paths = [r["path"] for r in target.wait_requests(1)]
    check("only the good call reached the target, once",
          paths == ["/items/good%20%22one%22%20%C3%A9"], paths)
    check("exit 0", status == 0, err)


def test_legacy_refuses_discover(config):
    frames = INITIALIZE + modern(1, "server/discover")
    status, out, err = finish(start(config), frames)
    got = by_id(messages(out))
    check("a legacy session answers server/discover -32601",
          code(got.get("1", {})) == -32601 and status == 0, got)


def probe_session(config, frames, terminate):
    p = start(config)
    if not terminate:
        return finish(p, frames)
    p.stdin.write(frames)
    p.stdin.flush()
    lines = [read_line(p, 10.0) for _ in range(frames.count(b"\n"))]
    p.send_signal(signal.SIGTERM)
    status, _, err = finish(p)
    return status, b"".join(l or b"" for l in lines), err


def test_probe_leaves_no_session(tmp, config):
    probe = modern("p", "server/discover") + request(2, "ping")
    for terminate in (False, True):
        before = audit_kinds(tmp)
        status, out, err = probe_session(config, probe, terminate)
        how = "SIGTERM" if terminate else "end of input"
        check("a probe answered (%s)" % how, len(messages(out)) == 2 and
              status == 0, (out, err))
        check("... and left nothing in the audit log (%s)" % how,
              audit_kinds(tmp) == before, audit_kinds(tmp)[len(before):])
        check("... and stderr says so in place of an anchor (%s)" % how,
              "ended unused" in err and "last hash" not in err, err)
    before = audit_kinds(tmp)
    finish(start(config), probe + b'{"jsonrpc":"2.0","id":3,\n')
    check("a probe followed by a bad frame is a session: start, rejection, "
          "end", audit_kinds(tmp)[len(before):] ==
          ["session-start", "rejection", "session-end"],
          audit_kinds(tmp)[len(before):])
    before = audit_kinds(tmp)
    finish(start(config), modern("p", "server/discover") +
           modern(1, "tools/list"))
    check("server/discover then tools/list: one session",
          audit_kinds(tmp)[len(before):] == ["session-start", "session-end"],
          audit_kinds(tmp)[len(before):])


def progress_session(config, first, token_call, plain_call):
    """Sends first (initialize or nothing), both calls (slow), waits for
    both answers, then ends input; the messages in order."""
    p = start(config, binary=SP_TEST,
              env={"SP_TEST_PROGRESS_MS": str(PROGRESS_MS)})
    p.stdin.write(first + token_call + plain_call)
    p.stdin.flush()
    msgs, end = [], time.monotonic() + 120  # far above need: load slows
    buf = b""
    while time.monotonic() < end and \
            sum(1 for m in msgs if m.get("id") in (1, 2)) < 2:
        # a line cut by the timeout is kept until its newline comes
        buf += read_line(p, max(0.1, end - time.monotonic()))
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            msgs.append(json.loads(line))
    time.sleep(3 * PROGRESS_MS / 1000.0)  # ticks after the answers
    status, out, err = finish(p)
    return msgs + messages(buf + out), status, err


def check_progress(label, msgs, token):
    prog = [m for m in msgs if m.get("method") == "notifications/progress"]
    values = [m["params"]["progress"] for m in prog]
    answered = next((i for i, m in enumerate(msgs) if m.get("id") == 1),
                    len(msgs))
    check("%s: progress for the call with a token, carrying it as sent" %
          label, len(prog) >= 5 and all(
              m["params"]["progressToken"] == token and
              type(m["params"]["progressToken"]) is type(token)
              for m in prog), prog[:3])
    check("%s: ... values increase" % label,
          all(b > a for a, b in zip(values, values[1:])), values)
    check("%s: ... none after its response, none for the call without one"
          % label, all(msgs.index(m) < answered for m in prog), msgs)
    ok = [m for m in msgs if m.get("id") in (1, 2)]
    check("%s: both calls completed" % label, len(ok) == 2 and all(
        m.get("result", {}).get("structuredContent", {}).get("outcome") ==
        "ok" for m in ok), ok)


def test_progress(config):
    slow = {"a": "slow", "b": "1500"}
    slower = {"a": "slow", "b": "2500"}
    # legacy, a string token that looks like an integer
    msgs, status, err = progress_session(
        config, INITIALIZE,
        request(1, "tools/call", {"name": "fetch", "arguments": slow,
                                  "_meta": {"progressToken": "0"}}),
        request(2, "tools/call", {"name": "fetch", "arguments": slower}))
    check_progress("legacy", msgs, "0")
    # modern, the integer token 0; the plain call ends last, so a
    # progress sent for it would be seen
    msgs, status, err = progress_session(
        config, b"",
        modern(1, "tools/call", {"name": "fetch", "arguments": slow},
               dict(META, progressToken=0)),
        modern(2, "tools/call", {"name": "fetch", "arguments": slower}))
    check_progress("modern", msgs, 0)


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    config = get_item_and_fetch_policy(tmp, target.port,
                                       limits={"max_inflight": 4})
    try:
        test_envelope(tmp, target, config)
        test_legacy_refuses_discover(config)
        test_probe_leaves_no_session(tmp, config)
        test_progress(config)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

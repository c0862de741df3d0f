#!/usr/bin/env python3
"""The MCP surface as a client sees it, through the real sp mcp:

- a full in-flight table (max_inflight 1, one slow call running) still
  reads a notifications/cancelled and a ping: the target sees the request
  aborted, the cancelled call is never answered, the ping is answered at
  once, and a tools/call sent behind the slow one waits and then runs;
- ids come back byte for byte with their type (0, negative, 2^53 - 1,
  strings with quotes, backslashes, control and multibyte characters, a
  string "1" next to the number 1), notifications and client responses
  get nothing, and stdout holds only whole JSON-RPC lines;
- a protocol version the server does not know is answered with
  2025-11-25, a known older one with itself;
- SIGTERM while a call waits for a slot answers it failed, unsent."""
import json
import os
import shutil
import signal
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, call, only_protocol, request  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import finish, read_line, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402


def cancel(rid):
    return (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": rid,
                                   "reason": "user \"stop\" $(id)"}})
            + "\n").encode()


def events(target, want, seconds=5.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seen = target.requests()
        if all(any(e.get("event") == ev and e.get("path") == path
                   for e in seen) for ev, path in want):
            return seen
        time.sleep(0.02)
    return target.requests()


def test_cancel_with_full_table(tmp, target):
    cfg = get_item_and_fetch_policy(tmp, target.port,
                                    limits={"max_inflight": 1})
    p = start(cfg)
    try:
        p.stdin.write(INITIALIZE)
        p.stdin.flush()
        read_line(p, 10)
        # The slow call runs 30 s, so "at once" can allow a loaded
        # machine 15 s and still tell a ping that waited for it.
        slow = {"a": "slow", "b": "30000"}
        p.stdin.write(call("s\"1", name="fetch", arguments=slow))
        p.stdin.flush()
        events(target, [("request", "/slow/30000")])
        t0 = time.monotonic()
        p.stdin.write(cancel("s\"1") + request(-2, "ping"))
        p.stdin.flush()
        line = read_line(p, 20.0)
        waited = time.monotonic() - t0
        check("max_inflight 1, one slow call running: a ping behind its "
              "cancel is answered at once",
              line == b'{"jsonrpc":"2.0","id":-2,"result":{}}\n' and
              waited < 15.0, (line, waited))
        seen = events(target, [("aborted", "/slow/30000")])
        check("... and the cancel reached the target: the request was "
              "aborted, not answered",
              any(e.get("event") == "aborted" for e in seen) and
              not any(e.get("event") == "answered" for e in seen), seen)
        # One more slow call fills the table; the next call waits for it.
        p.stdin.write(call(7, name="fetch",
                           arguments={"a": "slow", "b": "600"}) +
                      call(8, name="fetch",
                           arguments={"a": "n\u00e9", "b": "%2e%2e"}))
        p.stdin.flush()
        status, out, err = finish(p, timeout=15)
    except BaseException:
        p.kill()
        raise
    msgs = [json.loads(l) for l in out.splitlines()]
    ids = [m.get("id") for m in msgs]
    check("the cancelled call is never answered; the call behind the full "
          "table waits and runs after the one before it",
          ids == [7, 8] and all(m["result"]["isError"] is False
                                for m in msgs), out[-600:])
    paths = [e["path"] for e in target.requests() if e["event"] == "request"]
    check("... the target saw each request once, in that order",
          paths == ["/slow/30000", "/slow/600", "/n%C3%A9/%252e%252e"],
          paths)
    check("... exit 0", status == 0, err[-500:])


RAW_IDS = [b'0', b'-1', b'9007199254740991', b'-9007199254740991',
           b'""', b'"1"', b'1', b'"a\\"b\\\\c"', b'"\\u0001\\n\\t"',
           '"\u00e9\U0001F600\u2028 $(id) %2e%2e"'.encode(),
           b'"\\ud83d\\ude00"']


def test_ids_and_silence(tmp, target):
    cfg = get_item_and_fetch_policy(tmp, target.port)
    frames = [INITIALIZE,
              b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
              b'{"jsonrpc":"2.0","method":"notifications/unknown",'
              b'"params":{"x":1}}\n',
              b'{"jsonrpc":"2.0","id":55,"result":{}}\n',
              b'{"jsonrpc":"2.0","id":"q","error":{"code":-1,'
              b'"message":"no"}}\n',
              cancel(4242), cancel("0")]
    for rid in RAW_IDS:
        frames.append(b'{"jsonrpc":"2.0","id":' + rid +
                      b',"method":"ping"}\n')
    p = start(cfg)
    status, out, err = finish(p, b"".join(frames))
    check("stdout is whole JSON-RPC lines only", only_protocol(out) is None,
          only_protocol(out))
    lines = out.split(b"\n")[:-1]
    check("one answer per request: none for notifications or client "
          "responses", len(lines) == 1 + len(RAW_IDS), out[-800:])
    got = [json.loads(l) for l in lines[1:]]
    want = [json.loads(r) for r in RAW_IDS]
    check("each id comes back with its type and value",
          [(type(m["id"]), m["id"]) for m in got] ==
          [(type(w), w) for w in want] and
          all(m.get("result") == {} for m in got),
          [m["id"] for m in got])
    exact = lines[1 + RAW_IDS.index(b'9007199254740991')]
    check("2^53 - 1 is written as that integer, not a rounded float",
          exact == b'{"jsonrpc":"2.0","id":9007199254740991,"result":{}}',
          exact)
    check("... exit 0", status == 0, err[-500:])


def test_versions(tmp, target):
    cfg = get_item_and_fetch_policy(tmp, target.port)
    for asked, answer in (("2099-12-31", "2025-11-25"),
                          ("2025-03-26", "2025-11-25"),
                          ("2025-06-18", "2025-06-18")):
        init = request("v", "initialize", {
            "protocolVersion": asked, "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}})
        status, out, err = finish(start(cfg), init)
        result = json.loads(out.split(b"\n")[0]).get("result", {})
        check("protocolVersion %s is answered with %s" % (asked, answer),
              result.get("protocolVersion") == answer and status == 0,
              (out[:300], err[-300:]))


def test_term_with_a_waiting_call(tmp, target):
    """SIGTERM while one call runs and another waits for its slot: the
    running one ends and is answered, the waiting one is answered failed
    and never reaches the target (started late, it could outlast the
    broker's grace, which counts one call_timeout_ms)."""
    cfg = get_item_and_fetch_policy(tmp, target.port,
                                    limits={"max_inflight": 1})
    p = start(cfg)
    try:
        p.stdin.write(INITIALIZE +
                      call(1, name="fetch",
                           arguments={"a": "slow", "b": "1200"}) +
                      call("w\"2", name="fetch",
                           arguments={"a": "waiting", "b": "x"}))
        p.stdin.flush()
        read_line(p, 10)
        events(target, [("request", "/slow/1200")])
        p.send_signal(signal.SIGTERM)
        status, out, err = finish(p, timeout=15)
    except BaseException:
        p.kill()
        raise
    got = {m["id"]: m["result"]["structuredContent"]
           for m in map(json.loads, out.splitlines())}
    check("SIGTERM with a call waiting: the running call is answered ok, "
          "the waiting one failed",
          sorted(got, key=str) == [1, "w\"2"] and
          got[1]["outcome"] == "ok" and got["w\"2"]["outcome"] == "failed",
          out[-600:])
    # sp has ended: seen() waits until all it sent is logged
    paths = [e["path"] for e in target.seen()[1]
             if e["event"] == "request" and "/waiting/" in e["path"]]
    check("... and the waiting call never reached the target", paths == [],
          paths)
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        audit = [json.loads(l) for l in f]
    check("... the audit has its rejection, reason session-ended",
          [a.get("reason") for a in audit if a["kind"] == "rejection"] ==
          ["session-ended"], [a["kind"] for a in audit])
    check("... exit 0", status == 0, err[-500:])


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder", events=True)
    try:
        test_cancel_with_full_table(tmp, target)
        test_ids_and_silence(tmp, target)
        test_versions(tmp, target)
        test_term_with_a_waiting_call(tmp, target)
    finally:
        target.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()

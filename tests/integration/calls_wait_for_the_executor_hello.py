#!/usr/bin/env python3
"""The executor's hello is asynchronous (tests/sp-test hooks): while the
executor still loads, the frontend answers initialize, ping and
tools/list from the policy it holds; a tools/call sent meanwhile waits
and runs exactly once after the hello matched; a hello that does not
match lets nothing reach the target; an executor that dies before its
hello leaves the waiting calls answered "unknown", as calls in flight;
one that stays silent past the frontend's deadline ends the session."""
import json
import os
import shutil
import signal
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, call, request  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.procfs import children  # noqa: E402
from sptest.run import (SP_TEST, finish, read_line,  # noqa: E402
                        sanitized_build, start, stop, tmpdir)
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

SLOW_HELLO_S = 1.5      # TEST_HOOK_SLOW_HELLO_MS in child/test_hook.c
# Valid ids (maxLength 64) with quotes, $(), a newline, %2e%2e, multibyte.
IDS = ["plain-7", "it's \"$(id)\"\n", "%2e%2e/\u00e9t\u00e9 \u2603"]
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def lines_until(p, want, timeout):
    """Messages read until want(messages) holds or timeout passed, each
    with the time it was read (monotonic)."""
    end, got, pending = time.monotonic() + timeout, [], b""
    while not want([m for m, _ in got]) and time.monotonic() < end:
        if b"\n" not in pending:
            more = read_line(p, max(0.05, end - time.monotonic()))
            if not more:
                break
            pending += more
            continue
        line, pending = pending.split(b"\n", 1)
        got.append((json.loads(line), time.monotonic()))
    return got


def by_id(got):
    return {m.get("id"): (m, t) for m, t in got}


def test_slow_hello(tmp, target):
    """initialize, ping and tools/list are answered well before the
    executor is ready; the calls sent at once wait and each runs once."""
    p = start(get_item_and_fetch_policy(tmp, target.port), binary=SP_TEST,
              hook="executor:slow-hello")
    try:
        t0 = time.monotonic()
        p.stdin.write(INITIALIZE + INITIALIZED +
                      request(1, "ping") + request(2, "tools/list") +
                      b"".join(call(10 + i, arguments={"id": v})
                               for i, v in enumerate(IDS)))
        p.stdin.flush()
        want = [0, 1, 2] + [10 + i for i in range(len(IDS))]
        got = by_id(lines_until(p, lambda ms: sorted(
            m.get("id") for m in ms) == want, 10))
        early = [got.get(i, (None, t0 + 99))[1] - t0 for i in (0, 1, 2)]
        check("executor hello 1.5 s late: initialize, ping and tools/list "
              "answered first (%s s)" % ["%.2f" % e for e in early],
              all(e < SLOW_HELLO_S * 0.6 for e in early) and
              "protocolVersion" in got[0][0].get("result", {}) and
              got[1][0].get("result") == {} and
              [t["name"] for t in got[2][0]["result"]["tools"]] ==
              ["get_item", "fetch"], got)
        calls = [got.get(10 + i) for i in range(len(IDS))]
        check("... the %d calls sent at once are answered ok" % len(IDS),
              all(c is not None and c[0]["result"]["structuredContent"]
                  ["outcome"] == "ok" for c in calls), calls)
        check("... and only once the executor was ready",
              all(c is not None and c[1] - t0 >= SLOW_HELLO_S * 0.9
                  for c in calls),
              ["%.2f" % (c[1] - t0) for c in calls if c is not None])
        # answered: seen() waits until what reached the target is logged
        paths = sorted(r["path"] for r in target.seen()[1])
        check("... the target saw each call exactly once",
              len(paths) == len(IDS) and len(set(paths)) == len(IDS), paths)
    finally:
        status, out, err = finish(p)
    check("... no other line, and the session ends 0", status == 0 and
          out == b"", (status, out[:300], err[-300:]))


def audit_kinds(tmp):
    with open(os.path.join(tmp, "audit.jsonl"), encoding="utf-8") as f:
        return [json.loads(l)["kind"] for l in f if l.strip()]


def test_bad_hello(tmp, target):
    """A call sent before a hello that does not match never reaches the
    executor.  The hook gives the broker the right hello, so only the
    frontend stands in the way: had it sent the records, the executor
    would have written an intent (and often reached the target) before
    the frontend's exit ended the session."""
    p = start(get_item_and_fetch_policy(tmp, target.port), binary=SP_TEST,
              hook="executor:bad-hello")
    p.stdin.write(INITIALIZE + INITIALIZED + call(1, arguments={
        "id": IDS[1]}) + call(2, arguments={"id": IDS[2]}))
    p.stdin.flush()
    first = read_line(p, 5)
    check("executor with a wrong hello: initialize still answered",
          b'"protocolVersion"' in first, first)
    status, out, err = finish(p)
    conns, reqs = target.seen()		# sp has ended: all it sent is logged
    check("... nothing reaches the executor or the target",
          "intent" not in audit_kinds(tmp) and conns == [] and reqs == [],
          (audit_kinds(tmp), conns, reqs))
    check("... no call is answered ok and the session ends 70",
          status == 70 and b'"ok"' not in out, (status, out, err[-400:]))


def test_mute_hello(tmp, target):
    """An executor that never answers its hello (the hook sleeps 60 s)
    does not keep the session waiting for ever: after the frontend's 10 s
    deadline nothing held is sent, and the session ends 70."""
    p = start(get_item_and_fetch_policy(tmp, target.port), binary=SP_TEST,
              hook="executor:mute-hello")
    t0 = time.monotonic()
    p.stdin.write(INITIALIZE + INITIALIZED + call(1, arguments={
        "id": IDS[1]}))
    p.stdin.flush()
    first = read_line(p, 5)
    check("executor silent: initialize still answered",
          b'"protocolVersion"' in first, first)
    status, out, err = finish(p, timeout=90)
    took = time.monotonic() - t0
    check("... the session ends 70 after the 10 s deadline, before the "
          "executor would have answered (%.1f s)" % took,
          status == 70 and 9.5 <= took < 50,
          (status, took, err[-400:]))
    if sanitized_build():
        # ASan's hook before a no-return call asks sigaltstack, which the
        # frontend's filter kills: the documented sanitizer outcome, so
        # only the broker's report of the death can be asked for here.
        check("... the broker reports the frontend's end",
              "frontend died" in err, err[-400:])
        skip("... one line says the hello did not come",
             "ASan's exit path kills the frontend first")
    else:
        check("... one line says the hello did not come",
              err.count("did not answer its hello within 10 s") == 1,
              err[-400:])
    conns, reqs = target.seen()		# sp has ended: all it sent is logged
    check("... the held call reached neither the executor nor the target",
          "intent" not in audit_kinds(tmp) and conns == [] and reqs == []
          and b'"ok"' not in out, (audit_kinds(tmp), conns, reqs, out))


def test_death_before_hello(tmp, target):
    """Calls waiting for the hello are answered as calls in flight are
    when the executor dies: outcome unknown, once each."""
    p = start(get_item_and_fetch_policy(tmp, target.port), binary=SP_TEST,
              hook="executor:slow-hello")
    ids = ["wait \"a\" $(x)", "wait \u00e9"]
    p.stdin.write(INITIALIZE + b"".join(request(i, "tools/call", {
        "name": "get_item", "arguments": {"id": "n%d" % n}})
        for n, i in enumerate(ids)))
    p.stdin.flush()
    first = read_line(p, 5)
    # initialize is answered before the broker may have started the
    # executor: wait for it to run under its own name.
    deadline, kids = time.monotonic() + 5, {}
    while "executor" not in kids and time.monotonic() < deadline:
        kids = children(p.pid)
        if "executor" not in kids:
            time.sleep(0.01)
    if not check("executor dies before its hello: initialize answered, "
                 "both children up", b'"protocolVersion"' in first and
                 "executor" in kids, (first, kids)):
        stop(p)
        return
    os.kill(kids["executor"], signal.SIGKILL)
    status, out, err = finish(p)
    answers = [json.loads(l) for l in out.splitlines()]
    check("... each waiting call answered once, outcome unknown",
          sorted(a.get("id") for a in answers) == sorted(ids) and
          all(a["result"]["structuredContent"]["outcome"] == "unknown" and
              a["result"]["isError"] is True for a in answers), out)
    check("... nothing reached the target, and the session ends 70",
          target.requests() == [] and status == 70, (status, err[-300:]))


def test_cancel_before_hello(tmp, target):
    """A call cancelled while the hello is pending: its action and cancel
    records wait together and go in that order, so the executor cancels
    it while its intent waits for the broker's ack and it never starts
    (a cancel sent ahead of its action would name an unknown call and
    be dropped, and the call would run).  No answer is sent for it."""
    p = start(get_item_and_fetch_policy(tmp, target.port), binary=SP_TEST,
              hook="executor:slow-hello")
    cancelled = "cancel \"me\" $(x)"
    p.stdin.write(INITIALIZE + call(cancelled, arguments={"id": "gone"}) +
                  (json.dumps({"jsonrpc": "2.0",
                               "method": "notifications/cancelled",
                               "params": {"requestId": cancelled}}) +
                   "\n").encode() +
                  call(7, arguments={"id": "kept \u00e9"}))
    p.stdin.flush()
    got = by_id(lines_until(p, lambda ms: 7 in [m.get("id") for m in ms],
                            10))
    status, out, err = finish(p)
    ok = got.get(7, ({}, 0))[0].get("result", {}).get(
        "structuredContent", {}).get("outcome")
    check("call cancelled before the hello: never answered; the next "
          "call answered ok", cancelled not in got and ok == "ok" and
          out == b"", (sorted(map(str, got)), out[:300]))
    paths = [r["path"] for r in target.wait_requests(1)]
    check("... the target saw only the next call",
          paths == ["/items/kept%20%C3%A9"], paths)
    check("... the audit has its cancellation, the session ends 0",
          "cancellation" in audit_kinds(tmp) and status == 0,
          (audit_kinds(tmp), status, err[-300:]))


def test_limits_before_hello(tmp, target):
    """Calls held for the hello count toward max_inflight and
    calls_per_session as calls sent do: with max_inflight 2 the frontend
    reads nothing past the second held call (a ping behind them waits for
    the hello), and with calls_per_session 3 the fourth and fifth calls
    are denied and never reach the target."""
    p = start(get_item_and_fetch_policy(tmp, target.port, limits={
        "max_inflight": 2, "calls_per_session": 3}), binary=SP_TEST,
        hook="executor:slow-hello")
    ids = ["lim \"%d\" $(id)\n" % n for n in range(5)]
    try:
        t0 = time.monotonic()
        p.stdin.write(INITIALIZE + b"".join(
            call(i, arguments={"id": "%2e%2e-\u00e9-" + str(n)})
            for n, i in enumerate(ids)) + request(99, "ping"))
        p.stdin.flush()
        got = by_id(lines_until(p, lambda ms: len(ms) == len(ids) + 2, 10))
    finally:
        status, out, err = finish(p)
    ping = got.get(99, (None, t0))[1] - t0
    check("held calls fill max_inflight: a ping behind them is answered "
          "only after the hello (%.2f s)" % ping,
          99 in got and ping >= SLOW_HELLO_S * 0.9, sorted(map(str, got)))
    outcomes = [got.get(i, ({}, 0))[0].get("result", {}).get(
        "structuredContent", {}).get("outcome") for i in ids]
    check("... and calls_per_session: 3 ok, then 2 denied",
          outcomes == ["ok"] * 3 + ["denied"] * 2, outcomes)
    reqs = target.seen()[1]		# sp has ended: all it sent is logged
    check("... the target saw 3 calls, and the session ends 0",
          len(reqs) == 3 and status == 0 and out == b"",
          (reqs, status, err[-300:]))


def main():
    for test in (test_slow_hello, test_bad_hello, test_mute_hello,
                 test_death_before_hello,
                 test_cancel_before_hello, test_limits_before_hello):
        tmp = tmpdir()
        target = Target(tmp, "recorder")
        try:
            test(tmp, target)
        finally:
            target.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()

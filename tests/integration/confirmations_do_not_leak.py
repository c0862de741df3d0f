#!/usr/bin/env python3
"""Leaks over a long session of confirmations (docs/design.md section 8),
measured as long_session_heap_stays_flat.py measures them: tests/sp-test with
SP_TEST_HOOK="all:heap-report" makes each of the three processes log the
heap it still has in use at its clean end, the same mix runs in a short
and a long session, and what is left may not grow with the rounds.

The mix of one round, sent while max_inflight leaves room for it: a
human who accepts with the right retyped value (the target sees it), one
who retypes a wrong value, one who declines, one who dismisses, a client
that answers the question with a JSON-RPC error, a question nobody
answers until the client cancels the call, a client that answers a
question twice, and, one round in ten, a question nobody answers until
its 1 s confirmation expires.  Values vary by round: quotes, newlines,
$(), multibyte text, a "{qty}" in a value.  Measured (2026-12): broker
+0, frontend +0, executor +64 bytes between 40 and 400 rounds; with the
message's free() removed the frontend grew by 790 KB."""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.confirm import ConfirmSession, decisions  # noqa: E402
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import SP_TEST, sanitized_build, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

ROUNDS_SMALL, ROUNDS_LARGE = 40, 400
# long_session_heap_stays_flat.py's bound, for the same allocator (tcache off): a 16-byte
# leak once a round costs 32 x 360 = 11520 bytes.
THRESHOLD_BYTES = 4096
assert 32 * (ROUNDS_LARGE - ROUNDS_SMALL) > 2 * THRESHOLD_BYTES
MALLOC_TUNABLES = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}
HOSTILE = "it's \"$(id)\"\n\u00e9t\u00e9 \u20ac {qty}"
HEAP = re.compile(rb"heap-report (broker|frontend|executor) (\d+)")
MODES = ("accept", "wrong", "decline", "cancel", "error", "withdraw",
         "twice")
EXPIRE_EVERY = 10
INFLIGHT = 32


def write_policy(tmp, port):
    token = os.path.join(tmp, "api.token")
    with open(token, "w") as f:
        f.write("leak-confirm-secret\n")
    os.chmod(token, 0o600)

    def tool(name, timeout_s):
        return {"name": name, "description": "Create an item.",
                "target": "api", "scope": "write", "mutating": True,
                "confirm": {"message": "Create {qty} x {name}",
                            "retype": "qty", "timeout_s": timeout_s},
                "http": {"method": "POST", "path": "/items",
                         "body": {"name": "{name}", "qty": "{qty}"}},
                "params": {"name": {"type": "string", "maxLength": 80},
                           "qty": {"type": "integer", "minimum": 1,
                                   "maximum": 1000}}}
    doc = {"sallyport": 1, "server": {"name": "confirm-leak"},
           "limits": {"call_timeout_ms": 120000, "max_inflight": INFLIGHT,
                      "calls_per_session": 1000000},
           "audit": {"path": os.path.join(tmp, "audit.jsonl")},
           "credentials": {"t": {"type": "bearer", "file": token}},
           "targets": {"api": {"type": "http",
                               "base_url": "http://127.0.0.1:%d" % port,
                               "credential": "t"}},
           "tools": [tool("create_item", 600), tool("quick_item", 1)],
           "profiles": {"default": {"scopes": ["write"]}}}
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


class Answerer:
    """Answers each question as the mode in its message says; the
    session is set once it exists."""

    def __init__(self):
        self.session = None

    def reply(self, req, **member):
        self.session.send((json.dumps(dict(
            {"jsonrpc": "2.0", "id": req["id"]}, **member)) + "\n").encode())

    def __call__(self, req):
        msg = req["params"]["message"]
        mode, rid = re.search(r"mode=(\w+) rid=(\d+)", msg).groups()
        qty = re.match(r"Create (\d+)", msg).group(1)
        if mode in ("accept", "twice"):
            ans = {"action": "accept", "content": {"qty": qty}}
            if mode == "twice":
                self.reply(req, result=ans)
            return ans
        if mode == "wrong":
            return {"action": "accept", "content": {"qty": qty + "1"}}
        if mode in ("decline", "cancel"):
            return {"action": mode}
        if mode == "error":
            self.reply(req, error={"code": -1, "message": "no \"human\"\n"})
        if mode == "withdraw":
            self.session.send(cancel(int(rid)))
        return None


def cancel(rid):
    return (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": rid}}) + "\n").encode()


def outcome(msg):
    return msg.get("result", {}).get("structuredContent", {}).get("outcome")


def modes(r):
    """The round's modes: an expiry costs 1 s, so one round in EXPIRE_EVERY
    has one."""
    return MODES + (("expire",) if r % EXPIRE_EVERY == 0 else ())


def run(tmp, rounds):
    """Rounds sent while the calls in flight leave room for one more:
    a call that finds every slot taken while a question is out is
    refused (confirmations_keep_stdin_read.py), which this test is not about."""
    target = Target(tmp, "recorder", 1800)
    cfg = write_policy(tmp, target.port)
    answerer = Answerer()
    s = ConfirmSession(cfg, answerer, binary=SP_TEST, hook="all:heap-report",
                       env=MALLOC_TUNABLES)
    answerer.session = s
    want, got, rid = {}, {}, 1
    for r in range(rounds):
        while len(set(want) - set(got)) > INFLIGHT - 2 * len(MODES) - 2:
            got.update(s.wait(sorted(set(want) - set(got))[:1], 300))
        for mode in modes(r):
            qty = 1 + (r * 7 + len(mode)) % 999
            name = "mode=%s rid=%d %s %d" % (mode, rid, HOSTILE, r)
            s.call(rid, "quick_item" if mode == "expire" else "create_item",
                   {"name": name, "qty": qty})
            if mode != "withdraw":
                want[rid] = "ok" if mode in ("accept", "twice") else "denied"
            rid += 1
    got.update(s.wait(sorted(set(want) - set(got)), 300))
    status = s.close(timeout=60)
    target.stop()
    heaps = {m.group(1).decode(): int(m.group(2))
             for m in HEAP.finditer(bytes(s.stderr))}
    wrong = [(i, got[i][0]) for i in want
             if i in got and outcome(got[i][0]) != want[i]]
    missing = sorted(set(want) - set(got))
    posts = [q for q in target.requests() if q["method"] == "POST"]
    return {"status": status, "heaps": heaps, "wrong": wrong,
            "missing": missing, "posts": len(posts),
            "decisions": decisions(tmp),
            "stderr": s.stderr.decode("utf-8", "replace")}


def main():
    if not os.access(SP_TEST, os.X_OK):
        skip("confirm leak", "no tests/sp-test")
        return done()
    if sanitized_build():
        skip("confirm leak heaps", "ASan's allocator hides the heap")
        return done()
    res = {}
    for label, rounds in (("short", ROUNDS_SMALL), ("long", ROUNDS_LARGE)):
        o = run(tmpdir(), rounds)
        res[label] = o
        check("%s session (%d rounds): every call answered as its human "
              "said, the session ends 0" % (label, rounds),
              not o["wrong"] and not o["missing"] and o["status"] == 0,
              (o["wrong"][:5], o["missing"][:5], o["status"],
               o["stderr"][-1500:]))
        check("%s session: only the accepted calls reached the target, "
              "once each (%d)" % (label, 2 * rounds),
              o["posts"] == 2 * rounds, o["posts"])
        d = o["decisions"]
        check("%s session: the audit has each decision as often as it was "
              "made" % label,
              d.count("accepted") == 2 * rounds and
              d.count("wrong-value") == rounds and
              d.count("declined") == rounds and
              d.count("cancelled") == 2 * rounds and
              d.count("withdrawn") == rounds and
              d.count("expired") == (rounds + EXPIRE_EVERY - 1) //
              EXPIRE_EVERY and d.count("asked") == len(d) // 2,
              {k: d.count(k) for k in set(d)})
        check("%s session: each process reported its heap" % label,
              sorted(o["heaps"]) == ["broker", "executor", "frontend"],
              o["stderr"][-1500:])
    for proc in ("broker", "frontend", "executor"):
        a = res["short"]["heaps"].get(proc, 0)
        b = res["long"]["heaps"].get(proc, 0)
        print("# %s heap at the end: %d bytes after %d rounds, %d after %d"
              % (proc, a, ROUNDS_SMALL, b, ROUNDS_LARGE))
        check("%s: the heap left at the end does not grow with the "
              "confirmations (%+d bytes)" % (proc, b - a),
              b - a < THRESHOLD_BYTES, (a, b))
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The idempotency journal of a mutating tool (docs/design.md section 9),
with the real sp and a real HTTP target that logs every request and its
headers.

In memory (no state_dir, the default, run first):
- an identical call after one that was done is answered from the journal,
  marked as a replay, and never sent; another value is sent;
- the request carries the journal key in the policy's header, and the
  intent and execution records carry the same key;
- once window_s has passed, the identical call is sent again.

With state_dir, two live sessions:
- the executor killed (kill -9) while a mutating request is at the
  target: the journal says unknown;
- the other session, already running, refuses the identical call at once,
  saying what to check, and the target sees no second request;
- a call held at the target in one session (its entry pending): the
  identical call from another session is refused, and exactly one
  request reaches the target;
- sp journal resolve KEY failed, itself audited, lets the retry go, and
  the target receives the same Idempotency-Key for it."""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, Caller, tmpdir, wait_for  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

HEADER = "Idempotency-Key"


def doc(tmp, port, state=None, gate="j"):
    d = {
        "sallyport": 1,
        "server": {"name": "limits-journal"},
        "limits": {"call_timeout_ms": 120000, "dedupe_ms": 0},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [
            {"name": "put_item", "description": "Store an item.",
             "target": "api", "scope": "rw", "mutating": True,
             "http": {"method": "PUT", "path": "/items/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}},
             "idempotency": {"window_s": 3600, "header": HEADER}},
            {"name": "hold_item", "description": "Store, slowly.",
             "target": "api", "scope": "rw", "mutating": True,
             "http": {"method": "POST", "path": "/hold/" + gate + "/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}},
             "idempotency": {"window_s": 3600, "header": HEADER}},
            {"name": "put_brief", "description": "Store, for a second.",
             "target": "api", "scope": "rw", "mutating": True,
             "http": {"method": "PUT", "path": "/brief/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}},
             "idempotency": {"window_s": 1}},
        ],
        "profiles": {"default": {"scopes": ["rw"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }
    if state is not None:
        d["state_dir"] = state
    return d


def requests(target, prefix):
    return [r for r in target.requests() if r["path"].startswith(prefix)]


def header(r):
    return [v for k, v in r["headers"] if k.lower() == HEADER.lower()]


def audit(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        return [json.loads(l) for l in f if l.strip()]


def in_memory(tmp, target):
    a = Caller(write_policy(tmp, doc(tmp, target.port)))
    first = a.call("put_item", "a 'b' \u00e9")
    again = a.call("put_item", "a 'b' \u00e9")
    other = a.call("put_item", "-c")
    status = a.s.close()
    reqs = requests(target, "/items/")
    check("in memory: the first call is sent and answered ok",
          first.get("outcome") == "ok" and "replay" not in first, first)
    check("in memory: the identical call is a replay, not sent again",
          again.get("outcome") == "ok" and again.get("replay") is True and
          "replayed from the idempotency journal" in again.get("message", ""),
          again)
    check("in memory: another value is sent", other.get("outcome") == "ok"
          and "replay" not in other, other)
    check("in memory: two requests reached the target",
          len(reqs) == 2, [r["path"] for r in reqs])
    keys = [header(r) for r in reqs]
    first_keys = [k[0] if k else None for k in keys]
    log = audit(tmp)
    intents = [r for r in log if r["kind"] == "intent" and
               r.get("tool") == "put_item" and not r.get("replay")]
    execs = [r for r in log if r["kind"] == "execution" and
             r.get("tool") == "put_item"]
    check("in memory: each request carries its journal key in the header",
          all(len(k) == 1 and re.fullmatch("[0-9a-f]{64}", k[0])
              for k in keys) and keys[0] != keys[1], keys)
    check("in memory: intent and execution records carry the same key",
          [r.get("journal") for r in intents] == first_keys and
          [r.get("journal") for r in execs] == first_keys,
          (intents, execs, keys))
    check("in memory: the replay is an intent marked replay, with the key",
          [r.get("journal") for r in log if r.get("replay")] ==
          first_keys[:1] and first_keys[0] is not None,
          log)
    err = a.s.stderr.decode("utf-8", "replace")
    check("in memory: the session ends with 0", status == 0, err)
    check("in memory: stderr says the journal ends with the process",
          err.count("the idempotency journal are kept in this process and "
                    "end with it") == 1, err)


def window_passes(tmp, target):
    """window_s 1: once it has passed (waited out well past it: a slow
    machine only makes it more certainly past), the identical call is
    sent again, not replayed."""
    a = Caller(write_policy(tmp, doc(tmp, target.port)))
    first = a.call("put_brief", "w\n$(x)")
    time.sleep(2.5)
    again = a.call("put_brief", "w\n$(x)")
    a.s.close()
    reqs = requests(target, "/brief/")
    check("window_s 1: after the window the identical call is sent again, "
          "not a replay", first.get("outcome") == "ok" and
          again.get("outcome") == "ok" and "replay" not in again and
          len(reqs) == 2, (first, again, [r["path"] for r in reqs]))


def journal_lines(state):
    try:
        with open(os.path.join(state, "journal.jsonl")) as f:
            return [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError):
        return []


def killed(tmp, target):
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    config = write_policy(tmp, doc(tmp, target.port, state))
    a, b = Caller(config), Caller(config)
    executor = a.s.executor_pid()
    a.send("hold_item", "k$(x)")
    wait_for(lambda: len(requests(target, "/hold/j/")) == 1)
    os.kill(executor, signal.SIGKILL)
    a.s.close()
    target.release("j")
    last = journal_lines(state)[-1:] or [{}]
    check("kill -9 after the request left: the journal says unknown",
          last[0].get("state") == "unknown" and
          last[0].get("tool") == "hold_item", journal_lines(state))
    key = last[0].get("key", "")
    r = b.call("hold_item", "k$(x)")
    m = r.get("message", "")
    check("the other session refuses the identical call at once, saying "
          "what to check", r.get("outcome") == "denied" and
          "outcome is unknown" in m and "check hold_item" in m and
          "sp journal resolve " + key in m, r)
    check("zero second requests at the target",
          len(requests(target, "/hold/j/")) == 1)
    listed = subprocess.run([SP, "journal", "--config", config],
                            capture_output=True, text=True)
    check("sp journal lists the entry", listed.returncode == 0 and
          key in listed.stdout, (listed.stdout, listed.stderr))
    res = subprocess.run([SP, "journal", "--config", config, "resolve", key,
                          "failed"], capture_output=True, text=True)
    check("sp journal resolve records failed", res.returncode == 0 and
          journal_lines(state)[-1].get("state") == "failed", res.stderr)
    check("the resolution is itself audited",
          [(x.get("key"), x.get("state")) for x in audit(tmp)
           if x["kind"] == "journal-resolve"] == [(key, "failed")],
          audit(tmp)[-3:])
    r = b.call("hold_item", "k$(x)")
    b.s.close()
    reqs = requests(target, "/hold/j/")
    check("after resolve failed the retry is sent",
          r.get("outcome") == "ok" and len(reqs) == 2, (r, len(reqs)))
    check("the target receives the same Idempotency-Key for the retry",
          len(reqs) == 2 and header(reqs[0]) == header(reqs[1]) == [key],
          [header(x) for x in reqs])


def in_flight_elsewhere(tmp, target):
    """Session A's call held at the target (its journal entry pending);
    session B's identical call is refused, never sent; once A's is done,
    B's is a replay, still never sent."""
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    config = write_policy(tmp, doc(tmp, target.port, state, gate="p"))
    a, b = Caller(config), Caller(config)
    value = "-p 'q' \u00e9 %2e%2e"
    rid = a.send("hold_item", value)
    reached = wait_for(lambda: len(requests(target, "/hold/p/")) == 1)
    check("session A's call is held at the target", reached,
          requests(target, "/hold/p/"))
    r = b.call("hold_item", value)
    check("session B's identical call is denied: in flight in A",
          r.get("outcome") == "denied" and
          "identical call is in flight" in r.get("message", ""), r)
    check("exactly one request reached the target",
          len(requests(target, "/hold/p/")) == 1,
          requests(target, "/hold/p/"))
    target.release("p")
    ra = structured(a.s.wait([rid]).get(rid))
    rb = b.call("hold_item", value)
    a.s.close()
    b.s.close()
    check("A's call is done; B's again is a replay, not sent",
          ra.get("outcome") == "ok" and rb.get("outcome") == "ok" and
          "replayed" in rb.get("message", "") and
          len(requests(target, "/hold/p/")) == 1, (ra, rb))


def duplicate(tmp, target):
    """In flight in its own session, an identical call is a duplicate,
    answered with the first's result, not refused by its pending entry."""
    d = doc(tmp, target.port, gate="d")
    d["limits"]["dedupe_ms"] = 10000
    a = Caller(write_policy(tmp, d))
    args = {"id": "dup"}
    a.s.send(b"".join(
        (json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": "hold_item", "arguments": args}}) +
         "\n").encode() for i in (1, 2)))
    wait_for(lambda: any(r.get("duplicate_of") for r in audit(tmp)))
    target.release("d")
    got = a.s.wait([1, 2])
    a.s.close()
    s1, s2 = structured(got.get(1)), structured(got.get(2))
    check("journal tool: two identical calls in flight, one request",
          len(requests(target, "/hold/d/")) == 1,
          requests(target, "/hold/d/"))
    check("journal tool: the second is a duplicate, not refused",
          s1.get("outcome") == s2.get("outcome") == "ok" and
          [s1.get("duplicate_of"), s2.get("duplicate_of")].count(None) == 1,
          (s1, s2))


def main():
    tmp = tmpdir()
    target = Target(tmp, lifetime=600)
    try:
        in_memory(tmp, target)
        window_passes(tmpdir(), target)
        duplicate(tmpdir(), target)
        in_flight_elsewhere(tmpdir(), target)
        killed(tmp, target)
    finally:
        target.stop()
    done()


main()

#!/usr/bin/env python3
"""state_dir's lock (state/state_dir.h, docs/design.md section 9): a
broker decides a per_day call and appends its line under one flock, so a
second broker deciding meanwhile waits and then sees the first's line.

Made deterministic with tests/sp-test's hook
broker:stop-before-append-limits.jsonl: session A's broker stops itself
(SIGSTOP) after it has read limits.jsonl and passed its call, before it
appends the line.  Session B then makes the call that is one past
per_day.  The test waits until B has either answered or is seen waiting
for the file's lock (/proc/locks), and only then lets A go (SIGCONT).
Counted at a real HTTP target: the calls per_day allows and not one more
reach it, and B is denied.  Without the lock B decides on the count A
has not written yet, passes, and one call too many reaches the target.

The policy has no audit log, so nothing before B's denial has read the
zone file glibc's gmtime_r() opens at its first call: B's "resets at"
must not be its first open after confinement (a SIGSYS, seen)."""
import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP_TEST, Session, tmpdir  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

PER_DAY = 3
HOOK = "broker:stop-before-append-limits.jsonl"
BUDGET = 120     # seconds, far above need: load slows, never fails
# per_day - 1 calls from a first session, then A's, then B's
VALUES = ["it's $(id)", "-n\nx", "%2e%2e/\u00e9t\u00e9 \U0001f600",
          "\"b\" one too many"]


def doc(tmp, port, state):
    return {
        "sallyport": 1,
        "server": {"name": "state-lock"},
        "limits": {"call_timeout_ms": BUDGET * 1000},
        "state_dir": state,
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [{"name": "count_item", "description": "Counted per day.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/count_item/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}},
                   "limits": {"per_day": PER_DAY}}],
        "profiles": {"default": {"scopes": ["read"]}},
    }


def stopped(pid):
    """True once pid is stopped (state T in /proc/PID/stat)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except OSError:
        return False


def waits_for_lock(pid, ino):
    """True when /proc/locks shows pid blocked on a lock of inode ino."""
    with open("/proc/locks") as f:
        for line in f:
            t = line.split()
            if len(t) > 6 and t[1] == "->" and t[5] == str(pid) and \
                    t[6].rsplit(":", 1)[-1] == str(ino):
                return True
    return False


def until(cond, budget=BUDGET):
    end = time.monotonic() + budget
    while not cond():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def count_paths(target):
    return [r["path"] for r in target.requests()
            if r["path"].startswith("/count_item/")]


def main():
    if not os.path.exists(SP_TEST):
        skip_all("no tests/sp-test (sp with the test hooks)")
    if not os.path.exists("/proc/locks"):
        skip_all("no /proc/locks to see a broker wait for the lock")
    tmp = tmpdir()
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    target = Target(tmp)
    sessions = []
    try:
        config = write_policy(tmp, doc(tmp, target.port, state))
        first = Session(config, binary=SP_TEST)
        sessions.append(first)
        for i, v in enumerate(VALUES[:PER_DAY - 1]):
            first.call(i + 1, "count_item", {"id": v})
        got = first.wait(list(range(1, PER_DAY)), BUDGET)
        outcomes = [structured(got.get(i)).get("outcome")
                    for i in range(1, PER_DAY)]
        check("a first session makes %d calls of per_day %d" %
              (PER_DAY - 1, PER_DAY), outcomes == ["ok"] * (PER_DAY - 1),
              outcomes)
        ino = os.stat(os.path.join(state, "limits.jsonl")).st_ino

        a = Session(config, binary=SP_TEST, hook=HOOK)
        b = Session(config, binary=SP_TEST)
        sessions += [a, b]
        a.call(1, "count_item", {"id": VALUES[PER_DAY - 1]})
        held = until(lambda: stopped(a.p.pid))
        check("session A's broker holds after deciding, before appending",
              held, a.stderr.decode("utf-8", "replace")[-1500:])
        b.call(1, "count_item", {"id": VALUES[PER_DAY]})
        b_early = {}

        def b_decided():
            b_early.update(b.wait([1], 0.01))
            return bool(b_early) or waits_for_lock(b.p.pid, ino)
        decided = until(b_decided)
        check("session B then decides, or waits for the lock",
              decided and held, (b_early, decided))
        check("B did not decide while A held the lock", not b_early,
              b_early)
        os.kill(a.p.pid, signal.SIGCONT)
        ra = structured(a.wait([1], BUDGET).get(1))
        rb = structured(b_early.get(1) or b.wait([1], BUDGET).get(1))
        check("A's call, the last per_day allows, passes",
              ra.get("outcome") == "ok", ra)
        check("B's call, one past per_day, is denied",
              rb.get("outcome") == "denied" and
              "%d of %d" % (PER_DAY, PER_DAY) in rb.get("message", ""), rb)
        target.flush()
        seen = count_paths(target)
        check("exactly %d requests reached the target" % PER_DAY,
              len(seen) == PER_DAY, json.dumps(seen))
        status = [s.close() for s in sessions]
        check("the three sessions end 0", status == [0, 0, 0],
              (status, [s.stderr.decode("utf-8", "replace")[-500:]
                        for s in sessions]))
    finally:
        for s in sessions:
            if s.p.poll() is None:
                os.kill(s.p.pid, signal.SIGCONT)
                s.p.kill()
        target.stop()
    done()


main()

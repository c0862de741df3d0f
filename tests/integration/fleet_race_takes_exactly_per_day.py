#!/usr/bin/env python3
"""per_day decided in the database under a race (docs/design.md section
9.2; issue 28): two "hosts" -- two sp mcp configurations, each with its
own state_dir and audit log -- on one throwaway cluster, four sessions
on each, all started before the race, and a real HTTP target counting
what reached it.

In each round every one of the eight sessions pipelines CALLS calls of
one tool with per_day N at once (threads released together, every
session's calls written back to back), far more than N in flight across
the fleet.  The row lock of sallyport.take_limits serves the deciders one
after the other, so:

- exactly N calls answer ok, and exactly N requests reach the target;
- every other call is denied, saying per_day (N of N), never
  "unavailable";
- the database counts N;
- and every session's stdout holds JSON-RPC messages only.

Each round uses a tool of its own (a fresh count) and its own N.  The
limits are set so nothing else decides: max_inflight above CALLS,
dedupe_ms 0 and every value different (quotes, $(), multibyte text)."""
import json
import os
import sys
import threading

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import call, structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import (  # noqa: E402
    absent_reason, fleet_policy, fleet_tool, shared_state)
from sptest.run import Caller  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

HOSTS = ("a", "b")
SESSIONS_PER_HOST = 4
CALLS = 6			# per session and round: 48 in flight
ROUNDS = {"race_1": 5, "race_2": 2, "race_3": 7, "race_4": 5}


def doc(tmp, host, port, conninfo):
    state = os.path.join(tmp, "state-" + host)
    if not os.path.isdir(state):
        os.mkdir(state, 0o700)
    return fleet_policy(
        tmp, host, port, {"postgres": conninfo},
        [fleet_tool(tool, "/%s/{id}" % tool, limits={"per_day": n})
         for tool, n in ROUNDS.items()],
        limits={"call_timeout_ms": 120000, "dedupe_ms": 0,
                "max_inflight": 2 * CALLS,
                "calls_per_session": 2 * CALLS * len(ROUNDS)},
        state_dir=state)


def value(host, session, i):
    """Every call's own value, none a duplicate of another."""
    return "%s%d-%d 'q' \"$(id)\" \u00e9\u6f22\U0001f600" % (host, session,
                                                             i)


def race(sessions, tool):
    """sessions: [(host, Caller)].  Every session writes its CALLS calls
    at once, after a barrier; returns [(host, value, structured
    answer)]."""
    barrier = threading.Barrier(len(sessions))
    results = [None] * len(sessions)

    def one(k, label, c):
        ids, lines = [], b""
        for i in range(CALLS):
            c.next += 1
            v = value(label, k, i)
            ids.append((c.next, v))
            lines += call(c.next, tool, {"id": v})
        barrier.wait()
        c.s.send(lines)
        got = c.s.wait([rid for rid, _ in ids], timeout=180)
        results[k] = [(label, v, structured(got.get(rid))) for rid, v in ids]

    threads = [threading.Thread(target=one, args=(k, label, c))
               for k, (label, c) in enumerate(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [r for rs in results for r in (rs or [])]


def protocol_line(line):
    try:
        msg = json.loads(line)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("jsonrpc") == "2.0"


def spent(cluster, tool):
    return cluster.admin_sql("SELECT coalesce(sum(spent), 0) FROM "
                             "sallyport.day_counts WHERE tool = '%s'" % tool,
                             "fleet").strip()


def one_round(cluster, sessions, target, tool, n):
    answers = race(sessions, tool)
    total = len(sessions) * CALLS
    outcomes = [a.get("outcome") for _, _, a in answers]
    ok = [(h, v) for h, v, a in answers if a.get("outcome") == "ok"]
    denied = [a for _, _, a in answers if a.get("outcome") == "denied"]
    wrong = [(h, a.get("outcome"), a.get("message")) for h, _, a in answers
             if a.get("outcome") != "ok" and not (
                 a.get("outcome") == "denied" and "per_day of %s: %d of %d"
                 % (tool, n, n) in a.get("message", ""))]
    _, reqs = target.seen()
    sent = [r["path"] for r in reqs if r["path"].startswith("/%s/" % tool)]
    check("%s (per_day %d): %d calls answered" % (tool, n, total),
          len(answers) == total, outcomes)
    check("%s: exactly %d calls ok" % (tool, n), len(ok) == n, ok)
    check("%s: the other %d denied, saying per_day %d of %d" % (
        tool, total - n, n, n), len(denied) == total - n and not wrong,
        wrong)
    check("%s: exactly %d requests reached the target" % (tool, n),
          len(sent) == n, sent)
    check("%s: the database counts %d" % (tool, n),
          spent(cluster, tool) == str(n), spent(cluster, tool))
    check("%s: the ok calls are %d different calls" % (tool, n),
          len(set(v for _, v in ok)) == len(ok), ok)


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, conninfo, r = shared_state("sp-race-", doc)
    check("sp state init makes the schema", r.returncode == 0, r.stderr)
    target = Target(tmp)
    sessions = []
    try:
        for host in HOSTS:
            cfg = write_policy(tmp, doc(tmp, host, target.port, conninfo),
                               host + ".json")
            sessions += [(host, Caller(cfg))
                         for _ in range(SESSIONS_PER_HOST)]
        for tool, n in ROUNDS.items():
            one_round(cluster, sessions, target, tool, n)
        statuses = [c.s.close() for _, c in sessions]
        check("every session ends cleanly", statuses == [0] * len(sessions),
              statuses)
        stray = [l for _, c in sessions
                 for l in bytes(c.s.stdout).splitlines()
                 if not protocol_line(l)]
        check("every session's stdout holds JSON-RPC messages only",
              not stray, stray[:5])
        errs = [bytes(c.s.stderr).decode("utf-8", "replace")
                for _, c in sessions]
        check("no session lost its database", not any(
            "unavailable" in e or "not reachable" in e for e in errs),
            "\n".join(errs))
    finally:
        for _, c in sessions:
            if c.s.p.poll() is None:
                c.s.close()
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

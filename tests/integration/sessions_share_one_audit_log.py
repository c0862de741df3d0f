#!/usr/bin/env python3
"""Eight `sp mcp` sessions at once, 100 calls each, append to one audit
log (docs/design.md section 6): `sp audit verify` passes, every session has its
session-start, 100 intents, 100 executions and its session-end (which
counts them, apart from rejections), each intent before its execution,
and seq is strictly increasing over the whole file."""
import os
import sys
import threading

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402
from sptest.mcp import outcome  # noqa: E402
from sptest.policy import get_and_put_item_policy  # noqa: E402
from sptest.run import drive_item_calls, start, stop, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

SESSIONS = 8
CALLS = 100


def main():
    tmp = tmpdir()
    cfg = get_and_put_item_policy(tmp, "http://127.0.0.1:9")
    procs = [start(cfg) for _ in range(SESSIONS)]
    results = [None] * SESSIONS

    def run(i):
        results[i] = drive_item_calls(procs[i], CALLS)

    threads = [threading.Thread(target=run, args=(i,))
               for i in range(SESSIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    statuses = []
    for p in procs:
        try:
            statuses.append(p.wait(30))
        except Exception:
            stop(p)
            statuses.append(None)
    check("all %d sessions ended with 0" % SESSIONS,
          statuses == [0] * SESSIONS, statuses)
    check("every call of every session was answered",
          all(r is not None and len(r) == CALLS and
              all(outcome(v) for v in r.values()) for r in results),
          [len(r or {}) for r in results])

    log = os.path.join(tmp, "audit.jsonl")
    status, err = verify(log)
    check("sp audit verify passes on the shared log", status == 0, err)
    check("it counts %d sessions" % SESSIONS,
          "%d sessions" % SESSIONS in err, err)
    recs, tail = read_log(log)
    check("no torn tail", tail == b"", tail)
    seqs = [r["seq"] for r in recs]
    check("seq is strictly increasing over the file, from 1, no gap",
          seqs == list(range(1, len(recs) + 1)), seqs[:20])

    by_session = {}
    for r in recs:
        by_session.setdefault(r["session"], []).append(r)
    check("%d distinct sessions wrote" % SESSIONS,
          len(by_session) == SESSIONS, list(by_session))
    for sid, rs in sorted(by_session.items()):
        kinds = [r["kind"] for r in rs]
        intents = {r["call"] for r in rs if r["kind"] == "intent"}
        execs = [r["call"] for r in rs if r["kind"] == "execution"]
        check("session %s: starts and ends once, first and last" % sid,
              kinds[0] == "session-start" and kinds[-1] == "session-end" and
              kinds.count("session-start") == 1 and
              kinds.count("session-end") == 1, kinds[:3] + kinds[-3:])
        check("session %s: %d intents, %d distinct executions" %
              (sid, CALLS, CALLS),
              len(intents) == CALLS and len(execs) == CALLS and
              len(set(execs)) == CALLS and set(execs) == intents,
              (len(intents), len(execs)))
        order = [(r["kind"], r["call"]) for r in rs
                 if r["kind"] in ("intent", "execution")]
        check("session %s: each intent comes before its execution" % sid,
              all(order.index(("intent", c)) < order.index(("execution", c))
                  for c in intents), order[:6])
        end = rs[-1]
        check("session %s: session-end counts %d executions and 0 "
              "rejections apart" % (sid, CALLS),
              end.get("executions") == CALLS and end.get("intents") == CALLS
              and end.get("rejections") == 0 and end.get("why") ==
              "end of input", end)
    done()


main()

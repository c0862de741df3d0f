#!/usr/bin/env python3
"""The shared state's database lost and back (docs/design.md section 9.2),
with a real throwaway cluster and a real HTTP target counting requests.

- A session is up and its governed calls are ok; the cluster is stopped
  (by pid): a call per_day governs and one the journal governs are
  denied, saying the shared state is unavailable, and reach nothing,
  while a tool nothing governs goes on; the cluster is started again
  and, past the reconnect interval, the SAME session's governed calls
  are ok.  The reconnect is libpq's reset inside the broker's seccomp
  filter: without the filter's connect rule the broker is killed there
  and these checks fail.
- A session started while the database is down starts (one stderr line
  saying so), refuses governed calls, runs the others, and decides in
  the database once it is back."""
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import (  # noqa: E402
    absent_reason, fleet_policy, fleet_tool, shared_state)
from sptest.run import Caller  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

UNAVAILABLE = "shared state (PostgreSQL) is unavailable"
RETRY_S = 1.5	# above PG_RETRY_MS (state/pg.h)


def doc(tmp, name, port, conninfo):
    return fleet_policy(
        tmp, name, port, {"postgres": conninfo}, [
            fleet_tool("day_item", "/day/{id}", limits={"per_day": 50}),
            fleet_tool("put_item", "/items/{id}", mutating=True,
                       http={"method": "PUT", "path": "/items/{id}"},
                       idempotency={"window_s": 3600}),
            fleet_tool("free_item", "/free/{id}"),
        ], limits={"call_timeout_ms": 60000, "dedupe_ms": 0})


def paths(target):
    return sorted(r["path"] for r in target.requests())


def outcome(r):
    return r.get("outcome"), r.get("message", "")


def lost_and_back(tmp, cluster, conninfo, target):
    a = Caller(write_policy(tmp, doc(tmp, "a", target.port, conninfo),
                            "a.json"))
    try:
        up = [a.call("day_item", "up-1"), a.call("put_item", "up $(id)")]
        check("database up: the governed calls are ok",
              [r.get("outcome") for r in up] == ["ok", "ok"], up)
        cluster.stop()
        day = a.call("day_item", "down-'1'")
        put = a.call("put_item", "down-\u00e9\n2")
        check("database down: a per_day call is denied as unavailable",
              day.get("outcome") == "denied" and
              UNAVAILABLE in day.get("message", ""), outcome(day))
        check("database down: a journaled call is denied as unavailable",
              put.get("outcome") == "denied" and
              UNAVAILABLE in put.get("message", ""), outcome(put))
        free = a.call("free_item", "-n")
        check("database down: a tool nothing governs goes on",
              free.get("outcome") == "ok", outcome(free))
        check("database down: neither refused call reached the target",
              paths(target) == ["/day/up-1", "/free/-n", "/items/up%20%24%28id%29"],
              paths(target))
        cluster.start()
        time.sleep(RETRY_S)
        back = [a.call("day_item", "back-3"), a.call("put_item", "back-4")]
        check("database back: the same session's governed calls are ok",
              [r.get("outcome") for r in back] == ["ok", "ok"],
              [outcome(r) for r in back])
        again = a.call("put_item", "back-4")
        check("database back: the journal answers from the database (a "
              "replay, not sent again)", again.get("outcome") == "ok" and
              paths(target).count("/items/back-4") == 1,
              (outcome(again), paths(target)))
    finally:
        status = a.s.close()
    err = bytes(a.s.stderr).decode("utf-8", "replace")
    check("the session ends cleanly, having said the loss once",
          status == 0 and err.count("database is unavailable") == 1,
          (status, err))


def started_while_down(tmp, cluster, conninfo, target):
    cluster.stop()
    before = len(target.requests())
    b = Caller(write_policy(tmp, doc(tmp, "b", target.port, conninfo),
                            "b.json"))
    try:
        day = b.call("day_item", "early")
        free = b.call("free_item", "early")
        check("started while down: governed denied, ungoverned ok",
              day.get("outcome") == "denied" and
              UNAVAILABLE in day.get("message", "") and
              free.get("outcome") == "ok", (outcome(day), outcome(free)))
        check("started while down: only the ungoverned call was sent",
              [r["path"] for r in target.requests()[before:]] ==
              ["/free/early"], paths(target))
        cluster.start()
        time.sleep(RETRY_S)
        late = b.call("day_item", "late")
        check("started while down: once the database is back, decided there",
              late.get("outcome") == "ok", outcome(late))
    finally:
        status = b.s.close()
    err = bytes(b.s.stderr).decode("utf-8", "replace")
    check("started while down: it started, saying the database is not "
          "reachable", status == 0 and "not reachable" in err, (status, err))
    spent = cluster.admin_sql("SELECT sum(spent) FROM sallyport.day_counts "
                              "WHERE tool = 'day_item'", "fleet").strip()
    check("the database counted the three day_item calls sent, no other",
          spent == "3", spent)


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, conninfo, r = shared_state("sp-down-", doc)
    check("sp state init makes the schema", r.returncode == 0, r.stderr)
    target = Target(tmp)
    try:
        lost_and_back(tmp, cluster, conninfo, target)
        started_while_down(tmp, cluster, conninfo, target)
    finally:
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

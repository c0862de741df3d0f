#!/usr/bin/env python3
"""Limits and the idempotency journal shared by a fleet through PostgreSQL
(docs/design.md section 9.2): two "hosts" -- two real sp mcp, each with
its own state_dir and audit log -- on one throwaway cluster, and a real
HTTP target counting what reached it.

- per_day is counted across both hosts: the call past it is denied on
  either and never reaches the target;
- min_interval_ms holds across both hosts;
- a journaled call done on host A is a replay on host B, not sent again;
- a call held at the target on A (in flight) is refused on B;
- one whose outcome is unknown on A (its executor killed mid-request) is
  refused on B until sp journal resolve, which then lets it go;
- sp journal lists the database's entries; the database holds hashes,
  tool names and who, never an argument value;
- neither host's state_dir holds a limits or journal line: the
  database decided."""
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import ADMIN, absent_reason, shared_state  # noqa: E402
from sptest.run import SP, Caller, sp_env, wait_for  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

HEADER = "Idempotency-Key"
# values a database must never see, only their digests
VALUES = ["inv-\u00fc 'q' $(id)", "-n\nx", "%2e%2e/\u6f22"]


def doc(tmp, host, port, conninfo):
    def tool(name, path, **kw):
        t = {"name": name, "description": "Fleet tool.", "target": "api",
             "scope": "rw", "http": {"method": "GET", "path": path},
             "params": {"id": {"type": "string", "maxLength": 64}}}
        t.update(kw)
        return t
    state = os.path.join(tmp, "state-" + host)
    if not os.path.isdir(state):
        os.mkdir(state, 0o700)
    return {
        "sallyport": 1,
        "server": {"name": "fleet-" + host},
        "limits": {"call_timeout_ms": 120000, "dedupe_ms": 0},
        "state_dir": state,
        "state": {"postgres": conninfo},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [
            tool("day_item", "/day/{id}", limits={"per_day": 3}),
            tool("gap_item", "/gap/{id}",
                 limits={"min_interval_ms": 600000}),
            tool("put_item", "/items/{id}", mutating=True,
                 http={"method": "PUT", "path": "/items/{id}"},
                 idempotency={"window_s": 3600, "header": HEADER}),
            tool("hold_item", "/hold/f/{id}", mutating=True,
                 http={"method": "POST", "path": "/hold/f/{id}"},
                 idempotency={"window_s": 3600}),
            tool("lost_item", "/hold/u/{id}", mutating=True,
                 http={"method": "POST", "path": "/hold/u/{id}"},
                 idempotency={"window_s": 3600}),
            tool("free_item", "/free/{id}"),
            tool("lock_item", "/lock/{id}", limits={"per_day": 10}),
        ],
        "profiles": {"default": {"scopes": ["rw"]}},
        "audit": {"path": os.path.join(tmp, "audit-%s.jsonl" % host)},
    }


def reached(target, prefix):
    return [r for r in target.requests() if r["path"].startswith(prefix)]


def per_day(a, b, target):
    r = [a.call("day_item", VALUES[0]), b.call("day_item", VALUES[1]),
         a.call("day_item", VALUES[2]), b.call("day_item", "4"),
         a.call("day_item", "5")]
    check("per_day 3 across two hosts: three calls are ok",
          [x.get("outcome") for x in r[:3]] == ["ok"] * 3, r[:3])
    check("per_day: the fourth call is denied on host B, saying per_day",
          r[3].get("outcome") == "denied" and
          "per_day of day_item: 3 of 3" in r[3].get("message", ""), r[3])
    check("per_day: and on host A too", r[4].get("outcome") == "denied" and
          "per_day" in r[4].get("message", ""), r[4])
    check("per_day: exactly three requests reached the target",
          len(reached(target, "/day/")) == 3, reached(target, "/day/"))


def min_interval(a, b, target):
    first = a.call("gap_item", VALUES[0])
    again = b.call("gap_item", VALUES[0])
    other = b.call("gap_item", VALUES[1])
    check("min_interval_ms across hosts: host B's identical call is denied",
          first.get("outcome") == "ok" and again.get("outcome") == "denied"
          and "min_interval_ms of gap_item" in again.get("message", ""),
          (first, again))
    check("min_interval_ms: another value is ok on host B",
          other.get("outcome") == "ok", other)
    check("min_interval_ms: two requests reached the target",
          len(reached(target, "/gap/")) == 2, reached(target, "/gap/"))


def replay(a, b, target):
    done_a = a.call("put_item", VALUES[1])
    on_b = b.call("put_item", VALUES[1])
    check("journal: done on host A", done_a.get("outcome") == "ok" and
          "replay" not in done_a, done_a)
    check("journal: the identical call on host B is a replay, not sent",
          on_b.get("replay") is True and "replayed from the idempotency "
          "journal" in on_b.get("message", ""), on_b)
    check("journal: one request reached the target",
          len(reached(target, "/items/")) == 1, reached(target, "/items/"))


def in_flight(a, b, target):
    rid = a.send("hold_item", VALUES[2])
    check("in flight: host A's call is held at the target",
          wait_for(lambda: len(reached(target, "/hold/f/")) == 1))
    on_b = b.call("hold_item", VALUES[2])
    check("in flight: host B's identical call is refused as in flight",
          on_b.get("outcome") == "denied" and
          "in flight" in on_b.get("message", ""), on_b)
    target.release("f")
    ra = a.wait(rid)
    check("in flight: host A's call ends ok, one request in all",
          ra.get("outcome") == "ok" and
          len(reached(target, "/hold/f/")) == 1, ra)


def journal_rows(config):
    r = subprocess.run([SP, "journal", "--config", config],
                       capture_output=True, env=sp_env(), timeout=60)
    rows = [json.loads(l) for l in r.stdout.decode().splitlines() if l]
    return r.returncode, rows, r.stderr.decode()


def unknown(tmp, conninfo, target, cfg_a, cfg_b):
    a = Caller(cfg_a)
    b = Caller(cfg_b)
    a.send("lost_item", VALUES[0])
    check("unknown: host A's request is at the target",
          wait_for(lambda: len(reached(target, "/hold/u/")) == 1))
    os.kill(a.s.executor_pid(), signal.SIGKILL)
    a.s.close()
    _, rows, _ = journal_rows(cfg_b)
    hold = [x for x in rows if x.get("tool") == "lost_item" and
            x.get("state") == "unknown"]
    check("unknown: sp journal lists host A's call as unknown",
          len(hold) == 1, rows)
    refused = b.call("lost_item", VALUES[0])
    check("unknown: host B refuses the identical call, saying what to check",
          refused.get("outcome") == "denied" and "outcome is unknown" in
          refused.get("message", "") and "sp journal resolve" in
          refused.get("message", ""), refused)
    check("unknown: nothing more reached the target",
          len(reached(target, "/hold/u/")) == 1)
    key = hold[0]["key"] if hold else "0" * 64
    r = subprocess.run([SP, "journal", "--config", cfg_b, "resolve", key,
                        "failed"], capture_output=True, env=sp_env(),
                       timeout=60)
    check("unknown: sp journal resolve KEY failed succeeds",
          r.returncode == 0, r.stderr)
    target.release("u")
    again = b.call("lost_item", VALUES[0])
    check("unknown: after resolve host B sends it, once",
          again.get("outcome") == "ok" and
          len(reached(target, "/hold/u/")) == 2, again)
    b.s.close()
    audit_b = open(os.path.join(tmp, "audit-b.jsonl")).read()
    check("unknown: the resolve is in host B's audit log",
          '"kind":"journal-resolve"' in audit_b.replace(" ", ""))


def spent(cluster, tool):
    return cluster.admin_sql("SELECT coalesce(sum(spent), 0) FROM "
                             "sallyport.day_counts WHERE tool = '%s'" % tool,
                             "fleet").strip()


def row_locked(cluster, a, target):
    """Another transaction holds the day's row past the session's wait:
    the decision gives up in the database (lock_timeout) and is rolled
    back there, so the refused call spends nothing once the row is free,
    rather than commit after the session refused it."""
    first = a.call("lock_item", "1")
    argv = cluster.as_user + [os.path.join(cluster.bindir, "psql"), "-h",
                              cluster.socket_dir, "-U", ADMIN, "-d", "fleet",
                              "-X", "-q", "-c",
                              "BEGIN; SELECT 1 FROM sallyport.day_counts "
                              "WHERE tool = 'lock_item' FOR UPDATE; "
                              "SELECT pg_sleep(9); COMMIT"]
    holder = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, cwd="/")
    time.sleep(1)
    second = a.call("lock_item", "2")
    holder.wait(timeout=120)
    check("a held row: the first call was ok, the second denied as "
          "unavailable", first.get("outcome") == "ok" and
          second.get("outcome") == "denied" and
          "shared state (PostgreSQL) is unavailable" in
          second.get("message", ""), (first, second))
    check("a held row: once free, the refused call spent nothing",
          spent(cluster, "lock_item") == "1", spent(cluster, "lock_item"))
    check("a held row: one request reached the target",
          len(reached(target, "/lock/")) == 1, reached(target, "/lock/"))


def database_holds_hashes(cluster, db, tmp):
    dump = cluster.admin_sql(
        "SELECT who, tool, day, spent FROM sallyport.day_counts; "
        "SELECT * FROM sallyport.interval_starts; "
        "SELECT * FROM sallyport.journal", db)
    leaked = [v for v in VALUES if v.split()[0] in dump or v in dump]
    check("the database holds no argument value", not leaked and
          "day_item" in dump and "profile:default" in dump, dump)
    files = []
    for host in ("a", "b"):
        d = os.path.join(tmp, "state-" + host)
        files += [f for f in os.listdir(d) if f.endswith(".jsonl") and
                  os.path.getsize(os.path.join(d, f)) > 0]
    check("neither host's state_dir holds a limits or journal line",
          files == [], files)


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, conninfo, r = shared_state("sp-fleet-", doc)
    check("sp state init makes the schema", r.returncode == 0 and
          b"schema version 1" in r.stdout, r.stderr)
    target = Target(tmp)
    try:
        cfg_a = write_policy(tmp, doc(tmp, "a", target.port, conninfo),
                             "a.json")
        cfg_b = write_policy(tmp, doc(tmp, "b", target.port, conninfo),
                             "b.json")
        a, b = Caller(cfg_a), Caller(cfg_b)
        per_day(a, b, target)
        min_interval(a, b, target)
        replay(a, b, target)
        in_flight(a, b, target)
        row_locked(cluster, a, target)
        free = a.call("free_item", "x")
        check("a tool nothing governs goes on", free.get("outcome") == "ok",
              free)
        for h in (a, b):
            h.s.close()
        err = a.s.stderr.decode("utf-8", "replace")
        check("no stderr line says the limits end with the process",
              "kept in this process" not in err, err)
        unknown(tmp, conninfo, target, cfg_a, cfg_b)
        database_holds_hashes(cluster, "fleet", tmp)
    finally:
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

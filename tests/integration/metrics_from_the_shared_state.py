#!/usr/bin/env python3
"""sp metrics (docs/sp.1, METRICS) with "state": the fleet's counts come
from the PostgreSQL database every host shares, not from a state_dir.

Two "hosts" (two real sp mcp, each with its own state_dir and audit log)
on one throwaway cluster, a real HTTP target counting what reached it:

- per_day spent is the fleet's (both hosts' calls), the same whichever
  host's policy sp metrics reads; rows written by another host with a
  who holding a quote, a backslash and a newline are escaped; yesterday's
  row is not counted; a tool the policy does not limit is not shown;
- the journal's entries by state as a call now would take them: done,
  a fresh pending, a pending older than twice the budget (unknown), an
  unknown, a failed, none of another tool;
- the ok calls the target received equal the audit log's, per host;
- the database stopped: sp metrics still writes the exposition, with
  sallyport_state_up{backend="postgres"} 0 and no state series, and says
  why in one stderr line."""
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest import prom  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import (  # noqa: E402
    absent_reason, fleet_policy, fleet_tool, shared_state)
from sptest.run import SP, Caller, sp_env  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

TIMEOUT_MS = 5000
WHO = "profile:default"
ODD_WHO = 'uid:"7\\7\n\u00e9'


def doc(tmp, host, port, conninfo):
    state = os.path.join(tmp, "state-" + host)
    if not os.path.isdir(state):
        os.mkdir(state, 0o700)
    return fleet_policy(
        tmp, host, port, {"postgres": conninfo}, [
            fleet_tool("day_item", "/day/{id}", limits={"per_day": 3}),
            fleet_tool("put_item", "/items/{id}", mutating=True,
                       http={"method": "PUT", "path": "/items/{id}"},
                       idempotency={"window_s": 3600}),
            fleet_tool("free_item", "/free/{id}"),
        ], limits={"call_timeout_ms": TIMEOUT_MS, "dedupe_ms": 0},
        state_dir=state)


def session(config, calls):
    c = Caller(config)
    try:
        return [c.call(tool, value).get("outcome") for tool, value in calls]
    finally:
        c.s.close()


def metrics(config):
    r = subprocess.run([SP, "metrics", "--config", config],
                       capture_output=True, env=sp_env(), timeout=120)
    try:
        return r, prom.parse(r.stdout), None
    except ValueError as e:
        return r, {}, str(e)


def series(fams, name, *labels):
    return {tuple(l.get(k) for k in labels): int(v)
            for l, v in fams.get(name, {}).get("samples", [])}


def rows_from_elsewhere(cluster):
    """What another host would have left: a pending entry of a broker
    long dead, a fresh one, an unknown, a failed, one of a tool this
    policy lacks; per_day rows of another who, of yesterday, of a tool
    without per_day."""
    now = int(time.time() * 1000)
    day = now // 86400000
    rows = [("a" * 64, "pending", now - 60 * TIMEOUT_MS, "put_item"),
            ("b" * 64, "pending", now, "put_item"),
            ("c" * 64, "unknown", now - 1000, "put_item"),
            ("d" * 64, "failed", now - 1000, "put_item"),
            ("e" * 64, "done", now - 1000, "gone_item")]
    sql = ";".join("INSERT INTO sallyport.journal (key, state, ts_ms, tool) "
                   "VALUES ('%s', '%s', %d, '%s')" % r for r in rows)
    odd = ODD_WHO.replace("'", "''")
    sql += (";INSERT INTO sallyport.day_counts VALUES "
            "(E'%s', 'day_item', %d, 2), ('%s', 'day_item', %d, 3), "
            "('%s', 'free_item', %d, 9)" % (
                odd.replace("\\", "\\\\").replace("\n", "\\n"), day, WHO,
                day - 1, WHO, day))
    cluster.admin_sql(sql, "fleet")


def audit_ok(tmp, host):
    n = {}
    with open(os.path.join(tmp, "audit-%s.jsonl" % host)) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "execution" and r.get("outcome") == "ok":
                n[r.get("tool")] = n.get(r.get("tool"), 0) + 1
    return n


def check_up(tmp, target, fams_a, fams_b):
    want_spent = {("day_item", "per_day", WHO): 3,
                  ("day_item", "per_day", ODD_WHO): 2}
    for host, fams in (("a", fams_a), ("b", fams_b)):
        check("host %s: state_up 1 for postgres" % host,
              series(fams, "sallyport_state_up", "backend") ==
              {("postgres",): 1}, fams.get("sallyport_state_up"))
        check("host %s: per_day spent is the fleet's, by who" % host,
              series(fams, "sallyport_limit_spent", "tool", "limit",
                     "who") == want_spent,
              series(fams, "sallyport_limit_spent", "tool", "limit", "who"))
        j = series(fams, "sallyport_journal_entries", "tool", "state")
        check("host %s: journal entries by state, from the database" % host,
              j == {("put_item", "pending"): 1, ("put_item", "done"): 1,
                    ("put_item", "failed"): 1, ("put_item", "unknown"): 2},
              j)
        ok = series(fams, "sallyport_calls_total", "tool", "outcome")
        got = {t: n for (t, o), n in ok.items() if o == "ok" and n}
        check("host %s: ok calls are the audit log's" % host,
              got == audit_ok(tmp, host), (got, audit_ok(tmp, host)))
    sent = [r["path"] for r in target.requests()]
    check("the target received the three day_item calls and one put_item",
          sorted(p.split("/")[1] for p in sent) ==
          ["day", "day", "day", "free", "items"], sent)


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, conninfo, r = shared_state("sp-metrics-pg-", doc)
    check("sp state init makes the schema", r.returncode == 0, r.stderr)
    target = Target(tmp)
    try:
        a = write_policy(tmp, doc(tmp, "a", target.port, conninfo), "a.json")
        b = write_policy(tmp, doc(tmp, "b", target.port, conninfo), "b.json")
        got = session(a, [("day_item", "1 'q'"), ("day_item", "$(id)"),
                          ("put_item", "-n\n\u6f22"), ("free_item", "x")])
        got += session(b, [("day_item", "%2e%2e"), ("day_item", "4"),
                           ("put_item", "-n\n\u6f22")])
        check("the calls: three day_item ok, the fourth denied, a replay",
              got == ["ok", "ok", "ok", "ok", "ok", "denied", "ok"], got)
        rows_from_elsewhere(cluster)
        ra, fams_a, err_a = metrics(a)
        rb, fams_b, err_b = metrics(b)
        check("sp metrics: exit 0, nothing on stderr, strict format",
              [ra.returncode, rb.returncode, err_a, err_b] ==
              [0, 0, None, None] and ra.stderr == rb.stderr == b"",
              (ra.returncode, rb.returncode, err_a, err_b, ra.stderr))
        check_up(tmp, target, fams_a, fams_b)
        cluster.stop()
        rd, fams_d, err_d = metrics(a)
        check("database stopped: exit 0, still the strict format",
              rd.returncode == 0 and err_d is None, (rd.returncode, err_d))
        check("database stopped: state_up 0, no state series",
              series(fams_d, "sallyport_state_up", "backend") ==
              {("postgres",): 0} and not series(
                  fams_d, "sallyport_limit_spent", "tool", "limit", "who")
              and not series(fams_d, "sallyport_journal_entries", "tool",
                             "state"), fams_d.get("sallyport_state_up"))
        err = rd.stderr.decode("utf-8", "replace")
        check("database stopped: one stderr line says why",
              err.count("\n") == 1 and "metrics" in err, err)
        check("database stopped: the audit counts are still written",
              prom.value(fams_d, "sallyport_calls_total", tool="day_item",
                         outcome="ok") == 2, fams_d.get("sallyport_calls_total"))
    finally:
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""requirepeer in the shared state's connection is refused at start
(sp-policy(5) "state"; docs/design.md section 9.2), with a real throwaway
cluster and a real HTTP target counting requests.

libpq checks requirepeer at every connect, the broker's reconnect inside
its seccomp filter too, and looks the server's uid up in the user
database (getpwuid_r: /etc/nsswitch.conf, /etc/passwd) to compare names:
the confined broker may not, and was killed (SIGSYS) at its first
reconnect after a restart of the cluster.  So it is refused before any
session runs, wherever it comes from:

- requirepeer naming the cluster's own user, and one naming another user
  (quoted, with a quote in it), in the policy's "postgres": sp check and
  sp mcp exit 78 with one line naming requirepeer; nothing reaches the
  target.
- requirepeer from PGREQUIREPEER in the environment, or from a service
  file (PGSERVICEFILE, service=): the same, after the first connect.
- The same conninfo without requirepeer: sp check passes, and a session
  decides per_day 2 in the database across a stop and start of the
  cluster (ok, then ok and denied), two requests at the target."""
import os
import pwd
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, start_refusal  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import (  # noqa: E402
    absent_reason, fleet_policy, fleet_tool, shared_state)
from sptest.run import SP, Caller, finish, sp_env, start  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

RETRY_S = 1.5	# above PG_RETRY_MS (state/pg.h)


def doc(tmp, name, port, conninfo):
    return fleet_policy(tmp, name, port, {"postgres": conninfo},
                        [fleet_tool("day_item", "/day/{id}",
                                    limits={"per_day": 2})])


def refused(label, cfg, target, env=None):
    """sp check and sp mcp both refuse cfg at start, one line naming
    requirepeer; nothing sent."""
    before = len(target.requests())
    c = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       env=sp_env(extra=env), timeout=120)
    err = c.stderr.decode("utf-8", "replace")
    lines = [x for x in err.splitlines() if "requirepeer" in x]
    check("%s: sp check exits 78, one line naming requirepeer" % label,
          c.returncode == 78 and len(lines) == 1 and
          "user database" in lines[0], (c.returncode, err))
    p = start(cfg, env=env)
    status, out, err = finish(p, INITIALIZE, timeout=120)
    lines = [x for x in err.splitlines() if "requirepeer" in x]
    check("%s: sp mcp refuses to start (78), one line naming requirepeer"
          % label, status == 78 and len(lines) == 1 and
          "user database" in lines[0] and start_refusal(out) is not None,
          (status, out, err))
    check("%s: nothing reached the target" % label,
          len(target.requests()) == before, target.requests())


def decided_across_a_restart(tmp, cluster, conninfo, target):
    """Without requirepeer: the reconnect inside the filter works."""
    cfg = write_policy(tmp, doc(tmp, "plain", target.port, conninfo),
                       "plain.json")
    c = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       env=sp_env(), timeout=120)
    check("without requirepeer: sp check passes", c.returncode == 0,
          (c.returncode, c.stderr))
    a = Caller(cfg)
    try:
        first = a.call("day_item", "1")
        cluster.stop()
        down = a.call("day_item", "down")
        cluster.start()
        time.sleep(RETRY_S)
        rest = [a.call("day_item", v) for v in ("-2", "$(3)")]
    finally:
        status = a.s.close()
    err = bytes(a.s.stderr).decode("utf-8", "replace")
    got = [x.get("outcome") for x in [first, down] + rest]
    check("without requirepeer: per_day 2 decided in the database across "
          "a restart (ok; denied while down; ok, denied)",
          got == ["ok", "denied", "ok", "denied"], (got, err))
    check("without requirepeer: the session ends cleanly", status == 0,
          (status, err))
    check("without requirepeer: two requests reached the target",
          sorted(x["path"] for x in target.requests()) ==
          ["/day/-2", "/day/1"], target.requests())


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, conninfo, r = shared_state("sp-peer-", doc)
    check("sp state init makes the schema", r.returncode == 0, r.stderr)
    owner = pwd.getpwuid(os.stat(cluster.data).st_uid).pw_name
    target = Target(tmp)
    try:
        for label, peer in (("requirepeer the cluster's user", owner),
                            ("requirepeer another user",
                             "'no\\'body $(id)'")):
            cfg = write_policy(tmp, doc(tmp, "p", target.port, conninfo +
                                        " requirepeer=" + peer), "p.json")
            refused(label, cfg, target)
        cfg = write_policy(tmp, doc(tmp, "e", target.port, conninfo),
                           "e.json")
        refused("PGREQUIREPEER", cfg, target, {"PGREQUIREPEER": owner})
        services = os.path.join(tmp, "pg_service.conf")
        with open(services, "w") as f:
            f.write("[fleet]\nrequirepeer=%s\n" % owner)
        cfg = write_policy(tmp, doc(tmp, "s", target.port, conninfo +
                                    " service=fleet"), "s.json")
        refused("requirepeer from a service file", cfg, target,
                {"PGSERVICEFILE": services})
        decided_across_a_restart(tmp, cluster, conninfo, target)
    finally:
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

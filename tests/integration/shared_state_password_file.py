#!/usr/bin/env python3
"""state.password_file and the grant (sp-policy(5) "state"; docs/design.md
section 9.2), against a real cluster whose pg_hba asks one role
(PASSWORD_ROLE) for a SCRAM password, and a real HTTP target counting requests.

- A role without the grant: sp check and sp mcp refuse at start, naming
  sp state init --grant; nothing reaches the target.
- sp state init --grant ROLE; then the role, its password read from
  password_file (0600), decides in the database: per_day 2 lets two
  calls through and denies the third, counted at the target.
- The same file made 0644: refused at start by sp check and sp mcp,
  whatever strict_credentials says, and nothing reaches the target.
- A wrong password in the file: sp check refuses it; sp mcp starts and
  refuses every governed call, as with a database it cannot reach; the
  password is never printed."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, start_refusal  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import (  # noqa: E402
    PASSWORD_ROLE, absent_reason, fleet_policy, fleet_tool, shared_state)
from sptest.run import SP, Caller, finish, sp_env, start  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

ROLE = PASSWORD_ROLE
PASSWORD = "p'w \"$(id)\" -\u00e9"


def doc(tmp, name, port, conninfo, password_file=None):
    state = {"postgres": conninfo}
    if password_file is not None:
        state["password_file"] = password_file
    return fleet_policy(tmp, name, port, state,
                        [fleet_tool("day_item", "/day/{id}",
                                    limits={"per_day": 2})],
                        strict_credentials=False)


def secret_file(tmp, name, text, mode):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    os.chmod(path, mode)
    return path


def refused(label, cfg, want, target):
    """sp check and sp mcp both refuse cfg, saying want; nothing sent."""
    before = len(target.requests())
    c = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       env=sp_env(), timeout=120)
    err = c.stderr.decode("utf-8", "replace")
    check("%s: sp check exits 78 saying %s" % (label, want),
          c.returncode == 78 and want in err and PASSWORD not in err,
          (c.returncode, err))
    p = start(cfg)
    status, out, err = finish(p, INITIALIZE, timeout=120)
    msg = start_refusal(out) or ""
    check("%s: sp mcp refuses to start (78), saying %s" % (label, want),
          status == 78 and want in err + msg and PASSWORD not in err + msg,
          (status, out, err))
    check("%s: nothing reached the target" % label,
          len(target.requests()) == before, target.requests())


def wrong_password(cfg, target):
    """sp check refuses it; sp mcp treats a database it cannot log in to
    as one it cannot reach (a password being rotated is the usual
    cause): it starts, says so once, and refuses every governed call."""
    before = len(target.requests())
    c = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       env=sp_env(), timeout=120)
    err = c.stderr.decode("utf-8", "replace")
    check("a wrong password: sp check exits 78 saying password "
          "authentication failed", c.returncode == 78 and
          "password authentication failed" in err and PASSWORD not in err,
          (c.returncode, err))
    b = Caller(cfg)
    try:
        got = b.call("day_item", "9")
    finally:
        b.s.close()
    err = bytes(b.s.stderr).decode("utf-8", "replace")
    check("a wrong password: sp mcp starts, says it once on stderr, and "
          "denies the governed call as unavailable",
          got.get("outcome") == "denied" and
          "unavailable" in got.get("message", "") and
          err.count("password authentication failed") == 1 and
          "not-the-password" not in err, (got, err))
    check("a wrong password: nothing reached the target",
          len(target.requests()) == before, target.requests())


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, owner_conninfo, r = shared_state(
        "sp-pw-", lambda t, n, p, c: doc(t, n, p, c))
    check("sp state init makes the schema", r.returncode == 0, r.stderr)
    cluster.admin_sql("CREATE ROLE %s LOGIN PASSWORD '%s'" % (
        ROLE, PASSWORD.replace("'", "''")))
    conninfo = cluster.conninfo(user=ROLE, db="fleet")
    good = secret_file(tmp, "pg.pass", PASSWORD, 0o600)
    target = Target(tmp)
    try:
        cfg = write_policy(tmp, doc(tmp, "s", target.port, conninfo, good),
                           "s.json")
        refused("no grant", cfg, "sp state init --grant " + ROLE, target)
        init = write_policy(tmp, doc(tmp, "init", 9, owner_conninfo),
                            "init.json")
        g = subprocess.run([SP, "state", "init", "--config", init,
                            "--grant", ROLE], capture_output=True,
                           env=sp_env(), timeout=120)
        check("sp state init --grant %s" % ROLE, g.returncode == 0 and
              ("granted to " + ROLE).encode() in g.stdout, g)
        a = Caller(cfg)
        try:
            got = [a.call("day_item", v).get("outcome")
                   for v in ("1", "-2", "$(3)")]
        finally:
            a.s.close()
        check("granted, password from password_file: per_day 2 decided in "
              "the database (ok, ok, denied)",
              got == ["ok", "ok", "denied"], got)
        check("granted: two requests reached the target",
              sorted(x["path"] for x in target.requests()) ==
              ["/day/-2", "/day/1"], target.requests())
        os.chmod(good, 0o644)
        refused("password_file 0644", cfg, "pg.pass", target)
        bad = secret_file(tmp, "bad.pass", "not-the-password", 0o600)
        cfg_bad = write_policy(tmp, doc(tmp, "b", target.port, conninfo,
                                        bad), "b.json")
        wrong_password(cfg_bad, target)
    finally:
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

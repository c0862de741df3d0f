#!/usr/bin/env python3
"""A shared state that cannot work is refused at start (sp-policy(5)
"state"; docs/design.md section 9.2; issue 28), against a real cluster
and a real HTTP target counting requests.

For each of:
- the schema's version in the database changed (older, then newer than
  this sp's), with psql as the cluster's superuser;
- a "postgres" conninfo holding password=... (with quotes and $() in
  it), or passfile=;
- a TCP host=127.0.0.1, one after a socket in host's list, a hostaddr=
  beside a unix socket's host=, or sslkey=...;
- a hostaddr= from a service file (service=) or from PGHOSTADDR, beside
  the socket's host=;
sp check exits 78 with one line on stderr that names the fix (for a
newer schema, upgrade sp: sp state init would refuse it), sp mcp
exits 78 answering its client's first request with the start refusal and
nothing else on stdout, with one line on stderr naming the fix, a call
sent after initialize is never answered ok, no password is printed
anywhere, and nothing reaches the target.  The schema put back, the same
policy starts and its call reaches the target: what was refused was the
case, not the setup.  (A password_file open to others is refused in
shared_state_password_file.py.)"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, INITIALIZED, call, start_refusal  # noqa
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import (  # noqa: E402
    absent_reason, fleet_policy, fleet_tool, shared_state)
from sptest.run import SP, Caller, finish, sp_env, start  # noqa: E402
from sptest.tap import check, done, skip_all  # noqa: E402
from sptest.target import Target  # noqa: E402

PASSWORD = "p'w \"$(id)\" `id` -\u00e9\u6f22"
PASSWORD_FIX = 'put it in "password_file"'
HOST_FIX = "give host=/path/of/its/directory"
TLS_FIX = "through a local unix socket"


def doc(tmp, name, port, conninfo):
    return fleet_policy(tmp, name, port, {"postgres": conninfo},
                        [fleet_tool("day_item", "/day/{id}",
                                    limits={"per_day": 50})],
                        limits={"dedupe_ms": 0})


def quoted(value):
    """value as a conninfo value: single quotes, \\ and ' escaped."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def lines(text):
    return [l for l in text.splitlines() if l.strip()]


def refused(tmp, label, conninfo, fixes, target, env=None):
    """sp check and sp mcp both refuse the policy naming conninfo at
    start, each with one stderr line saying every one of fixes; nothing
    is sent.  env: variables added to their environment."""
    fix = " / ".join(fixes)
    cfg = write_policy(tmp, doc(tmp, label, target.port, conninfo),
                       label + ".json")
    _, before = target.seen()
    c = subprocess.run([SP, "check", "--dump", "--config", cfg],
                       capture_output=True, env=sp_env(extra=env),
                       timeout=120)
    err = c.stderr.decode("utf-8", "replace")
    check("%s: sp check exits 78 with one stderr line naming the fix (%s)"
          % (label, fix), c.returncode == 78 and len(lines(err)) == 1 and
          all(f in err for f in fixes) and c.stdout == b"",
          (c.returncode, c.stdout, err))
    p = start(cfg, env=env)
    status, out, err = finish(p, INITIALIZE + INITIALIZED +
                              call(1, "day_item", {"id": "after $(id)"}),
                              timeout=120)
    msg = start_refusal(out)
    check("%s: sp mcp exits 78, only the start refusal on stdout" % label,
          status == 78 and msg is not None, (status, out))
    check("%s: sp mcp says it in one stderr line naming the fix (%s)" % (
        label, fix), len(lines(err)) == 1 and
        all(f in err for f in fixes), err)
    audit = os.path.join(tmp, "audit-%s.jsonl" % label)
    printed = c.stderr + c.stdout + out + err.encode() + (
        open(audit, "rb").read() if os.path.exists(audit) else b"")
    check("%s: no password printed or logged" % label,
          PASSWORD.encode() not in printed and b"p'w" not in printed and
          b"$(id)\" `id`" not in printed, printed)
    _, after = target.seen()
    check("%s: nothing reached the target" % label,
          len(after) == len(before), after[len(before):])
    return cfg


def starts(cfg, target, label):
    """The same policy once its case is undone: its call is sent."""
    _, before = target.seen()
    a = Caller(cfg)
    try:
        got = a.call("day_item", "back '1' $(id)")
    finally:
        status = a.s.close()
    _, after = target.seen()
    check("%s: undone, the same policy starts and its call is sent" % label,
          got.get("outcome") == "ok" and status == 0 and
          len(after) == len(before) + 1, (got, status))


def schema_version(tmp, cluster, conninfo, target):
    for version, fix in ((0, "run sp state init"), (2, "upgrade sp")):
        cluster.admin_sql("UPDATE sallyport.meta SET version = %d" %
                          version, "fleet")
        cfg = refused(tmp, "version-%d" % version, conninfo,
                      ("schema is version %d" % version, fix), target)
    cluster.admin_sql("UPDATE sallyport.meta SET version = 1", "fleet")
    starts(cfg, target, "schema version 1 again")


def conninfos(tmp, cluster, conninfo, target):
    cases = [
        ("password", conninfo + " password=" + quoted(PASSWORD),
         PASSWORD_FIX),
        ("passfile", conninfo + " passfile=" +
         quoted(os.path.join(tmp, "pgpass $(id)")), PASSWORD_FIX),
        ("host", "host=127.0.0.1 port=5432 dbname=fleet user=spadmin",
         HOST_FIX),
        ("hostaddr", conninfo + " hostaddr=127.0.0.1", HOST_FIX),
        ("sslkey", conninfo + " sslmode=require sslkey=" +
         quoted(os.path.join(tmp, "client 'k'.key")), TLS_FIX),
    ]
    for keyword, ci, fix in cases:
        refused(tmp, keyword, ci, ('"postgres" %s ' % keyword, fix), target)
    # a TCP host after a socket in host's list: libpq tries it once the
    # socket does not answer
    refused(tmp, "host-list", "host=%s,,127.0.0.1 dbname=fleet "
            "user=spadmin" % cluster.socket_dir,
            ('"postgres" host ', HOST_FIX), target)
    # the TCP host in a service file, or the environment, not the
    # conninfo: PQhost names the socket's host= beside the hostaddr=
    svc = os.path.join(tmp, "pg_service.conf")
    with open(svc, "w") as f:
        f.write("[fleet]\nhost=%s\nhostaddr=127.0.0.1\ndbname=fleet\n"
                "user=spadmin\n" % cluster.socket_dir)
    refused(tmp, "service-hostaddr", "service=fleet",
            ("service file", "hostaddr", HOST_FIX), target,
            {"PGSERVICEFILE": svc})
    refused(tmp, "env-hostaddr", conninfo, ("PGHOSTADDR", HOST_FIX),
            target, {"PGHOSTADDR": "127.0.0.1"})
    svc_ok = os.path.join(tmp, "pg_service_ok.conf")
    with open(svc_ok, "w") as f:
        f.write("[fleet]\nhost=%s\ndbname=fleet\nuser=spadmin\n" %
                cluster.socket_dir)
    c = subprocess.run([SP, "check", "--config", write_policy(
        tmp, doc(tmp, "service-ok", target.port, "service=fleet"),
        "service-ok.json")], capture_output=True,
        env=sp_env(extra={"PGSERVICEFILE": svc_ok}), timeout=120)
    check("a service file naming a socket only passes sp check",
          c.returncode == 0, c.stderr)


def main():
    why = absent_reason()
    if why is not None:
        skip_all(why)
    tmp, cluster, conninfo, r = shared_state("sp-refused-", doc)
    check("sp state init makes the schema", r.returncode == 0, r.stderr)
    target = Target(tmp)
    try:
        schema_version(tmp, cluster, conninfo, target)
        conninfos(tmp, cluster, conninfo, target)
    finally:
        target.stop()
        cluster.stop()
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Shared hosts (docs/design.md section 7), the broker's side: who the client
is when fd 0 is a socket without peer credentials, and the users the
children drop to (server.run_as).  Each "nothing ran" is counted at a
real HTTP target started here, never taken from an exit status alone.
Checks that need root (dropping to another user) say so and skip."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request, start_refusal  # noqa: E402
from sptest.policy import run_as_root  # noqa: E402
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import SP, sp_env  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

TIMEOUT = 10
# A value the target must see as one path segment, whatever it holds.
ODD_ID = 'it"s $(id) %2e%2e é'


def write_policy(tmp, port, server=None, audit=True):
    doc = {
        "sallyport": 1,
        "server": dict({"name": "host-test"}, **(server or {})),
        "limits": {"call_timeout_ms": 3000},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["read"]},
                     "ops": {"scopes": ["read"],
                             "match": {"uid": [os.getuid()]}}},
    }
    if audit:
        doc["audit"] = {"path": os.path.join(tmp, "audit.jsonl")}
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    os.chmod(path, 0o644)
    return path


MSGS = (INITIALIZE + request(1, "tools/list") +
        request(2, "tools/call", {"name": "get_item",
                                  "arguments": {"id": ODD_ID}}))


def answers(out):
    """{id: message} of sp's stdout; a line that is not JSON fails here."""
    got = {}
    for line in out.splitlines():
        msg = json.loads(line)
        got[msg.get("id")] = msg
    return got


def tool_names(got):
    return [t["name"] for t in got.get(1, {}).get("result", {})
            .get("tools", [])] if 1 in got else None


def session_starts(tmp):
    try:
        with open(os.path.join(tmp, "audit.jsonl")) as f:
            recs = [json.loads(line) for line in f]
    except FileNotFoundError:
        return []
    return [r for r in recs if r["kind"] == "session-start"]


def audit_records(tmp, session):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        recs = [json.loads(line) for line in f]
    return [r for r in recs if r["session"] == session]


def over_pipe(cfg, args=(), **kw):
    p = subprocess.run([SP, "mcp", "--config", cfg] + list(args),
                       input=MSGS, capture_output=True, env=sp_env(),
                       timeout=TIMEOUT, **kw)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def over_tcp(cfg, args=()):
    """sp mcp on the server end of a loopback TCP connection, as a unit
    whose ListenStream= names a port would run it."""
    lsn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(1)
    client = socket.create_connection(lsn.getsockname(), timeout=TIMEOUT)
    server, _ = lsn.accept()
    lsn.close()
    p = subprocess.Popen([SP, "mcp", "--config", cfg] + list(args),
                         stdin=server, stdout=server,
                         stderr=subprocess.PIPE, env=sp_env())
    server.close()
    out = b""
    try:
        client.sendall(MSGS)
        client.shutdown(socket.SHUT_WR)
        while True:
            data = client.recv(65536)
            if not data:
                break
            out += data
    except (OSError, socket.timeout):
        p.kill()
    client.close()
    try:
        _, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    return p.returncode, out, err.decode("utf-8", "replace")


def test_unknown_socket_peer(tmp, target):
    """Review host F1: a TCP peer is not the running user."""
    cfg = write_policy(tmp, target.port)
    status, out, err = over_pipe(cfg)
    got = answers(out)
    check("control: over a pipe the local user gets 'default' and the "
          "call reaches the target once",
          status == 0 and tool_names(got) == ["get_item"] and
          len(target.requests()) == 1, (status, out[-300:], err))
    before = len(target.requests())
    status, out, err = over_tcp(cfg)
    got = answers(out)
    check("a TCP peer (no peer credentials): tools/list is empty",
          status == 0 and tool_names(got) == [], (status, out[-300:], err))
    res = got.get(2, {}).get("result", {})
    check("its tools/call is answered 'denied' (no profile), as a result",
          res.get("isError") is True and
          res.get("structuredContent", {}).get("outcome") == "denied",
          got.get(2))
    check("and nothing reached the target",
          len(target.requests()) == before, target.requests()[before:])
    check("stderr says no profile fits", "no tools" in err, err)
    rec = session_starts(tmp)[-1]
    check("session-start records the unknown peer and no profile",
          rec.get("profile") == "" and
          rec.get("profile_from") == "unknown peer" and
          rec.get("peer") == "no peer credentials", rec)
    recs = audit_records(tmp, rec["session"])
    check("the denial is audited as a rejection, and no intent",
          [r.get("reason") for r in recs if r["kind"] == "rejection"] ==
          ["scope-denied"] and
          not any(r["kind"] == "intent" for r in recs), recs)
    status, out, err = over_tcp(cfg, args=("--profile", "ops"))
    check("--profile of a matched profile is refused for a TCP peer (64), "
          "with one line saying why and none claiming it is missing",
          status == 64 and start_refusal(out) is not None and
          "cannot be read" in err and
          "no profile named" not in err, (status, out, err))
    status, out, err = over_tcp(cfg, args=("--profile", "default"))
    got = answers(out)
    check("--profile of an unmatched profile is the operator's word",
          status == 0 and tool_names(got) == ["get_item"] and
          len(target.requests()) == before + 1, (status, out[-300:], err))


def test_run_as_not_root(tmp, target):
    """Review host F3: without root, run_as is not applied: say so."""
    cfg = write_policy(tmp, target.port, server={"run_as": "daemon"},
                       audit=False)
    kw = {}
    if os.geteuid() == 0:
        kw = {"user": 65534, "group": 65534, "extra_groups": []}
    status, out, err = over_pipe(cfg, **kw)
    lines = [l for l in err.splitlines() if "run_as" in l]
    check("not root: one stderr line says run_as 'daemon' is not used",
          status == 0 and len(lines) == 1 and "'daemon'" in lines[0] and
          "not used" in lines[0], (status, err))
    check("and the session still runs its call",
          answers(out).get(2, {}).get("result", {})
          .get("structuredContent", {}).get("outcome") == "ok",
          out[-300:])


def test_run_as_root(tmp, target):
    """Review host F2: as root, a run_as that cannot be used stops the
    session before any child starts."""
    if os.geteuid() != 0:
        skip("run_as that cannot be used stops the session", "needs root")
        return
    for user, why in (("no-such-user-x", "no such user"),
                      ("root", "uid or gid is 0")):
        audit = os.path.join(tmp, "audit.jsonl")
        if os.path.exists(audit):
            os.unlink(audit)
        before = len(target.requests())
        cfg = write_policy(tmp, target.port, server={"run_as": user})
        status, out, err = over_pipe(cfg)
        check("run_as '%s': exit 71, the client told why" % user,
              status == 71 and "server.run_as" in (start_refusal(out) or ""),
              (status, out[-300:], err))
        check("run_as '%s': one line naming the user and why" % user,
              len(err.splitlines()) == 1 and "'%s'" % user in err and
              why in err, err)
        check("run_as '%s': no session started, nothing reached the "
              "target" % user, session_starts(tmp) == [] and
              len(target.requests()) == before, target.requests()[before:])
    test_run_as_shared_uid(tmp, target)
    cfg = write_policy(tmp, target.port, server={"run_as": "daemon"})
    p = subprocess.Popen([SP, "mcp", "--config", cfg],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=sp_env())
    kids = confined_children(p.pid)
    ids = {r: (status_field(pid, "Uid"), status_field(pid, "Gid"),
               status_field(pid, "Groups")) for r, pid in kids.items()}
    try:
        out, err = p.communicate(MSGS, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    check("run_as 'daemon': the executor runs as uid/gid 1 (all four), "
          "without supplementary groups",
          ids.get("executor") == ("1\t1\t1\t1", "1\t1\t1\t1", ""), ids)
    check("and the frontend as nobody: two uids, neither shared",
          ids.get("frontend") ==
          ("65534\t65534\t65534\t65534", "65534\t65534\t65534\t65534", ""),
          ids)
    check("and the call reached the target",
          p.returncode == 0 and answers(out).get(2, {}).get("result", {})
          .get("structuredContent", {}).get("outcome") == "ok",
          (p.returncode, out[-300:], err))


def test_run_as_shared_uid(tmp, target):
    """Issue 14 finding 7: as root the two children never share a uid.
    The frontend is nobody, so a policy without run_as, or whose run_as
    is nobody, is refused (78) before any child starts, naming the key."""
    for case, user in (("no run_as", None), ("run_as 'nobody'", "nobody")):
        audit = os.path.join(tmp, "audit.jsonl")
        if os.path.exists(audit):
            os.unlink(audit)
        before = len(target.requests())
        cfg = write_policy(tmp, target.port, server={"run_as": user})
        with open(cfg) as f:
            doc = json.load(f)
        if user is None:
            del doc["server"]["run_as"]
        with open(cfg, "w") as f:
            json.dump(doc, f)
        status, out, err = over_pipe(cfg)
        check("as root, %s: exit 78, the client told why" % case,
              status == 78 and "server.run_as" in (start_refusal(out) or ""),
              (status, out[-300:], err))
        check("as root, %s: one line naming server.run_as and why" % case,
              len(err.splitlines()) == 1 and "server.run_as" in err and
              "must not share a uid" in err and
              (user is None or "uid 65534" in err), err)
        check("as root, %s: no session started, nothing reached the "
              "target" % case, session_starts(tmp) == [] and
              len(target.requests()) == before, target.requests()[before:])


def test_audit_log_file(tmp, target):
    """The log every session of the host appends to: a symlink at its
    path is refused before any child starts, and a log owned by another
    uid (who could rewrite it) is said to be (review host F6)."""
    cfg = write_policy(tmp, target.port)
    audit = os.path.join(tmp, "audit.jsonl")
    if os.path.exists(audit):
        os.unlink(audit)
    elsewhere = os.path.join(tmp, "elsewhere")
    os.symlink(elsewhere, audit)
    before = len(target.requests())
    status, out, err = over_pipe(cfg)
    # the start-up checks sp check runs too (policy/startcheck.c)
    check("a symlink at the audit path: exit 78, one line saying so",
          status == 78 and len(err.splitlines()) == 1 and
          "symbolic link" in err, (status, out[-200:], err))
    check("and the client is told, without the path",
          "symbolic link" in (start_refusal(out) or "") and
          tmp.encode() not in out, out)
    check("and nothing was created through it or sent to the target",
          not os.path.exists(elsewhere) and
          len(target.requests()) == before, target.requests()[before:])
    os.unlink(audit)
    status, out, err = over_pipe(cfg)
    check("control: a log of our own uid, created 0600, no warning",
          status == 0 and os.stat(audit).st_mode & 0o777 == 0o600 and
          "audit_log_open_file" not in err, (status, err))
    if os.geteuid() != 0:
        skip("a log owned by another uid", "needs root to chown")
        return
    os.chown(audit, 65534, 65534)
    status, out, err = over_pipe(cfg)
    lines = [l for l in err.splitlines()
             if l.startswith("sp[sp]: warning: ") and "owned by" in l]
    check("a log owned by uid 65534: one warning naming its owner",
          status == 0 and len(lines) == 1 and "uid 65534" in lines[0] and
          "rewrite" in lines[0], (status, err))
    check("and the session still appends to it",
          answers(out).get(2, {}).get("result", {})
          .get("structuredContent", {}).get("outcome") == "ok" and
          len(session_starts(tmp)) == 2, (out[-300:], err))


def main():
    tmp = tempfile.mkdtemp(prefix="sp-host-")
    os.chmod(tmp, 0o755)  # uid 65534 must read the policy
    target = Target(tmp)
    try:
        test_unknown_socket_peer(tmp, target)
        test_run_as_not_root(tmp, target)
        test_run_as_root(tmp, target)
        test_audit_log_file(tmp, target)
    finally:
        target.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

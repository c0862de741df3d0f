#!/usr/bin/env python3
"""The live socket of the system instance: only members of its group can
connect (contrib/systemd/sallyport.socket, docs/design.md section 7).
systemd is not PID 1 here, so the socket is made as systemd makes it from
the unit: systemd-socket-activate --accept --inetd listens and runs the
real `sp mcp` per connection on its stdin and stdout (StandardInput=
socket), and the test gives the socket the unit's SocketMode, SocketUser
and SocketGroup, its directory DirectoryMode.  Then `sp connect`, run as
uids that are not root, is refused without the group and served with it
(as a supplementary group, or as the primary one); a refused client
starts no session (none audited)."""
import grp
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from systemd_units_verify import UNITS, one, settings  # noqa: E402
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import die_with_parent  # noqa: E402

TIMEOUT = 60
NOBODY, OTHER = 65534, 65533
TOOLS = [{"name": "get_item", "description": "Read one item.",
          "target": "api", "scope": "read",
          "http": {"method": "GET", "path": "/items/{id}"},
          "params": {"id": {"type": "string", "maxLength": 64}}}]


def unit():
    u = settings(os.path.join(UNITS, "sallyport.socket"))
    return {k: one(u, "Socket", k) for k in
            ("SocketUser", "SocketGroup", "SocketMode", "DirectoryMode",
             "Accept")}


def group_id(name):
    """The unit's group's gid, or an unused one standing for it (root
    may chown to any gid)."""
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        gid = 4242
        while True:
            try:
                grp.getgrgid(gid)
            except KeyError:
                return gid
            gid += 1


def connect(path, uid, gid, groups):
    """sp connect PATH as uid/gid with those supplementary groups:
    (status, stdout lines, stderr)."""
    def drop():
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)
    p = subprocess.run([SP, "connect", path], input=INITIALIZE +
                       request(1, "tools/list"), capture_output=True,
                       timeout=TIMEOUT, preexec_fn=drop, env=sp_env())
    return (p.returncode, p.stdout.splitlines(),
            p.stderr.decode("utf-8", "replace"))


def sessions(audit):
    try:
        with open(audit) as f:
            return [json.loads(l) for l in f
                    if json.loads(l)["kind"] == "session-start"]
    except OSError:
        return []


def wait_sessions(audit, n):
    """The audit's session-starts once n of them are there (a served
    client's session is audited before it is answered) or TIMEOUT."""
    end = time.monotonic() + TIMEOUT
    while len(sessions(audit)) < n and time.monotonic() < end:
        time.sleep(0.02)
    return sessions(audit)


def listen(path, config):
    """systemd-socket-activate serving sp mcp at path; None when the
    socket did not appear."""
    with open(path + ".log", "wb") as log:	# its and sp's stderr
        p = subprocess.Popen(["systemd-socket-activate", "--listen=" + path,
                              "--accept", "--inetd", SP, "mcp", "--config",
                              config], stdout=subprocess.DEVNULL,
                             stderr=log, env=sp_env(),
                             preexec_fn=die_with_parent)
    end = time.monotonic() + TIMEOUT
    while time.monotonic() < end and p.poll() is None:
        try:
            if stat.S_ISSOCK(os.stat(path).st_mode):
                return p
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    p.kill()
    p.wait()
    return None


def test_socket(tmp):
    u = unit()
    check("the unit declares Accept=yes, a SocketMode and a SocketGroup",
          u["Accept"] == "yes" and u["SocketMode"] and u["SocketGroup"], u)
    gid = group_id(u["SocketGroup"])
    os.chmod(tmp, 0o755)		# others reach the socket's directory
    rundir = os.path.join(tmp, "run")
    os.mkdir(rundir)
    os.chmod(rundir, int(u["DirectoryMode"], 8))
    path = os.path.join(rundir, "mcp.sock")
    audit = os.path.join(tmp, "audit.jsonl")
    config = shared_target_policy(tmp, tools=TOOLS, profiles={
        "clients": {"scopes": ["read"],
                    "match": {"uid": [NOBODY, OTHER]}}})
    server = listen(path, config)
    if not check("systemd-socket-activate listens at the socket",
                 server is not None):
        return
    try:
        os.chown(path, 0 if u["SocketUser"] == "root" else -1, gid)
        os.chmod(path, int(u["SocketMode"], 8))
        st = os.stat(path)
        check("the live socket: mode %04o, group %d" %
              (stat.S_IMODE(st.st_mode), st.st_gid),
              stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == gid, st)
        status, out, err = connect(path, NOBODY, NOBODY, [])
        check("uid %d outside the group: sp connect is refused" % NOBODY,
              status != 0 and out == [] and "ermission denied" in err,
              (status, out, err))
        status, out, err = connect(path, NOBODY, NOBODY, [gid])
        check("uid %d with the group as a supplementary one: served "
              "(initialize and tools/list answered)" % NOBODY,
              status == 0 and len(out) == 2 and b"get_item" in out[1],
              (status, out, err))
        status, out, err = connect(path, OTHER, gid, [])
        check("uid %d with the group as its primary one: served" % OTHER,
              status == 0 and len(out) == 2, (status, out, err))
        status, out, err = connect(path, OTHER, OTHER, [NOBODY])
        check("uid %d in other groups only: refused" % OTHER,
              status != 0 and out == [], (status, out, err))
        # The two served sessions are audited before they are answered:
        # once both are there, a refused client's would be too.
        peers = [s.get("peer") for s in wait_sessions(audit, 2)]
        check("exactly the two members' sessions ran (%s)" % peers,
              sorted(peers) == sorted(["uid %d gid %d" % (NOBODY, NOBODY),
                                       "uid %d gid %d" % (OTHER, gid)]),
              peers)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main():
    if os.geteuid() != 0:
        skip("the live socket admits its group only",
             "needs root to connect as other uids")
        done()
    if shutil.which("systemd-socket-activate") is None:
        skip("the live socket admits its group only",
             "systemd-socket-activate not installed (package systemd)")
        done()
    tmp = tmpdir()
    try:
        test_socket(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

#!/usr/bin/env python3
"""The real executor is not dumpable (docs/design.md section 4, threat
model: "even the same uid cannot read its memory through /proc or
ptrace").  Root may read any process's memory (CAP_SYS_PTRACE), so the
proof runs without it: sp mcp and a probe both run as one unprivileged
uid (nobody when the test is root, else the test's own), and the probe
tries to open /proc/PID/mem and to PTRACE_ATTACH.  A control process of
that uid, dumpable, must let the probe in -- else the probe proves
nothing -- and the executor and the frontend must not."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import finish, read_line, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

NOBODY = 65534

# Run as the unprivileged uid: one line of JSON per pid given,
# {"pid", "mem", "ptrace"}, each "ok" or the errno's name.
PROBE = r"""
import ctypes, errno, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                        ctypes.c_void_p]
PTRACE_ATTACH, PTRACE_DETACH, WALL = 16, 17, 0x40000000
for pid in map(int, sys.argv[1:]):
    try:
        with open("/proc/%d/mem" % pid, "rb"):
            mem = "ok"
    except OSError as e:
        mem = errno.errorcode.get(e.errno, str(e.errno))
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        os.waitpid(pid, WALL)
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        trace = "ok"
    else:
        trace = errno.errorcode.get(ctypes.get_errno(), "?")
    print(json.dumps({"pid": pid, "mem": mem, "ptrace": trace}), flush=True)
"""


def interpreter(uid):
    """A python3 the probe's uid may run: the test's own may live under
    a home that uid cannot enter."""
    for exe in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(exe) and (uid == os.geteuid() or
                                    usable_by_others(exe)):
            return exe
    return None


def usable_by_others(path):
    """Each directory on the way searchable, the file executable, by
    others."""
    path = os.path.realpath(path)
    if not os.stat(path).st_mode & 0o001:
        return False
    d = os.path.dirname(path)
    while d != "/":
        if not os.stat(d).st_mode & 0o001:
            return False
        d = os.path.dirname(d)
    return True


def identity():
    """(uid, gid) the session and the probe run as."""
    if os.geteuid() == 0:
        return NOBODY, NOBODY
    return os.getuid(), os.getgid()


def as_user(uid, gid):
    def drop():
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
    return drop


def probe(uid, gid, pids):
    p = subprocess.run([interpreter(uid), "-c", PROBE] +
                       [str(x) for x in pids],
                       capture_output=True, timeout=60,
                       preexec_fn=as_user(uid, gid))
    got = {}
    for line in p.stdout.splitlines():
        r = json.loads(line)
        got[r["pid"]] = r
    return got, p.stderr.decode("utf-8", "replace")


def main():
    uid, gid = identity()
    if interpreter(uid) is None:
        check("a python3 that uid %d may run, for the probe" % uid, False)
        done()
    tmp = tmpdir()
    control = None
    p = None
    try:
        config = shared_target_policy(tmp)
        os.chown(tmp, uid, gid)
        os.chown(config, uid, gid)
        p = start(config, preexec_fn=as_user(uid, gid))
        p.stdin.write(INITIALIZE)
        p.stdin.flush()
        line = read_line(p, 60)
        check("sp mcp as uid %d answers initialize" % uid,
              b'"protocolVersion"' in line, line)
        kids = confined_children(p.pid, timeout=60)
        check("its frontend and executor run confined, as uid %d" % uid,
              sorted(kids) == ["executor", "frontend"] and
              all(status_field(k, "Uid").split()[1] == str(uid)
                  for k in kids.values()), kids)
        control = subprocess.Popen(["cat"], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL,
                                   preexec_fn=as_user(uid, gid))
        pids = [control.pid] + [kids[r] for r in sorted(kids)]
        got, err = probe(uid, gid, pids)
        c = got.get(control.pid, {})
        check("control: the probe opens the mem of, and attaches to, a "
              "dumpable process of uid %d" % uid,
              c.get("mem") == "ok" and c.get("ptrace") == "ok", (got, err))
        for role in sorted(kids):
            r = got.get(kids[role], {})
            check("the %s's /proc/PID/mem is refused to its own uid (%s)" %
                  (role, r.get("mem")), r.get("mem") in ("EACCES", "EPERM"),
                  (r, err))
            check("PTRACE_ATTACH to the %s is refused to its own uid (%s)" %
                  (role, r.get("ptrace")), r.get("ptrace") == "EPERM",
                  (r, err))
            # The kernel gives a non-dumpable process's /proc files to
            # root; a dumpable one's stay its owner's.
            if uid != 0:
                owner = os.stat("/proc/%d/mem" % kids[role]).st_uid
                check("the %s's /proc files belong to root, not uid %d" %
                      (role, uid), owner == 0, owner)
        status, _, err = finish(p, b"", timeout=60)
        p = None
        check("the session ends cleanly", status == 0, err)
    finally:
        if control is not None:
            control.stdin.close()
            control.wait(timeout=30)
        if p is not None:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

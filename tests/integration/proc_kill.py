#!/usr/bin/env python3
"""kill -9 of any one process ends the session: the executor -> the
broker ends the frontend and exits 70; the frontend -> the executor is
gone within 1 s; the broker -> both children are gone within 1 s."""
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_lib import (INITIALIZE, check, confined_children, done,  # noqa
                      finish, gone_within, policy, start, stop, tmpdir)


def session():
    tmp = tmpdir()
    p = start(policy(tmp))
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    return p, confined_children(p.pid)


def kill_child(role):
    p, kids = session()
    other = "executor" if role == "frontend" else "frontend"
    if not check("%s test: both children up" % role, len(kids) == 2, kids):
        stop(p)
        return
    t0 = time.monotonic()
    os.kill(kids[role], signal.SIGKILL)
    gone = gone_within([kids[other]], 1.0)
    check("kill -9 %s: the %s is gone within 1 s (%.0f ms)" %
          (role, other, (time.monotonic() - t0) * 1000), gone)
    try:
        p.wait(timeout=5)
    except Exception:
        pass
    status, out, err = finish(p)
    check("kill -9 %s: sp mcp exits 70" % role, status == 70, err)
    check("kill -9 %s: stderr says which role died and why" % role,
          "%s died: killed by SIGKILL" % role in err, err)
    check("kill -9 %s: nothing left running" % role,
          gone_within(kids.values(), 1.0))


def kill_broker():
    p, kids = session()
    if not check("broker test: both children up", len(kids) == 2, kids):
        stop(p)
        return
    t0 = time.monotonic()
    os.kill(p.pid, signal.SIGKILL)
    gone = gone_within(kids.values(), 1.0)
    check("kill -9 broker: both children gone within 1 s (%.0f ms)" %
          ((time.monotonic() - t0) * 1000), gone)
    stop(p)


def main():
    kill_child("executor")
    kill_child("frontend")
    kill_broker()
    done()


main()

#!/usr/bin/env python3
"""sp mcp runs under umask 077 whatever its caller's (docs/design.md section 4:
every file Sallyport creates is mode 0600 under umask 077), and so do its
children: started under umask 000, the broker, the frontend and the
executor all report Umask 0077 in /proc (what proves the umask: the
audit log is opened with an explicit 0600, which no umask can widen, so
its mode is checked as that promise, not as the umask's)."""
import os
import shutil
import stat
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import finish, read_line, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402


def main():
    tmp = tmpdir()
    try:
        config = shared_target_policy(tmp)
        p = start(config, preexec_fn=lambda: os.umask(0))
        p.stdin.write(INITIALIZE)
        p.stdin.flush()
        line = read_line(p, 30)
        check("the session answers initialize",
              line.endswith(b"\n") and b'"id":0' in line and
              b'"protocolVersion"' in line, line)
        kids = confined_children(p.pid)
        masks = {"broker": status_field(p.pid, "Umask")}
        for role, pid in kids.items():
            masks[role] = status_field(pid, "Umask")
        check("broker, frontend and executor found (%s)" %
              " ".join(sorted(masks)), len(masks) == 3, masks)
        check("each runs under umask 0077, though started under 0000",
              all(m == "0077" for m in masks.values()), masks)
        status, _, err = finish(p)
        check("the session ends cleanly", status == 0, err)
        mode = stat.S_IMODE(os.stat(os.path.join(tmp, "audit.jsonl")).st_mode)
        check("the audit log is created 0600 by its own open mode (%04o)" %
              mode, mode == 0o600)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

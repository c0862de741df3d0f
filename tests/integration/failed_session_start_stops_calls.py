#!/usr/bin/env python3
"""The broker writes session-start when the frontend says the session is
in use (initialize here), before any other record (docs/design.md section
6).  When that write fails, the children running, the session still ends
before any action: sp mcp
exits 70 naming the failure, no request reaches the HTTP target, and the log holds no partial line.

The failure is real: the log already holds one session and the file size
limit (RLIMIT_FSIZE) is set to its size, so opening it and reading its
tail succeed and the next append fails with EFBIG (SIGXFSZ ignored)."""
import os
import resource
import signal
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, only_protocol, request  # noqa: E402
from sptest.policy import get_item_policy  # noqa: E402
from sptest.run import SP, finish, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402
import subprocess  # noqa: E402


def make_policy(tmp, port):
    return get_item_policy(tmp, "start-audit", "http://127.0.0.1:%d" % port,
                           3000, audit=True)


def session(config, limit=None):
    def cap():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    p = subprocess.Popen([SP, "mcp", "--config", config],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=sp_env(),
                         preexec_fn=cap if limit is not None else None)
    call = request(1, "tools/call", {"name": "get_item",
                                     "arguments": {"id": "x\"y $(z) \u00e9"}})
    status, out, err = finish(p, INITIALIZE + call)
    return status, out, err


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder", 3600)
    config = make_policy(tmp, target.port)
    log = os.path.join(tmp, "audit.jsonl")
    try:
        status, _, err = session(config)
        check("a first session runs and is audited",
              status == 0 and len(target.seen()[1]) == 1, (status, err))
        size = os.path.getsize(log)
        status, out, err = session(config, limit=size)
        # sp has ended: seen() waits until all it sent is logged
        requests = target.seen()[1][1:]
    finally:
        target.stop()
    check("sp mcp ends with 70", status == 70, (status, err))
    check("stderr names the failed append",
          any(l.startswith("sp[sp]:") and "File too large" in l
              for l in err.splitlines()), err)
    check("stderr names the record that failed: session-start",
          any(l.startswith("sp[sp]:") and "session-start could not be "
              "audited" in l for l in err.splitlines()), err)
    check("no request reached the HTTP target", requests == [], requests)
    check("stdout holds nothing but protocol lines",
          only_protocol(out) is None, out)
    check("no call answered ok", b'"outcome":"ok"' not in out, out)
    check("the log is unchanged: no partial line",
          os.path.getsize(log) == size, os.path.getsize(log))
    done()


if __name__ == "__main__":
    main()

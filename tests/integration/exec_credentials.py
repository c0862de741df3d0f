#!/usr/bin/env python3
"""A symlink swapped in for a token file after the broker's check (which
follows it: its target is a private file) cannot redirect the executor's
read: the executor opens with O_NOFOLLOW and refuses to start, exit 78,
naming the file.  (The broker, not the executor, picks sp's status: it
reports whichever child it saw end first.)"""
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE  # noqa: E402
from sptest.policy import write_policy, write_secret  # noqa: E402
from sptest.run import finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402


def main():
    tmp = tmpdir()
    real = write_secret(tmp, "elsewhere $(id).secret", b"it's \"x\"\n")
    link = os.path.join(tmp, "api.token")
    os.symlink(real, link)
    cfg = write_policy(tmp, {
        "sallyport": 1, "server": {"name": "exec-cred"},
        "credentials": {"tok": {"type": "bearer", "file": link}},
        "targets": {"api": {"type": "http", "base_url": "http://127.0.0.1:9",
                            "credential": "tok"}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string"}}}],
        "profiles": {"default": {"scopes": ["read"]}}})
    status, out, err = finish(start(cfg), INITIALIZE, timeout=10)
    # The executor exits 78; the broker reports the frontend, which dies
    # first of the executor's missing hello (70): either way, no session.
    check("a symlink as token file: sp mcp refuses to start",
          status in (70, 78), (status, err))
    check("the executor names the file and why",
          "api.token: is a symbolic link" in err, err)
    check("nothing of the secret reaches stdout or stderr",
          b"it's" not in out and "it's" not in err, err)
    done()


main()

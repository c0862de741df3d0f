#!/usr/bin/env python3
"""A symlink in a token file's place (its target a private file) cannot
redirect the read: the start-up checks sp check runs too
(policy/startcheck.c, O_NOFOLLOW) refuse it before any child starts, exit
78, naming the file on stderr and telling the client why in a sentence
without the path.  The executor opens with the same function on the
descriptor it reads, so a symlink swapped in after the broker's check is
refused there as well."""
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
    check("a symlink as token file: sp mcp refuses to start, exit 78",
          status == 78, (status, err))
    check("stderr names the file and why",
          "api.token is a symbolic link" in err, err)
    check("the client is told why, without the path",
          b"is a symbolic link" in out and b"api.token" not in out
          and tmp.encode() not in out, out)
    check("nothing of the secret reaches stdout or stderr",
          b"it's" not in out and "it's" not in err, err)
    done()


main()

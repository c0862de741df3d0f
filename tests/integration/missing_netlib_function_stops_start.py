#!/usr/bin/env python3
"""A libssh2.so.1 that lacks a function sp binds stops the session before
any call (executor/netlib.h).  tests/netlib/libssh2.so.1 defines every
libssh2 function of executor/netlib_list.h but libssh2_knownhost_readline;
with its directory first in LD_LIBRARY_PATH the dynamic linker's ordinary
search finds it, as it would for a DT_NEEDED entry.  The executor says on
one stderr line which symbol is missing and exits 70, the broker ends the
session with 70, stdout carries nothing but protocol lines, and the HTTP
target never hears a request."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, only_protocol, request  # noqa: E402
from sptest.policy import get_item_policy  # noqa: E402
from sptest.run import (BUILDDIR, finish, sanitized_build, start,  # noqa: E402
                        tmpdir)
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

FAKE_DIR = os.path.join(BUILDDIR, "tests", "netlib")
MISSING = "libssh2_knownhost_readline"


def make_policy(tmp, port):
    return get_item_policy(tmp, "netlib-missing",
                           "http://127.0.0.1:%d" % port, 3000)


def library_path():
    old = os.environ.get("LD_LIBRARY_PATH")
    return FAKE_DIR + (":" + old if old else "")


def main():
    check("the fake library was built",
          os.path.exists(os.path.join(FAKE_DIR, "libssh2.so.1")), FAKE_DIR)
    tmp = tmpdir()
    target = Target(tmp, "recorder", 3600)
    try:
        p = start(make_policy(tmp, target.port),
                  env={"LD_LIBRARY_PATH": library_path()})
        status, out, err = finish(p, INITIALIZE + request(
            1, "tools/call", {"name": "get_item",
                              "arguments": {"id": "a'b\"c $(x)"}}))
        requests = target.seen()[1]	# sp has ended: all it sent is in
    finally:
        target.stop()
    lines = [l for l in err.splitlines() if MISSING in l]
    check("one stderr line names the missing symbol", len(lines) == 1, err)
    check("it is the executor's, naming the library",
          len(lines) == 1 and lines[0].startswith("sp[executor]:") and
          "libssh2.so.1" in lines[0], err)
    check("sp mcp ends with 70 (a child died)", status == 70, (status, err))
    # Whichever child the broker reaps first is named: the executor, or
    # the frontend that lost it.  Under ASan the frontend's exit path is
    # killed by its own filter (sptest.run.sanitized_build), not exit 70.
    died = "died: " if sanitized_build() else "exited with status 70"
    check("the broker says a child died and the session ended",
          any(l.startswith("sp[sp]:") and died in l and "session ended" in l
              for l in err.splitlines()), err)
    check("stdout holds nothing but protocol lines",
          only_protocol(out) is None, out)
    check("no call answered ok",
          b'"outcome":"ok"' not in out, out)
    check("no request reached the HTTP target", requests == [], requests)
    done()


if __name__ == "__main__":
    main()

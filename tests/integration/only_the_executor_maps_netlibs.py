#!/usr/bin/env python3
"""Only the executor maps libcurl and libssh2 (executor/netlib.h): sp
carries no DT_NEEDED entry for either, a live session's executor has both
mapped and makes an HTTP call through them, and the broker and the
frontend map neither.  The executor maps them, and what they pull in,
before its filter is on: confined and not yet past its hello, it already
has them, and a call to a host by name maps nothing more than the NSS
modules glibc's resolver may load (the filter lets those in)."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import get_item_policy  # noqa: E402
from sptest.procfs import (children, confined_children,  # noqa: E402
                           status_field)
from sptest.run import SP, SP_TEST, Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

NETLIBS = ("libcurl", "libssh2")
# What libcurl and libssh2 pull in for an HTTPS call and an SSH session.
PULLED_IN = ("libssl", "libcrypto")


def needed(binary):
    """The DT_NEEDED sonames of binary, as readelf -d shows them."""
    out = subprocess.run(["readelf", "-d", binary], capture_output=True,
                         text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]")
            for line in out.splitlines() if "(NEEDED)" in line]


def mapped(pid):
    """The file names pid has mapped, or None when /proc hides them."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return {os.path.basename(line.split()[5])
                    for line in f if len(line.split()) >= 6}
    except PermissionError:
        return None


def has(names, lib):
    return any(n.startswith(lib + ".so") or n.startswith(lib + "-")
               for n in names)


def check_maps(role, pid, want):
    names = mapped(pid)
    if names is None:
        check("%s maps # SKIP /proc/%d/maps not readable here" % (role, pid),
              True)
        return
    for lib in NETLIBS:
        check("%s %s %s" % (role, "maps" if want else "does not map", lib),
              has(names, lib) == want, sorted(names))


def mapped_paths(pid):
    """Every file pid has mapped, by path, or None when /proc hides it."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return {line.split()[5] for line in f if len(line.split()) >= 6}
    except (PermissionError, FileNotFoundError):
        return None


def make_policy(tmp, port, host="127.0.0.1"):
    return get_item_policy(tmp, "netlib-maps",
                           "http://%s:%d" % (host, port), 5000)


def phase_loaded_before_confinement(tmp, target):
    """SP_TEST_HOOK=executor:slow-hello holds the confined executor 1.5 s
    before its hello: its maps then are those it was confined with."""
    s = Session(make_policy(tmp, target.port, "localhost"), binary=SP_TEST,
                hook="executor:slow-hello")
    try:
        ex = confined_children(s.p.pid).get("executor", 0)
        confined = status_field(ex, "Seccomp") == "2"
        at_confinement = mapped_paths(ex)
        early = b"slow-hello returned" not in s.stderr
        if at_confinement is None:
            check("maps at confinement # SKIP /proc/%d/maps not readable"
                  % ex, True)
            return
        names = {os.path.basename(p) for p in at_confinement}
        check("the executor is confined and still before its hello",
              confined and early, bytes(s.stderr))
        for lib in NETLIBS + PULLED_IN:
            check("confined executor already maps %s" % lib,
                  has(names, lib), sorted(names))
        s.call(3, "get_item", {"id": "by name \u00e9 $(x)"})
        got = s.wait([3])
        check("a call to localhost by name succeeds",
              structured(got.get(3)).get("outcome") == "ok", got)
        after = mapped_paths(ex) or set()
        new = sorted(p for p in after - at_confinement
                     if not os.path.basename(p).startswith("libnss_"))
        check("the call by name mapped no new library", new == [], new)
    finally:
        s.close()


def main():
    libs = needed(SP)
    check("readelf lists sp's DT_NEEDED entries", "libc.so.6" in libs, libs)
    for lib in NETLIBS:
        check("sp has no DT_NEEDED for %s" % lib,
              not any(n.startswith(lib) for n in libs), libs)

    tmp = tmpdir()
    target = Target(tmp)
    s = Session(make_policy(tmp, target.port))
    try:
        value = "q\"uote $(id) \u00e9\u6f22 %2e%2e"
        s.call(7, "get_item", {"id": value})
        got = s.wait([7])
        check("an HTTP call through the bound libcurl succeeds",
              structured(got.get(7)).get("outcome") == "ok", got)
        paths = [r.get("path") for r in target.requests()]
        check("the target saw exactly that one request",
              len(paths) == 1 and paths[0].startswith("/items/q%22uote"),
              paths)
        kids = children(s.p.pid)
        check("both children found", set(kids) == {"frontend", "executor"},
              kids)
        check_maps("executor", kids.get("executor", 0), True)
        check_maps("frontend", kids.get("frontend", 0), False)
        check_maps("broker", s.p.pid, False)
    finally:
        status = s.close()
        target.stop()
    check("the session ends cleanly", status == 0,
          bytes(s.stderr).decode("utf-8", "replace"))

    target = Target(tmp, name="named")
    try:
        phase_loaded_before_confinement(tmp, target)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

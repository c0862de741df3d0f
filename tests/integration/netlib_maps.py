#!/usr/bin/env python3
"""Only the executor maps libcurl and libssh2 (executor/netlib.h): sp
carries no DT_NEEDED entry for either, a live session's executor has both
mapped and makes an HTTP call through them, and the broker and the
frontend map neither."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_lib import HttpTarget, Session, structured, write_policy  # noqa
from proc_lib import SP, check, children, done, tmpdir  # noqa

NETLIBS = ("libcurl", "libssh2")


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


def make_policy(tmp, port):
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "netlib-maps"},
        "limits": {"call_timeout_ms": 5000},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["read"]}},
    })


def main():
    libs = needed(SP)
    check("readelf lists sp's DT_NEEDED entries", "libc.so.6" in libs, libs)
    for lib in NETLIBS:
        check("sp has no DT_NEEDED for %s" % lib,
              not any(n.startswith(lib) for n in libs), libs)

    tmp = tmpdir()
    target = HttpTarget(tmp)
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
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Three programs (docs/design.md section 1): sp, and the children
sp-frontend and sp-executor it opens at start (broker/children.h).

- readelf -d: neither sp nor sp-frontend needs libcurl, libssh2, libssl
  or libcrypto; sp-executor needs libcurl and libssh2.
- A live session: each child is its own program (its /proc/PID/exe and
  argv[0]); the executor maps libcurl, libssh2 and what they pull in
  (libssl, libcrypto), makes an HTTP call through them, and the broker
  and the frontend map none of them.  The executor maps them before its
  filter is on: confined and not yet past its hello, it already has
  them, and a call to a host by name maps nothing more than the NSS
  modules glibc's resolver may load (the filter lets those in).
- Where the children come from: the directory of the running sp when
  sp-frontend is there, both from that one directory; one missing there
  is a refusal naming the file (exit 70), never the other's installed
  copy.
- A child started by hand (no or a wrong command line) exits 64 saying
  it is started by sp mcp."""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, start_refusal, structured  # noqa: E402
from sptest.policy import get_item_policy  # noqa: E402
from sptest.procfs import (children, confined_children,  # noqa: E402
                           status_field)
from sptest.run import (SP, SP_TEST, Session, finish, sp_env,  # noqa: E402
                        start, tmpdir)
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

NETLIBS = ("libcurl", "libssh2")
# What libcurl and libssh2 pull in for an HTTPS call and an SSH session.
PULLED_IN = ("libssl", "libcrypto")
BUILD = os.path.dirname(os.path.abspath(SP))
CHILDREN = ("sp-frontend", "sp-executor")


def needed(binary):
    """The DT_NEEDED sonames of binary, as readelf -d shows them."""
    out = subprocess.run(["readelf", "-d", binary], capture_output=True,
                         text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]")
            for line in out.splitlines() if "(NEEDED)" in line]


def has(names, lib):
    return any(n.startswith(lib + ".so") or n.startswith(lib + "-")
               for n in names)


def test_needed():
    for prog, want in (("sp", ()), ("sp-frontend", ()),
                       ("sp-executor", NETLIBS)):
        libs = needed(os.path.join(BUILD, prog))
        check("readelf lists %s's DT_NEEDED entries" % prog,
              "libc.so.6" in libs, libs)
        for lib in NETLIBS + PULLED_IN:
            check("%s %s DT_NEEDED for %s" % (
                prog, "has a" if lib in want else "has no", lib),
                has(libs, lib) == (lib in want), libs)


def mapped_paths(pid):
    """Every file pid has mapped, by path, or None when /proc hides it."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return {line.split()[5] for line in f if len(line.split()) >= 6}
    except (PermissionError, FileNotFoundError):
        return None


def check_maps(role, pid, want, through=None):
    """through: a library of role's own (libpq) that pulls in PULLED_IN,
    which role then maps, and nothing of NETLIBS."""
    paths = mapped_paths(pid)
    if paths is None:
        check("%s maps # SKIP /proc/%d/maps not readable here" % (role, pid),
              True)
        return
    names = {os.path.basename(p) for p in paths}
    for lib in NETLIBS + PULLED_IN:
        mapped = want or (through is not None and lib in PULLED_IN)
        check("%s %s %s%s" % (role, "maps" if mapped else "does not map", lib,
                              " (through %s)" % through
                              if mapped and not want else ""),
              has(names, lib) == mapped, sorted(names))


def program_of(pid):
    """(the file /proc/PID/exe names, argv[0]), or None when hidden."""
    try:
        exe = os.readlink("/proc/%d/exe" % pid)
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv0 = f.read().split(b"\0")[0].decode()
    except OSError:
        return None
    return exe, argv0


def check_program(name, pid, want):
    """A confined child is not dumpable: only root may read its
    /proc/PID/exe, so another user counts the check as skipped."""
    got = program_of(pid)
    if got is None and os.geteuid() != 0:
        skip(name, "/proc/%d/exe not readable here (not root)" % pid)
    else:
        check(name, got == want, got)


def make_policy(tmp, port, host="127.0.0.1"):
    return get_item_policy(tmp, "programs", "http://%s:%d" % (host, port),
                           5000)


def test_session(tmp, target):
    s = Session(make_policy(tmp, target.port))
    try:
        value = "q\"uote $(id) \u00e9\u6f22 %2e%2e"
        s.call(7, "get_item", {"id": value})
        got = s.wait([7])
        check("an HTTP call through the linked libcurl succeeds",
              structured(got.get(7)).get("outcome") == "ok", got)
        paths = [r.get("path") for r in target.requests()]
        check("the target saw exactly that one request",
              len(paths) == 1 and paths[0].startswith("/items/q%22uote"),
              paths)
        kids = children(s.p.pid)
        check("both children found", set(kids) == {"frontend", "executor"},
              kids)
        for role, pid in sorted(kids.items()):
            prog = "sp-" + role
            check_program("the %s runs %s from beside sp" % (role, prog),
                          pid, (os.path.join(BUILD, prog), prog))
        check_maps("executor", kids.get("executor", 0), True)
        check_maps("frontend", kids.get("frontend", 0), False)
        # sp built with libpq (the fleet's shared state, docs/design.md
        # section 9.2) maps the libssl and libcrypto libpq needs; the
        # broker's filter, not its maps, keeps it off the network
        check_maps("broker", s.p.pid, False,
                   "libpq" if has(needed(SP), "libpq") else None)
    finally:
        status = s.close()
    check("the session ends cleanly", status == 0,
          bytes(s.stderr).decode("utf-8", "replace"))


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
        check("tests/sp-test runs the test build of the executor",
              program_of(ex) == (os.path.join(os.path.dirname(SP_TEST),
                                              "sp-executor"), "sp-executor"),
              program_of(ex))
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


def copy_programs(tmp, name, programs):
    d = os.path.join(tmp, name)
    os.mkdir(d)
    for prog in programs:
        shutil.copy2(os.path.join(BUILD, prog), d)
    return d


def test_where(tmp, target):
    """A copy of the three programs in a directory of its own runs its
    own children; without sp-executor there, sp refuses to start."""
    cfg = make_policy(tmp, target.port)
    d = copy_programs(tmp, "all three \u00e9 $(x)", ("sp",) + CHILDREN)
    s = Session(cfg, binary=os.path.join(d, "sp"))
    try:
        kids = confined_children(s.p.pid)
        check("a copied sp starts both children",
              set(kids) == {"frontend", "executor"}, kids)
        for role, pid in sorted(kids.items()):
            prog = "sp-" + role
            check_program("a copied sp runs the %s copied beside it" % prog,
                          pid, (os.path.join(d, prog), prog))
    finally:
        status = s.close()
    check("and its session ends cleanly", status == 0, bytes(s.stderr))

    d = copy_programs(tmp, "no executor", ("sp", "sp-frontend"))
    before = len(target.requests())
    p = start(cfg, binary=os.path.join(d, "sp"))
    status, out, err = finish(p, INITIALIZE)
    check("sp-frontend without sp-executor beside sp: exit 70, "
          "one line naming the missing file",
          status == 70 and "cannot open the executor's program %s/"
          "sp-executor" % d in err and err.count("\n") == 1,
          (status, err))
    check("the client is told the session cannot start",
          "sp-frontend and sp-executor cannot be found" in
          (start_refusal(out) or ""), out)
    check("no request reached the target",
          len(target.requests()) == before, target.requests())


def test_by_hand():
    for prog in CHILDREN:
        for args in ([], ["info"], ["loud", "default"],
                     ["debug", "default", "x"], ["-v", "$(id)"]):
            p = subprocess.run([os.path.join(BUILD, prog)] + args,
                               stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=60,
                               env=sp_env())
            err = p.stderr.decode("utf-8", "replace")
            check("%s %r by hand: 64, one line, nothing on stdout" %
                  (prog, args), p.returncode == 64 and p.stdout == b"" and
                  err.endswith("%s is started by sp mcp, not by hand "
                               "(sp(1))\n" % prog) and
                  err.count("\n") == 1, (p.returncode, p.stdout, err))


def main():
    test_needed()
    test_by_hand()
    tmp = tmpdir()
    target = Target(tmp)
    try:
        test_session(tmp, target)
        test_where(tmp, target)
    finally:
        target.stop()
    target = Target(tmp, name="named")
    try:
        phase_loaded_before_confinement(tmp, target)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

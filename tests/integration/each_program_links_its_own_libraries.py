#!/usr/bin/env python3
"""Three programs (docs/design.md section 1): sp, and the children
sp-frontend and sp-executor it opens at start (broker/children.h).

- readelf -d: neither sp nor sp-frontend needs libcurl, libssh2, libssl
  or libcrypto; sp-executor needs libcurl and libssh2; none needs libpq.
- A live session: each child is its own program (its /proc/PID/exe and
  argv[0]); the executor maps libcurl, libssh2 and what they pull in
  (libssl, libcrypto), makes an HTTP call through them, and the broker
  and the frontend map none of them, nor libpq: a policy without
  "state" costs nothing of libpq (docs/design.md section 9.2).
- sp built with libpq (postgres=yes): a broker whose policy names
  "state" (its database down: the session starts all the same) maps
  libpq, loaded at run time, and the libssl and libcrypto it pulls in,
  and is confined with them; with libpq.so.5 unreadable (an empty file
  mounted over it in a mount namespace of its own, as root), sp mcp
  refuses to start (78) with one stderr line naming libpq5, sp check
  says so at the "state" key's line, and sp --version still says
  postgres=yes.  The executor maps them before its
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
import time

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
# Loaded by the broker only when its policy names "state" (state/pq_load.h)
PQLIB = "libpq"
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
        for lib in NETLIBS + PULLED_IN + (PQLIB,):
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
    """want: role maps NETLIBS and PULLED_IN; through: a library of role's
    own (libpq) that role maps and that pulls in PULLED_IN, and nothing of
    NETLIBS.  Neither: role maps none of them, nor libpq."""
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
    check("%s %s %s" % (role, "maps" if through == PQLIB else "does not map",
                        PQLIB),
          has(names, PQLIB) == (through == PQLIB), sorted(names))


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
        # a policy without "state": even an sp built with libpq maps
        # none of it (docs/design.md section 9.2)
        check_maps("broker without \"state\"", s.p.pid, False)
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


def built_with_libpq():
    out = subprocess.run([SP, "--version"], capture_output=True,
                         env=sp_env(), timeout=60).stdout.decode()
    return "postgres=yes" in out


def state_policy(tmp, target, name):
    """A policy whose "state" names a database no server listens for:
    the broker loads libpq and starts, its governed calls refused."""
    d = os.path.join(tmp, name)
    os.mkdir(d)
    return get_item_policy(d, "programs", "http://127.0.0.1:%d" % target.port,
                           5000, audit=True,
                           state={"postgres": "host='%s' dbname=none" %
                                  os.path.join(d, "no server")})


def test_with_state(tmp, target):
    """libpq is the broker's only when its policy names "state"."""
    s = Session(state_policy(tmp, target, "with state"))
    try:
        end = time.monotonic() + 10
        while b"not reachable" not in s.stderr and time.monotonic() < end:
            time.sleep(0.05)
        check("with \"state\" and its database down, the session starts "
              "saying so", b"not reachable" in s.stderr and
              s.p.poll() is None, bytes(s.stderr))
        check("the broker is confined",
              status_field(s.p.pid, "Seccomp") == "2",
              status_field(s.p.pid, "Seccomp"))
        check_maps("broker with \"state\"", s.p.pid, False, PQLIB)
    finally:
        status = s.close()
    check("and its session ends cleanly", status == 0, bytes(s.stderr))


def libpq_path():
    """The file dlopen("libpq.so.5") maps, as ldconfig's cache says."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                         timeout=60).stdout
    for line in out.splitlines():
        if line.strip().startswith("libpq.so.5 ") and "=>" in line:
            return os.path.realpath(line.split("=>", 1)[1].strip())
    return None


def without_libpq(argv, data=b""):
    """argv run with libpq.so.5 an empty file, in a mount namespace of
    its own (the host's file untouched): (status, stdout, stderr)."""
    r = subprocess.run(["unshare", "--mount", "--propagation", "private",
                        "sh", "-c", 'mount --bind /dev/null "$1" && shift && '
                        'exec "$@"', "sh", libpq_path()] + argv,
                       input=data, capture_output=True, env=sp_env(),
                       timeout=60)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def test_without_libpq(tmp, target):
    cfg = state_policy(tmp, target, "no libpq")
    if os.geteuid() != 0 or libpq_path() is None:
        skip("without libpq.so.5", "needs root and ldconfig's libpq.so.5")
        return
    status, out, err = without_libpq(["true"])
    if status != 0:
        skip("without libpq.so.5", "no mount namespace here: %s" % err)
        return
    before = len(target.requests())
    status, out, err = without_libpq([SP, "mcp", "--config", cfg],
                                     INITIALIZE)
    check("libpq.so.5 unreadable: sp mcp with \"state\" exits 78, one "
          "stderr line naming libpq5",
          status == 78 and "cannot load libpq.so.5" in err and
          "install the libpq5 package" in err and err.count("\n") == 1,
          (status, err))
    check("the client is told the session cannot start",
          "the shared state named at line" in
          (start_refusal(out) or ""), out)
    check("no request reached the target",
          len(target.requests()) == before, target.requests())
    status, out, err = without_libpq([SP, "check", "--config", cfg])
    with open(cfg) as f:
        line = 1 + f.read().split('"state"')[0].count("\n")
    check("libpq.so.5 unreadable: sp check exits 78 at \"state\"'s line, "
          "naming libpq5",
          status == 78 and ("%s:%d:" % (cfg, line)) in err and
          "install the libpq5 package" in err, (status, err))
    status, out, err = without_libpq([SP, "--version"])
    check("libpq.so.5 unreadable: sp --version still says postgres=yes",
          status == 0 and b"postgres=yes" in out, (status, out, err))
    cfg = make_policy(tmp, target.port)
    status, out, err = without_libpq([SP, "mcp", "--config", cfg],
                                     INITIALIZE)
    check("libpq.so.5 unreadable: a policy without \"state\" starts",
          b'"protocolVersion"' in out and status == 0, (status, out, err))


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
        if built_with_libpq():
            test_with_state(tmp, target)
            test_without_libpq(tmp, target)
        else:
            skip("a broker with \"state\"", "sp built without libpq")
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

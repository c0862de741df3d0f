#!/usr/bin/env python3
"""The children's stderr goes through the broker (broker/child_stderr.h):
each child's fd 2 (and the executor's fd 1) is a pipe of its own, and the
broker writes each line with the child's true role.  A child that writes
a forged session-end anchor ("sp[sp]: info: audit: session ... ended,
last hash ...") has it come out as "sp[frontend]: warning: sp[sp]: ...":
a line that is not the child's own diagnostic is a warning in the one
format (common/log.h); control bytes are escaped, an over-long line is
cut and marked, a last line without its newline is still said, and the
child's own diagnostics keep their level."""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.procfs import confined_children  # noqa: E402
from sptest.run import (SP_TEST, read_line, start, stop,  # noqa: E402
                        tmpdir)
from sptest.tap import check, done, skip  # noqa: E402

ANCHOR = "sp[sp]: info: audit: session "
FAKE = "session 0000000000000000 ended"
LINE_MAX = 1024


def audit_session(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    return recs[0]["session"] if recs else None


def session(hook, probe=None, env=None):
    """sp-test with hook; initialize, then end of input.  Returns
    (status, stdout, stderr lines, raw stderr bytes, session id)."""
    tmp = tmpdir()
    p = start(shared_target_policy(tmp), binary=SP_TEST, hook=hook, env=env)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    first = read_line(p, 10.0)
    if probe is not None:
        probe(p, first)
    p.stdin.close()
    p.stdin = None
    try:
        p.wait(timeout=20)
    except Exception:
        stop(p)
    raw = p.stderr.read()
    out = p.stdout.read()
    p.stdout.close()
    p.stderr.close()
    lines = raw.decode("utf-8", "replace").split("\n")
    return p.returncode, first + out, lines, raw, audit_session(tmp)


def attributed(lines):
    """Lines that do not start with one of the three true prefixes."""
    return [l for l in lines if l and not l.startswith(
        ("sp[sp]: ", "sp[frontend]: ", "sp[executor]: "))]


def forged(role):
    status, out, lines, raw, sid = session(role + ":stderr-forge")
    own = "sp[%s]: " % role
    pre = own + "warning: "
    anchors = [l for l in lines if l.startswith(ANCHOR)]
    check("%s forge: the session ends with 0" % role, status == 0,
          "\n".join(lines))
    check("%s forge: one line reads as the broker's anchor, with the "
          "audit log's session id" % role,
          len(anchors) == 1 and sid is not None and
          anchors[0].startswith(ANCHOR + sid + " ended, last hash "),
          (sid, anchors))
    check("%s forge: the forged anchor is attributed to the %s" %
          (role, role), pre + ANCHOR + "0000000000000000 ended" in
          "\n".join(lines) and not any(l.startswith("sp[sp]:") and FAKE in l
                                       for l in lines), "\n".join(lines))
    check("%s forge: control bytes, DEL and a C1 control escaped, UTF-8 "
          "and shell text kept" % role,
          pre + "bell\\x07 esc\\x1b[2J cr\\x0d del\\x7f c1\\xc2\\x9b "
          "\u00e9t\u00e9 \"$(id)\" -x %2e%2e" in lines, "\n".join(lines))
    check("%s forge: a byte that is not UTF-8 is escaped" % role,
          pre + "raw\\xff byte" in lines, "\n".join(lines))
    check("%s forge: no raw ESC, BEL, CR, DEL or C1 byte reached stderr" %
          role, not any(b in raw for b in (b"\x1b", b"\x07", b"\r",
                                           b"\x7f", b"\xc2\x9b")), raw)
    cut = [l for l in lines if l.startswith(pre + "L")]
    check("%s forge: the 5000-byte line is cut at %d bytes and marked, and "
          "nothing of its rest starts a line" % (role, LINE_MAX),
          cut == [pre + "L" * LINE_MAX + " [line cut]"] and
          not any(l.startswith("L") for l in lines), [len(l) for l in cut])
    check("%s forge: its own diagnostics keep their level (one prefix)" %
          role, own + "info: test hook: stderr-forge returned" in
          lines, "\n".join(lines))
    check("%s forge: every stderr line starts with a true role" % role,
          attributed(lines) == [], attributed(lines))
    check("%s forge: stdout holds only the initialize answer" % role,
          out.count(b"\n") == 1 and b'"protocolVersion"' in out, out)


def partial():
    status, out, lines, raw, sid = session("frontend:stderr-partial")
    burst = [l for l in lines
             if l.startswith("sp[frontend]: warning: burst ")]
    check("a burst of 200 lines written just before the child's exit is "
          "said whole, in order", burst == [
              "sp[frontend]: warning: burst %03d %s" %
                                            (i, "b" * 229)
                                            for i in range(200)],
          "%d lines" % len(burst))
    check("a last line without its newline is said whole at the child's "
          "exit", "sp[frontend]: warning: partial last line, no newline" in
          lines,
          "\n".join(lines))
    at = [i for i, l in enumerate(lines) if l.startswith(ANCHOR)]
    part = [i for i, l in enumerate(lines)
            if l == "sp[frontend]: warning: partial last line, no newline"]
    check("... before the broker's anchor, which has a line of its own",
          len(at) == 1 and len(part) == 1 and part[0] < at[0] and
          attributed(lines) == [], "\n".join(lines[-5:]))


class Unreadable(Exception):
    """/proc/PID/fd of a child that is not dumpable, read as another
    user than root: the kernel refuses, whatever the fd holds."""


def fd_target(pid, fd):
    try:
        return os.readlink("/proc/%d/fd/%d" % (pid, fd))
    except PermissionError as e:
        raise Unreadable() from e
    except OSError:
        return None


def fds():
    seen = {}

    def probe(p, first):
        kids = confined_children(p.pid)
        try:
            for role, pid in kids.items():
                seen[role] = (fd_target(pid, 1), fd_target(pid, 2))
        except Unreadable:
            seen["unreadable"] = True
        seen["broker"] = (fd_target(p.pid, 1), fd_target(p.pid, 2))

    session(None, probe)
    if seen.get("unreadable"):
        why = "the children are not dumpable: only root reads their fds"
        skip("each child's fd 2 is a pipe of its own", why)
        skip("the executor's fd 1 is its stderr pipe", why)
        return
    fe, ex, br = (seen.get(r, (None, None)) for r in
                  ("frontend", "executor", "broker"))
    check("each child's fd 2 is a pipe of its own, not the broker's stderr",
          all(x and x.startswith("pipe:") for x in (fe[1], ex[1])) and
          len({fe[1], ex[1], br[1]}) == 3, seen)
    check("the executor's fd 1 is its stderr pipe; the frontend's fd 1 is "
          "the client's stdout, the broker's is its stderr", ex[0] == ex[1]
          and fe[0] not in (fe[1], ex[1]) and br[0] == br[1], seen)


def journal():
    """Under systemd (JOURNAL_STREAM set) every line, the broker's and
    each child's relayed one, starts with the priority journald reads
    instead of the level word (sd-daemon(3)): the child's own level kept,
    a foreign line a warning; the children never see JOURNAL_STREAM (their
    stderr is the broker's pipe)."""
    status, out, lines, raw, sid = session(
        "executor:stderr-forge", env={"JOURNAL_STREAM": "8:4242"})
    lines = [l for l in lines if l]
    check("journal: every line is <N>sp[ROLE]: with N of 3, 4, 6 or 7",
          lines and all(re.match(r"<[3467]>sp\[(sp|frontend|executor)\]: ",
                                 l) for l in lines), "\n".join(lines))
    check("journal: no line carries a level word as well",
          not any(re.match(r"<\d>sp\[[a-z]+\]: (error|warning|info|debug): ",
                           l) for l in lines), "\n".join(lines))
    check("journal: the anchor is info (<6>), with the session id",
          sid is not None and "<6>sp[sp]: audit: session %s ended, last "
          "hash " % sid in "\n".join(lines), "\n".join(lines))
    check("journal: the executor's own info line is <6>",
          "<6>sp[executor]: test hook: stderr-forge returned" in lines,
          "\n".join(lines))
    check("journal: a line the executor wrote raw is a warning (<4>), "
          "the forged anchor still attributed to it",
          "<4>sp[executor]: raw\\xff byte" in lines and
          any(l.startswith("<4>sp[executor]: sp[sp]: info: audit: "
                           "session 0000") for l in lines),
          "\n".join(lines))


def main():
    journal()
    forged("frontend")
    forged("executor")
    partial()
    fds()
    done()


main()

#!/usr/bin/env python3
"""SP_LOG_LEVEL (sp(1) ENVIRONMENT): sp reads it, and sp mcp hands the
level to both children on their command line (child/child.h), so each of
the three processes writes at that level.

- Unset, empty: info; no process writes a debug line, though each has
  one to write (the broker names where its children's programs are, the
  executor its libraries, the frontend an unknown notification).
- debug: all three debug lines appear, each with its role; each child's
  argv[1] is "debug".
- error: not even the broker's info line at the session's end.
- Anything else (a wrong case, a newline, a number, `$(id)`, a leading
  dash): sp exits 64 with one line saying what it takes, stdout empty,
  nothing reaching the target."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, INITIALIZED, call  # noqa: E402
from sptest.policy import get_item_policy  # noqa: E402
from sptest.procfs import confined_children  # noqa: E402
from sptest.run import finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

UNKNOWN = (b'{"jsonrpc":"2.0","method":"notifications/x-\xc3\xa9 \\"$(id)'
           b'\\""}\n')
DEBUG_LINES = {
    "broker": "sp[sp]: debug: the children run sp-frontend and sp-executor "
              "from ",
    "executor": "sp[executor]: debug: libcurl/",
    "frontend": "sp[frontend]: debug: ignoring notification "
                "notifications/x-\u00e9 \"$(id)\"",
}


def session(cfg, level, starts=True):
    """One session: initialize, an unknown notification, one call.
    Returns (status, stdout, stderr lines, {role: argv of the child});
    starts: whether children are expected to be waited for."""
    env = {"SP_LOG_LEVEL": level} if level is not None else None
    p = start(cfg, env=env)
    argv = {}
    kids = confined_children(p.pid) if starts else {}
    for role, pid in kids.items():
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv[role] = f.read().split(b"\0")[:-1]
        except OSError:
            pass
    status, out, err = finish(p, INITIALIZE + INITIALIZED + UNKNOWN +
                              call(1, "get_item", {"id": "7"}), timeout=60)
    return status, out, err.splitlines(), argv


def debug_lines(lines):
    return {role: [l for l in lines if l.startswith(start)]
            for role, start in DEBUG_LINES.items()}


def test_levels(cfg, target):
    for level in (None, "", "info"):
        status, out, lines, argv = session(cfg, level)
        found = debug_lines(lines)
        check("SP_LOG_LEVEL=%r: the session ends with 0 and its call ran"
              % level, status == 0 and b'"outcome":"ok"' in out,
              (status, lines))
        check("SP_LOG_LEVEL=%r: no debug line from any process" % level,
              not any(found.values()) and
              not any(" debug: " in l for l in lines), lines)
        check("SP_LOG_LEVEL=%r: each child is told info" % level,
              all(a[1:2] == [b"info"] for a in argv.values()) and
              len(argv) == 2, argv)
    status, out, lines, argv = session(cfg, "debug")
    found = debug_lines(lines)
    check("SP_LOG_LEVEL=debug: the session ends with 0",
          status == 0 and b'"outcome":"ok"' in out, (status, lines))
    for role in sorted(DEBUG_LINES):
        check("SP_LOG_LEVEL=debug: the %s writes its debug line" % role,
              len(found[role]) == 1, lines)
    check("SP_LOG_LEVEL=debug: each child is told debug on its command "
          "line", len(argv) == 2 and
          all(a[1:2] == [b"debug"] for a in argv.values()), argv)
    status, out, lines, argv = session(cfg, "error")
    check("SP_LOG_LEVEL=error: the session ends with 0 and writes nothing "
          "on stderr", status == 0 and lines == [], (status, lines))
    check("SP_LOG_LEVEL=error: each child is told error",
          len(argv) == 2 and
          all(a[1:2] == [b"error"] for a in argv.values()), argv)
    check("the target saw the five sessions' calls, one each",
          len(target.requests()) == 5, target.requests())


def test_refused(cfg, target):
    before = len(target.requests())
    for level in ("DEBUG", "debug\n", "debug ", "7", "$(id)", "-v",
                  "d\u00e9bug", "warn"):
        status, out, lines, argv = session(cfg, level, starts=False)
        check("SP_LOG_LEVEL=%r: 64, that one line, nothing on stdout"
              % level, status == 64 and out == b"" and
              lines == ["sp[sp]: error: SP_LOG_LEVEL must be error, "
                        "warning, info or debug"],
              (status, out, lines))
    check("no refused level let a call reach the target",
          len(target.requests()) == before, target.requests())


def main():
    tmp = tmpdir()
    target = Target(tmp)
    try:
        cfg = get_item_policy(tmp, "levels", target.url, 5000)
        test_levels(cfg, target)
        test_refused(cfg, target)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

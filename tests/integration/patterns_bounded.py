#!/usr/bin/env python3
"""Param patterns are bounded (issue 14 finding 4).  Under glibc regcomp
`(((a{0,255}){0,255}){0,255})` made `sp check` die of SIGSEGV after 29 s at
13.9 GB.  Here `sp check` runs under a 1 GB address-space limit: the
nested pattern is an error (exit 78, one line at its place), the wide
one `(a{1,1000}){1,1000}` compiles small, both within seconds; time and
peak memory are printed.  Then the real `sp mcp` matches values under the
children's seccomp filters: a matching value reaches the HTTP target (the
executor matched it again), a catastrophic-backtracking value against
`(a+)+` is refused as invalid at the match limit and reaches nothing."""
import os
import resource
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, sanitized_build, Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

LIMIT_AS = 1 << 30
BUDGET_S = 60


def policy(tmp, pattern, base_url="http://127.0.0.1:9"):
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "pattern", "on_invalid": "reject"},
        "targets": {"api": {"type": "http", "base_url": base_url,
                            "allow_loopback": True}},
        "tools": [{"name": "get", "description": "Fetch one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 4096,
                                     "pattern": pattern}}}],
        "profiles": {"default": {"scopes": ["read"]}},
    })


# AddressSanitizer reserves terabytes of shadow address space at start,
# so a sanitizer build cannot run under an address-space limit at all:
# there the time bound and the measured peak RSS (checked below) stand
# for the limit, which the normal build applies.
UNDER = "" if sanitized_build() else " under 1 GB"


def limited():
    if not sanitized_build():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def timed_check(cfg):
    """sp check under the limit: (result, seconds, peak KiB).  The child
    rusage maximum is over every child so far: a check runs alone here,
    and the figure only grows, so it bounds this one from above."""
    t0 = time.monotonic()
    r = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       text=True, timeout=BUDGET_S * 2, preexec_fn=limited)
    secs = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return r, secs, peak


def phase_check(tmp):
    cfg = policy(tmp, "(((a{0,255}){0,255}){0,255})")
    r, secs, peak = timed_check(cfg)
    print("# nested pattern: sp check %.3f s, peak RSS %d KiB" % (secs, peak))
    with open(cfg) as f:
        text = f.read()
    col = text.index('"(((a{') + 1
    want = ("%s:1:%d: tools[0].params.id.pattern: pattern does not compile "
            "at offset 28: regular expression is too large" % (cfg, col))
    check("nested counted repetition: exit 78 within %d s%s" %
          (BUDGET_S, UNDER), r.returncode == 78 and secs < BUDGET_S,
          (r.returncode, secs, r.stderr))
    check("nested counted repetition: one line, at the pattern",
          r.stderr.splitlines() == [want], (want, r.stderr))
    check("nested counted repetition: peak memory far below the limit",
          peak < 256 * 1024, peak)

    cfg = policy(tmp, "(a{1,1000}){1,1000}")
    r, secs, peak = timed_check(cfg)
    print("# wide pattern: sp check %.3f s, peak RSS %d KiB" % (secs, peak))
    check("(a{1,1000}){1,1000}: compiles small, exit 0 within %d s" %
          BUDGET_S, r.returncode == 0 and secs < BUDGET_S,
          (r.returncode, secs, r.stderr))
    for pattern, what in (("(?<=a)b", "no lookbehind"),
                          ("(a)\\1", "backreferences"),
                          ("a++", "possessive"),
                          ("[[:alpha:]]+", "POSIX bracket classes")):
        r, secs, _ = timed_check(policy(tmp, pattern))
        check("%s: exit 78, refused (%s)" % (pattern, what),
              r.returncode == 78 and what in r.stderr, r.stderr)


def phase_match(tmp):
    target = Target(tmp)
    try:
        cfg = policy(tmp, "(a+)+", "http://127.0.0.1:%d" % target.port)
        s = Session(cfg)
        s.call(1, "get", {"id": "a" * 4000})
        ok = s.wait([1]).get(1)
        t0 = time.monotonic()
        s.call(2, "get", {"id": "a" * 4000 + "!"})
        s.call(3, "get", {"id": "a" * 30 + "\u00e9"})
        bad = s.wait([2, 3])
        secs = time.monotonic() - t0
        print("# catastrophic values refused in %.3f s" % secs)
        status = s.close()
        paths = [r["path"] for r in target.requests()]
    finally:
        target.stop()
    check("a matching 4000-character value reaches the target once "
          "(frontend and executor matched under their filters)",
          structured(ok).get("outcome") == "ok" and
          paths == ["/items/" + "a" * 4000], (ok, paths))
    for rid in (2, 3):
        a = bad.get(rid)
        text = "".join(c.get("text", "") for c in
                       (a[0].get("result", {}).get("content", []) if a
                        else []))
        check("catastrophic value %d: invalid" % rid,
              structured(a).get("outcome") == "invalid" and
              "id: could not be matched against the pattern within its "
              "limits" in text, a)
    check("catastrophic values: answered within %d s" % BUDGET_S,
          secs < BUDGET_S, secs)
    check("catastrophic values reached nothing", len(paths) == 1, paths)
    check("the session ends with 0", status == 0,
          s.stderr.decode("utf-8", "replace"))


def main():
    tmp = tmpdir()
    phase_check(tmp)
    phase_match(tmp)
    done()


main()

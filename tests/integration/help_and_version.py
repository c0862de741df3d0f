#!/usr/bin/env python3
"""sp help, sp COMMAND --help and sp --version (cli/sp.c): usage on
stdout and exit 0 for every command in cli/sp.c's table, nothing run;
an unknown command 64 with stdout empty; the version is configure.ac's,
the features are the build's; a failed write to stdout is 74."""
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.run import sanitized_build, sp_env  # noqa: E402
from sptest.tap import check, done  # noqa: E402

SRC = os.environ["SP_SRCDIR"]
BUILD = os.environ["SP_BUILDDIR"]
SP = os.environ.get("SP_BIN", "./sp")


def read(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as f:
        return f.read()


def run(args, binary=SP, stdout=subprocess.PIPE, cwd=None):
    p = subprocess.run([binary] + args, stdin=subprocess.DEVNULL,
                       stdout=stdout, stderr=subprocess.PIPE, timeout=60,
                       env=sp_env(), cwd=cwd)
    out = p.stdout.decode("utf-8", "replace") if p.stdout else ""
    return p.returncode, out, p.stderr.decode("utf-8", "replace")


def table():
    """cli/sp.c's commands a person may name: [(name, usage)]."""
    src = read(SRC, "cli", "sp.c")
    body = re.search(r"sp_commands\[\] = \{(.*?)\n\};", src, re.S)
    rows = re.findall(r'\{ "([^"]+)", \w+,\s+(?:"([^"]*)"|NULL)[, ]',
                      body.group(1) if body else "")
    return [(n, u) for n, u in rows if u]


def test_list(rows):
    code, out, err = run(["help"])
    listed = [l.split("sp ", 1)[1] for l in out.splitlines()[1:]]
    check("sp help: exit 0, the table's %d usages on stdout, stderr empty"
          % len(rows), code == 0 and err == "" and
          out.startswith("usage: sp COMMAND [ARGS]\n") and
          listed == [u for _, u in rows] and len(rows) >= 8,
          (code, out, err, rows))
    code2, out2, err2 = run(["--help"])
    check("sp --help is sp help", (code2, out2, err2) == (code, out, err),
          (code2, out2, err2))
    return out


def test_each(rows, tmp):
    """Each command's --help, in first place or among other words, and
    sp help COMMAND: the same usage, exit 0, and nothing run (no file
    made, no session on stdout, whatever the other words say)."""
    for name, usage in rows:
        want = "usage: sp %s\n" % usage
        for args in ([name, "--help"], ["help", name],
                     [name, "--config", "/nonexistent", "--help", "x"]):
            code, out, err = run(args, cwd=tmp)
            check("sp %s: exit 0, its usage on stdout" % " ".join(args),
                  code == 0 and out.startswith(want) and err == "" and
                  len(out.splitlines()) == 3, (code, out, err))
    check("no --help run a command (nothing written where they ran)",
          os.listdir(tmp) == [], os.listdir(tmp))


def test_refused(tmp):
    for args in (["help", "nosuch"], ["help", ".frontend"],
                 ["help", ".executor"], ["help", "check", "mcp"],
                 ["help", "$(touch pwned)"], ["help", "-h\nx"],
                 ["help", "h\u00e9lp"], ["help", ""], ["--version", "x"],
                 ["-h"], ["%2e%2e"], ["--versio"],
                 # once roles of sp, now programs of their own
                 [".frontend", "default"], [".executor", "info", ""]):
        code, out, err = run(args, cwd=tmp)
        check("sp %r: 64, stdout empty, the usage on stderr" % args,
              code == 64 and out == "" and "usage: sp COMMAND" in err,
              (code, out, err))
    check("no refused word was run (no file made)", os.listdir(tmp) == [],
          os.listdir(tmp))


def configured_version():
    m = re.search(r"^AC_INIT\(\[sallyport\], \[([^]]+)\]",
                  read(SRC, "configure.ac"), re.M)
    return m.group(1) if m else None


def build_sanitizers():
    """The -fsanitize= values of the build's CFLAGS, as configure saw
    them, in order: 'none' when there are none."""
    m = re.search(r"^CFLAGS = (.*)$", read(BUILD, "Makefile"), re.M)
    found = re.findall(r"(?:^|\s)-fsanitize=(\S+)", m.group(1) if m else "")
    return ",".join(found) or "none"


def test_version():
    version = configured_version()
    code, out, err = run(["--version"])
    lines = out.splitlines()
    check("sp --version: exit 0, 'sp (sallyport) %s' from configure.ac"
          % version, code == 0 and err == "" and version and
          lines[:1] == ["sp (sallyport) %s" % version], (code, out, err))
    feats = dict(re.findall(r"(\S+)=(\S+)", lines[1] if len(lines) > 1
                            else ""))
    want = build_sanitizers()
    with open(os.path.join(BUILD, "config.h")) as f:
        config_h = f.read()
    journald = "yes" if "#define SP_HAVE_LIBSYSTEMD 1" in config_h else "no"
    postgres = "yes" if "#define SP_HAVE_LIBPQ 1" in config_h else "no"
    check("features: sanitizers=%s as in the build's CFLAGS, test-hooks=no,"
          " journald=%s, postgres=%s as configured"
          % (want, journald, postgres),
          len(lines) == 2 and
          lines[1].startswith("features: ") and feats == {
              "sanitizers": want, "test-hooks": "no", "journald": journald,
              "postgres": postgres},
          out)
    check("sanitizers name address exactly when sp is an ASan build",
          ("address" in feats.get("sanitizers", "").split(",")) ==
          sanitized_build(), (feats, sanitized_build()))
    code, out, err = run(["--version"], binary=os.path.join(BUILD, "tests",
                                                            "sp-test"))
    check("tests/sp-test --version says test-hooks=yes",
          code == 0 and "test-hooks=yes" in out, (code, out, err))


def test_write_fails():
    """stdout that cannot be written (/dev/full): 74, a line on stderr."""
    with open("/dev/full", "wb") as full:
        for args in (["--version"], ["help"], ["check", "--help"]):
            code, _, err = run(args, stdout=full)
            check("sp %s > /dev/full: 74, a reason on stderr" %
                  " ".join(args), code == 74 and
                  "cannot write to standard output" in err, (code, err))


rows = table()
with tempfile.TemporaryDirectory() as tmp:
    test_list(rows)
    test_each(rows, tmp)
    test_refused(tmp)
test_version()
test_write_fails()
done()

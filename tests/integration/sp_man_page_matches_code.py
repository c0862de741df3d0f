#!/usr/bin/env python3
"""docs/sp.1 matches the code: every command in cli/sp.c's table that
has a usage has its own section headed by exactly that usage; every
option those usages name is described; every exit status defined in
common/exit.h is listed; the config lookup names SP_CONFIG and the
system path of policy/source.h; and `man` renders the page without a
warning."""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import sp_env  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402

SRC = os.environ["SP_SRCDIR"]
MAN = os.path.join(SRC, "docs", "sp.1")


def read(*parts):
    with open(os.path.join(SRC, *parts), encoding="utf-8") as f:
        return f.read()


def plain(roff):
    """The man source with roff's escaped minus as a plain one."""
    return roff.replace("\\-", "-")


def section(man, name):
    m = re.search(r"^\.SH %s\n(.*?)(?=^\.SH |\Z)" % re.escape(name), man,
                  re.S | re.M)
    return m.group(1) if m else ""


def usages():
    table = re.search(r"sp_commands\[\] = \{(.*?)\n\};", read("cli",
                                                             "sp.c"), re.S)
    rows = re.findall(r'\{ "([^"]+)", \w+,\s+(?:"([^"]*)"|NULL)[, ]',
                      table.group(1) if table else "")
    return [(name, usage) for name, usage in rows if usage]


def test_commands(man):
    rows = usages()
    check("cli/sp.c's table has commands with a usage (%d)" % len(rows),
          len(rows) >= 5, rows)
    headers = re.findall(r"^\.SS (.*)$", plain(man), re.M)
    for name, usage in rows:
        check("sp %s has a section headed by its usage" % name,
              "sp " + usage in headers, (usage, headers))
    options = set()
    for _, usage in rows:
        options.update(re.findall(r"--[a-z-]+", usage))
    described = set(re.findall(r"^\.BI (--[a-z-]+)",
                               plain(section(man, "OPTIONS")), re.M))
    check("every option in a usage is described under OPTIONS",
          options and options <= described, (options, described))
    synopsis = plain(section(man, "SYNOPSIS"))
    check("every command is in the SYNOPSIS",
          all(re.search(r"^\.B sp %s\b" % re.escape(n), synopsis, re.M)
              for n, _ in rows), synopsis)


def test_exit_statuses(man):
    codes = set(re.findall(r"#define SP_EXIT_\w+ (\d+)",
                           read("common", "exit.h")))
    listed = set(re.findall(r"^\.TP\n\.B (\d+)$", section(man, "EXIT STATUS"),
                            re.M))
    check("every exit status in common/exit.h is listed (%s)" %
          " ".join(sorted(codes, key=int)),
          len(codes) >= 8 and codes <= listed, (codes, listed))


def test_config(man):
    system = re.search(r'#define POLICY_SYSTEM_PATH "([^"]+)"',
                       read("policy", "source.h")).group(1)
    config = section(man, "CONFIGURATION")
    check("the lookup order: --config, then SP_CONFIG, then %s" % system,
          0 <= plain(config).find("--config") < config.find("SP_CONFIG") <
          config.find(system), config)
    check("SP_CONFIG is under ENVIRONMENT and %s under FILES" % system,
          "SP_CONFIG" in section(man, "ENVIRONMENT") and
          system in section(man, "FILES"))


def test_render():
    if shutil.which("man") is None:
        skip("the pages render with man",
             "man not installed (package man-db)")
        return
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MANPAGER="cat",
               PAGER="cat")
    p = subprocess.run(["man", "--warnings", "-l", MAN], capture_output=True,
                       env=env, timeout=30)
    out = p.stdout.decode("utf-8", "replace")
    check("man -l renders sp.1 without a warning",
          p.returncode == 0 and p.stderr == b"" and "sp connect" in out,
          (p.returncode, p.stderr))
    wide = [l for l in out.splitlines() if len(l) > 80]
    check("no rendered line is wider than 80 columns", not wide, wide)


man = read("docs", "sp.1")
test_commands(man)
test_exit_statuses(man)
test_config(man)
test_render()
def exit_entries(man):
    """EXIT STATUS as {status: its paragraph}."""
    return dict(re.findall(r"^\.TP\n\.B (\d+)\n(.*?)(?=^\.TP\n|\Z)",
                           section(man, "EXIT STATUS"), re.M | re.S))


def command_section(man, name):
    m = re.search(r"^\.SS sp %s\b.*?\n(.*?)(?=^\.S[SH] |\Z)" %
                  re.escape(name), plain(man), re.M | re.S)
    return m.group(1) if m else ""


def run_sp(args, stdin=subprocess.DEVNULL, timeout=30):
    """sp with sptest.run's environment: under ASan, no leak checker,
    whose ptrace the sandboxed children may not use."""
    p = subprocess.run([os.environ.get("SP_BIN", "./sp")] + args,
                       stdin=stdin, capture_output=True, timeout=timeout,
                       env=sp_env())
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def provoked(tmp):
    """(command, argv, stdin, status) for each status we can cause."""
    import json
    ok = os.path.join(tmp, "ok.json")
    with open(ok, "w") as f:
        json.dump(run_as_root({"sallyport": 1, "profiles": {
            "a": {"scopes": []}, "b": {"scopes": []}}}), f)
    unaudited = os.path.join(tmp, "unaudited.json")
    with open(unaudited, "w") as f:
        json.dump(run_as_root({"sallyport": 1, "audit": {"path": os.path.join(
            tmp, "no such dir", "audit.jsonl")}}), f)
    # As root, sp mcp needs a server.run_as of the executor's own (sp demo
    # names daemon for its own policy, sp.1).
    shared_uid = os.path.join(tmp, "shared-uid.json")
    with open(shared_uid, "w") as f:
        json.dump({"sallyport": 1, "server": {"run_as": "nobody"}}, f)
    root = os.geteuid() == 0
    broken = os.path.join(tmp, "broken.jsonl")
    with open(broken, "w") as f:
        f.write('{"seq": 1, "kind": "session-start"}\n')
    missing = os.path.join(tmp, "missing \"$(x)\"")
    sock = os.path.join(tmp, "no.sock")
    return [
        ("check", ["check", "--config", ok], None, 0),
        ("check", ["check", "--config", missing], None, 78),
        ("check", ["check", "--frob"], None, 64),
        ("catalog", ["catalog", "--config", ok, "--profile", "a"], None, 0),
        ("catalog", ["catalog", "--config", ok], None, 64),
        ("catalog", ["catalog", "--config", ok, "--profile", "zz"], None,
         64),
        ("catalog", ["catalog", "--config", missing], None, 78),
        ("mcp", ["mcp", "--config", ok], None, 0),
        ("mcp", ["mcp", "--config", missing], None, 78),
        ("mcp", ["mcp", "--config", ok, "--profile", "zz"], None, 64),
        ("mcp", ["mcp", "--config", unaudited], None, 78),
        ("mcp", ["mcp", "--frob"], None, 64),
        ("mcp", ["mcp", "--config", shared_uid], None, 78 if root else 0),
        ("audit", ["audit", "verify", broken], None, 1),
        ("audit", ["audit", "verify", missing], None, 66),
        ("audit", ["audit", "verify", "--key", missing, broken], None, 66),
        ("audit", ["audit", "frob", broken], None, 64),
        ("connect", ["connect", sock], None, 69),
        ("connect", ["connect"], None, 64),
        ("connect", ["connect", sock], "closed", 74),
        ("demo", ["demo", "extra"], None, 64),
        ("demo", ["demo"], None, 0),
        ("help", ["help"], None, 0),
        ("help", ["help", "check"], None, 0),
        ("help", ["help", "nosuch"], None, 64),
        ("--version", ["--version"], None, 0),
        ("--version", ["--version", "x"], None, 64),
    ]


def test_statuses_provoked(man):
    """Each status the real sp returns is the one its section documents
    and is under EXIT STATUS; failures say so on stderr, never stdout."""
    import tempfile
    import shlex
    entries = exit_entries(man)
    with tempfile.TemporaryDirectory() as tmp:
        for name, args, stdin, want in provoked(tmp):
            if stdin == "closed":
                p = subprocess.run(
                    "exec %s <&-" % " ".join(shlex.quote(a) for a in
                                             [os.environ.get("SP_BIN",
                                                             "./sp")] + args),
                    shell=True, capture_output=True, timeout=30,
                    env=sp_env())
                code, out = p.returncode, p.stdout
                err = p.stderr.decode("utf-8", "replace")
            else:
                code, out, err = run_sp(args)
            text = command_section(man, name)
            check("sp %s -> %d, as expected" % (" ".join(args[:2]), want),
                  code == want, (code, err))
            check("status %d of sp %s is in its section and under EXIT "
                  "STATUS" % (code, name),
                  str(code) in entries and
                  (code == 0 or re.search(r"\b%d\b" % code, text) or
                   ("sp %s" % name) in plain(entries[str(code)])),
                  (code, sorted(entries)))
            if name == "audit" and code == 1:
                check("sp audit 1: the verdict on stdout, one line",
                      out.startswith(b"broken: ") and out.count(b"\n") == 1,
                      (out, err))
            elif code != 0 and name not in ("catalog", "demo"):
                check("sp %s %d: stdout empty, a reason on stderr" %
                      (name, code), out == b"" and err.strip() != "",
                      (out, err))


def test_connect_names_the_path(man):
    """sp connect: one line naming the path and the reason, status 69."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "gone\u00e9.sock")
        code, out, err = run_sp(["connect", sock])
    check("sp connect to a missing socket: 69, one line naming the path",
          code == 69 and len(err.splitlines()) == 1 and sock in err and
          "No such file" in err, (code, err))
    check("sp.1 says 69 names the path and the reason",
          "naming the path" in command_section(man, "connect"))


def test_audit_70_documented(man):
    """An audit log that cannot be opened ends sp mcp with 70: said so."""
    entry = plain(exit_entries(man).get("70", ""))
    check("EXIT STATUS 70 names the audit log that cannot be opened",
          "audit log" in entry and "cannot be opened" in entry, entry)


test_statuses_provoked(man)
test_connect_names_the_path(man)
test_audit_70_documented(man)
done()

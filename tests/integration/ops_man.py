#!/usr/bin/env python3
"""docs/sp.1 matches the code: every command in broker/sp.c's table that
has a usage has its own section headed by exactly that usage; every
option those usages name is described; every exit status defined in
broker/commands.h is listed; the config lookup names SP_CONFIG and the
system path of policy/source.h; and `man` renders the page without a
warning."""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_lib import check, done  # noqa

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
    table = re.search(r"sp_commands\[\] = \{(.*?)\n\};", read("broker",
                                                             "sp.c"), re.S)
    rows = re.findall(r'\{ "([^"]+)", \w+, (?:"([^"]*)"|NULL) \}',
                      table.group(1) if table else "")
    return [(name, usage) for name, usage in rows if usage]


def test_commands(man):
    rows = usages()
    check("broker/sp.c's table has commands with a usage (%d)" % len(rows),
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
                           read("broker", "commands.h")))
    listed = set(re.findall(r"^\.TP\n\.B (\d+)$", section(man, "EXIT STATUS"),
                            re.M))
    check("every exit status in broker/commands.h is listed (%s)" %
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
        print("# skip: man not installed (package man-db)")
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
done()

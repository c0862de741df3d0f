#!/usr/bin/env python3
"""docs/sp-policy.5 describes every member name the loader accepts: each
name in the loader's key tables (policy/load*.c) appears in bold in the
man page, and so does every credential, target and param type."""
import glob
import os
import re
import sys

SRC = os.environ["SP_SRCDIR"]

with open(os.path.join(SRC, "docs", "sp-policy.5"), encoding="utf-8") as f:
    man = f.read()
bold = set()
for line in man.splitlines():
    if line.startswith((".B ", ".BR ", ".TP")) or line.startswith(".IB"):
        bold.update(re.findall(r"[A-Za-z_][A-Za-z0-9_-]*", line))
    bold.update(re.findall(r"\\fB([A-Za-z_][A-Za-z0-9_-]*)", line))

names = set()
for path in glob.glob(os.path.join(SRC, "policy", "load*.c")):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for table in re.findall(r"static const char \*const \w+\[\](?:\[\d*\])? = "
                            r"\{(.*?)\};", text, re.S):
        names.update(re.findall(r'"([A-Za-z_][A-Za-z0-9_-]*)"', table))

count = 0
lower = {b.lower() for b in bold}
missing = sorted(n for n in names if n not in bold and n.lower() not in lower)
count += 1
print("%s %d - the loader has key tables (%d names)" %
      ("ok" if len(names) > 40 else "not ok", count, len(names)))
count += 1
print("%s %d - every accepted name is in sp-policy.5" %
      ("ok" if not missing else "not ok", count))
for n in missing:
    print("# missing from the man page: " + n)
print("1..%d" % count)
sys.exit(0 if len(names) > 40 and not missing else 1)

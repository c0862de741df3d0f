#!/usr/bin/env python3
"""The folders in layers (Makefile.am, docs/design.md section 1): each
product file includes only headers of its own folder and of the folders
below it, so no child ever compiles a line of the parent's, and the
commands a person types stay above the session they start.

    cli -> broker -> audit, state -> frontend, executor -> child ->
    policy -> common

The frontend and the executor never include each other, nor audit and
state each other.  Every folder's headers are read from the source tree;
a folder not in the table is a failure, so a new one must be placed."""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.run import SRCDIR  # noqa: E402
from sptest.tap import check, done  # noqa: E402

# What each folder may include besides itself.
MAY = {
    "common": set(),
    "policy": {"common"},
    "child": {"policy", "common"},
    "frontend": {"child", "policy", "common"},
    "executor": {"child", "policy", "common"},
    "state": {"child", "policy", "common"},
    "audit": {"child", "policy", "common"},
    "broker": {"audit", "state", "child", "policy", "common"},
    "cli": {"broker", "audit", "state", "child", "policy", "common"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/[^"]+"', re.M)


def includes(folder):
    """(file, included folder) for every quoted include with a folder."""
    out = []
    path = os.path.join(SRCDIR, folder)
    for name in sorted(os.listdir(path)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(path, name), encoding="utf-8") as f:
            out += [(folder + "/" + name, m) for m in INCLUDE.findall(f.read())]
    return out


def product_folders():
    """The top folders holding C sources, but tests/ and generated ones."""
    return sorted(d for d in os.listdir(SRCDIR)
                  if os.path.isdir(os.path.join(SRCDIR, d)) and
                  d not in ("tests", "build", "autom4te.cache") and
                  not d.startswith(".") and
                  any(n.endswith(".c") for n in
                      os.listdir(os.path.join(SRCDIR, d))))


found = product_folders()
check("every folder with C sources has its place in the layers",
      set(found) <= set(MAY), sorted(set(found) - set(MAY)))
check("the table names no folder the tree lacks",
      set(MAY) <= set(found), sorted(set(MAY) - set(found)))
for folder in sorted(MAY):
    if folder not in found:
        continue
    wrong = [(f, to) for f, to in includes(folder)
             if to != folder and to not in MAY[folder]]
    check("%s/ includes only %s" % (folder, ", ".join(
        sorted(MAY[folder])) or "itself"), not wrong, wrong)
done()

#!/usr/bin/env python3
"""sp catalog as an operator uses it, on the shipped example policies.

Proves: every profile's tools/list fits 14,000 characters and is what the
size line says; the fingerprint does not move when every JSON object of the
policy file is written in reverse key order, and moves when one description
changes by one character; a wrong catalog_sha256 pin is reported; unknown
profiles are refused on stderr with the list of profiles, stdout empty.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "integration"))
from sptest.tap import check as tap_check, done  # noqa: E402

SP = os.environ["SP_BIN"]
SRC = os.environ["SP_SRCDIR"]
LIMIT = 14000


def check(ok, what):
    tap_check(what, ok)


def run(*args):
    return subprocess.run([SP, "catalog", *args], capture_output=True,
                          text=True, timeout=20)


def catalog(path, profile=None):
    """(tools/list object, fingerprint, visible tools, size) or None."""
    args = ["--config", path] + (["--profile", profile] if profile else [])
    r = run(*args)
    if r.returncode != 0:
        print("# %s: exit %d: %s" % (path, r.returncode, r.stderr.strip()))
        return None
    lines = r.stdout.split("\n")
    fp = re.fullmatch(r"catalog_sha256: ([0-9a-f]{64})", lines[1])
    size = re.fullmatch(r"profile \S+: (\d+) of \d+ tools, (\d+) characters",
                        lines[2])
    if fp is None or size is None or lines[3:] != [""]:
        print("# unexpected output: %r" % r.stdout[-300:])
        return None
    if len(lines[0]) != int(size.group(2)):
        print("# size line says %s, JSON has %d" % (size.group(2),
                                                   len(lines[0])))
        return None
    return json.loads(lines[0]), fp.group(1), int(size.group(1)), len(lines[0])


def reversed_keys(node):
    if isinstance(node, dict):
        return {k: reversed_keys(node[k]) for k in reversed(list(node))}
    if isinstance(node, list):
        return [reversed_keys(x) for x in node]
    return node


def write(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
    return path


examples = sorted(glob.glob(os.path.join(SRC, "contrib/examples/*.json")))
check(len(examples) >= 2, "example policies found: %d" % len(examples))
for path in examples:
    name = os.path.basename(path)
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    fingerprints = set()
    for profile in doc.get("profiles", {}):
        got = catalog(path, profile)
        check(got is not None, "%s --profile %s prints a catalog"
              % (name, profile))
        if got is None:
            continue
        tools, fp, visible, size = got
        fingerprints.add(fp)
        check(size <= LIMIT, "%s/%s tools/list is %d <= %d characters"
              % (name, profile, size, LIMIT))
        check(len(tools["tools"]) == visible, "%s/%s lists %d tools"
              % (name, profile, visible))
        check(all(t["inputSchema"]["additionalProperties"] is False
                  for t in tools["tools"]),
              "%s/%s schemas refuse unknown properties" % (name, profile))
    check(len(fingerprints) == 1,
          "%s: one fingerprint for every profile" % name)

with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(SRC, "contrib/examples/ssh-ops.json")
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    for path in examples:
        with open(path, encoding="utf-8") as f:
            example = json.load(f)
        name = os.path.basename(path)
        base = catalog(path)
        rev = catalog(write(tmp, "reversed-" + name, reversed_keys(example)))
        check(base is not None and rev is not None and base[1] == rev[1],
              "%s: reversing every object's key order keeps the "
              "fingerprint" % name)
        check(base is not None and rev is not None and
              [t["name"] for t in base[0]["tools"]] ==
              [t["name"] for t in rev[0]["tools"]],
              "%s: and keeps the tool order" % name)
    base = catalog(src)

    changed = json.loads(json.dumps(doc))
    changed["tools"][0]["description"] += "\u00e9"
    moved = catalog(write(tmp, "changed.json", changed))
    check(moved is not None and base is not None and moved[1] != base[1],
          "one more character in a description changes the fingerprint")
    check(moved is not None and base is not None and moved[3] == base[3] + 1,
          "and the size grows by one character, not by its two bytes")

    pinned = json.loads(json.dumps(doc))
    pinned["catalog_sha256"] = base[1] if base else "0" * 64
    r = run("--config", write(tmp, "pinned.json", pinned))
    check(r.returncode == 0 and "warning" not in r.stderr,
          "a matching pin is quiet: %r" % r.stderr)
    changed["catalog_sha256"] = base[1] if base else "0" * 64
    r = run("--config", write(tmp, "stale.json", changed))
    check(r.returncode == 0 and "catalog_sha256 is %s but" % pinned[
        "catalog_sha256"] in r.stderr and "refuse to start" in r.stderr,
          "a stale pin is named on stderr: %r" % r.stderr)

    r = run("--config", src, "--profile", "nope\"$(id)")
    check(r.returncode == 64 and r.stdout == "" and
          "profiles in this policy: default oncall" in r.stderr,
          "an unknown profile is refused with the list: %r" % r.stderr)
    noprof = json.loads(json.dumps(doc))
    noprof["profiles"] = {"a": {"scopes": []}, "b": {"scopes": ["read"]}}
    r = run("--config", write(tmp, "noprof.json", noprof))
    check(r.returncode == 64 and "name one with --profile" in r.stderr,
          "without a default profile one must be named: %r" % r.stderr)
    r = run("--config", os.path.join(tmp, "missing.json"))
    check(r.returncode == 78 and r.stdout == "",
          "a missing policy file is exit 78: %r" % r.stderr)
    r = run("--bogus")
    check(r.returncode == 64 and "usage: sp catalog" in r.stderr,
          "a bad option prints the usage")

done()

#!/usr/bin/env python3
"""docs/sp-policy.5 describes every member name the loader accepts: each
name in the loader's key tables (policy/load*.c) appears in bold in the
man page, and so does every credential, target and param type."""
import glob
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import run_as_root  # noqa: E402
from sptest.tap import check, done  # noqa: E402

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

lower = {b.lower() for b in bold}
missing = sorted(n for n in names if n not in bold and n.lower() not in lower)
check("the loader has key tables (%d names)" % len(names), len(names) > 40)
check("every accepted name is in sp-policy.5", not missing,
      "\n".join("missing from the man page: " + n for n in missing))
# Every numeric range sp-policy.5 documents is the one `sp check` applies:
# both ends pass, one past each end is refused naming the member; and each
# limit's documented default is the loader's.
import copy  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

SP = os.environ.get("SP_BIN", "./sp")


def documented(pattern):
    m = re.search(pattern, man, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def base(key_file):
    return {
        "sallyport": 1,
        "credentials": {"k": {"type": "ssh-key", "private_key": key_file}},
        "targets": {
            "t": {"type": "http", "base_url": "http://127.0.0.1:9"},
            "s": {"type": "ssh", "host": "web1.example.com", "user": "ops",
                  "credential": "k", "host_key_sha256": "SHA256:" +
                  "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0"}},
        "tools": [
            {"name": "x", "description": "d", "target": "t", "scope": "r",
             "http": {"method": "GET", "path": "/a/{p}"},
             "params": {"p": {"type": "string"}}},
            {"name": "y", "description": "d", "target": "s", "scope": "r",
             "ssh": {"argv": ["echo", "{n}"]},
             "params": {"n": {"type": "decimal", "scale": 2}}}],
        "profiles": {"default": {"scopes": ["r"]}}}


def set_limit(name):
    return lambda p, v: p.setdefault("limits", {}).__setitem__(name, v)


def set_argv(p, v):
    p["tools"][1]["ssh"]["argv"] = (["echo", "{n}"] + ["it's $(x)"] *
                                    (v - 2))[:v] if v > 0 else []
    if v < 2:
        p["tools"][1]["params"] = {}


def set_min_length(p, v):
    p["tools"][0]["params"]["p"].update(minLength=v, maxLength=65536)


RANGES = [
    # (name, pattern in sp-policy.5 giving lo, hi, setter, path refused)
    ("max_frame_bytes", r"^\.B max_frame_bytes\n(\d+) to (\d+),",
     set_limit("max_frame_bytes"), "limits.max_frame_bytes"),
    ("max_inflight", r"^\.B max_inflight\n(\d+) to (\d+),",
     set_limit("max_inflight"), "limits.max_inflight"),
    ("calls_per_session", r"^\.B calls_per_session\n(\d+) to (\d+),",
     set_limit("calls_per_session"), "limits.calls_per_session"),
    ("result_max_chars", r"^\.B result_max_chars\n(\d+) to (\d+),",
     set_limit("result_max_chars"), "limits.result_max_chars"),
    ("call_timeout_ms", r"^\.B call_timeout_ms\n(\d+) to (\d+),",
     set_limit("call_timeout_ms"), "limits.call_timeout_ms"),
    ("target timeout_ms", r"^\.B timeout_ms\n\((\d+) to (\d+)\)",
     lambda p, v: p["targets"]["t"].__setitem__("timeout_ms", v),
     "targets.t.timeout_ms"),
    ("tool timeout_ms", r"^\.B timeout_ms\n(\d+) to (\d+);",
     lambda p, v: p["tools"][0].__setitem__("timeout_ms", v),
     "tools[0].timeout_ms"),
    ("ssh port", r"^\.B port\n(\d+) to (\d+),",
     lambda p, v: p["targets"]["s"].__setitem__("port", v),
     "targets.s.port"),
    ("decimal scale", r"^\.B scale\nRequired; (\d+) to (\d+)\.",
     lambda p, v: p["tools"][1]["params"]["n"].__setitem__("scale", v),
     "tools[1].params.n.scale"),
    ("ssh argv length", r"an array of (\d+) to (\d+) template strings",
     set_argv, "tools[1].ssh.argv"),
    ("minLength", r"^\.B minLength\n(\d+) to (\d+),", set_min_length,
     "tools[0].params.p.minLength"),
    ("maxLength", r"^\.B maxLength\n(\d+) to (\d+),",
     lambda p, v: p["tools"][0]["params"]["p"].__setitem__("maxLength", v),
     "tools[0].params.p.maxLength"),
    ("match uid", r"arrays of ids \((\d+) to (\d+)\)",
     lambda p, v: p["profiles"]["default"].__setitem__("match",
                                                       {"uid": [v]}),
     "profiles.default.match.uid"),
]


def sp_check(tmp, policy):
    path = os.path.join(tmp, "policy.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(run_as_root(policy), f, ensure_ascii=False)
    p = subprocess.run([SP, "check", "--config", path], capture_output=True,
                       timeout=30)
    return p.returncode, p.stderr.decode("utf-8", "replace")


with tempfile.TemporaryDirectory() as tmp:
    key = os.path.join(tmp, "id_key")
    with open(key, "w") as f:
        f.write("not read by sp check\n")
    os.chmod(key, 0o600)
    status, err = sp_check(tmp, base(key))
    check("the probe policy itself is valid", status == 0, err)
    for name, pattern, setter, where in RANGES:
        rng = documented(pattern)
        check("sp-policy.5 gives a range for %s" % name, rng is not None,
              pattern)
        if rng is None:
            continue
        lo, hi = rng
        for v, ok in ((lo, True), (hi, True), (lo - 1, False),
                      (hi + 1, False)):
            if v < 0 and not ok:
                continue
            p = copy.deepcopy(base(key))
            setter(p, v)
            status, err = sp_check(tmp, p)
            check("%s %d %s, as sp-policy.5 says (%d to %d)" %
                  (name, v, "accepted" if ok else "refused", lo, hi),
                  (status == 0) if ok else (status == 78 and where in err),
                  (status, err))
    desc = documented(r"^Required, not blank, at most (\d+) characters\.")
    check("sp-policy.5 gives the description limit", desc is not None)
    for n, ok in ((desc[0], True), (desc[0] + 1, False)) if desc else ():
        p = copy.deepcopy(base(key))
        p["tools"][0]["description"] = "\u00e9" * n  # characters, not bytes
        status, err = sp_check(tmp, p)
        check("a description of %d characters (%d bytes) %s" %
              (n, 2 * n, "accepted" if ok else "refused"),
              (status == 0) if ok else (status == 78 and
                                        "tools[0].description" in err),
              (status, err))

with open(os.path.join(SRC, "policy", "load.c"), encoding="utf-8") as f:
    loader = f.read()
for limit in ("max_frame_bytes", "max_inflight", "calls_per_session",
              "result_max_chars", "call_timeout_ms"):
    code = re.search(r"p->limits\.%s = (\d+);" % limit, loader)
    doc = documented(r"^\.B %s\n\d+ to \d+, default (\d+)" % limit)
    check("the default of limits.%s is the loader's (%s)" %
          (limit, code.group(1) if code else "?"),
          code is not None and doc is not None and
          int(code.group(1)) == doc[0], (code and code.group(1), doc))

done()

#!/usr/bin/env python3
"""Rotation while no session runs (docs/sp-audit.5, ROTATION), with short
sessions of the real `sp mcp` and the shipped logrotate snippet run by the
real logrotate (a rename when logrotate is absent, said as a counted
skip): the session that starts after the rotation finds no log, and its
first record links to the newest rotated file (audit.jsonl.1) with
rotated_from, seq and prev; the files verify oldest first and never in
the wrong order, which is named.  Files that nothing links (rotated under
another name, as dateext does) are refused as one chain in either order,
and each still verifies on its own."""
import json
import hashlib
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402
from sptest.mcp import INITIALIZE, call  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP, finish, sanitized_build, start, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402

SRC = os.environ["SP_SRCDIR"]
BUDGET = 120
# Argument values with quotes, a substitution, an encoded dot-dot, a
# leading dash and text outside ASCII.
IDS = ['-x"y', "$(id) %2e%2e", "\u00e9\u20ac\U0001f511"]


def logrotate_binary():
    return shutil.which("logrotate") or (
        os.path.exists("/usr/sbin/logrotate") and "/usr/sbin/logrotate")


def session(config, calls):
    """One short session: initialize, calls get_item calls, input ends."""
    data = INITIALIZE + b"".join(
        call(i + 1, "get_item", {"id": IDS[i % len(IDS)]})
        for i in range(calls))
    status, out, err = finish(start(config), data, BUDGET)
    return (status == 0 or (sanitized_build() and status is not None)), err


class Rotator:
    """The shipped snippet, pointed at the test's directory, run with
    logrotate -f; or, without logrotate, what it does to the newest file
    (rename to .1, nothing at the path)."""

    def __init__(self, tmp, logs):
        self.logs = logs
        self.binary = logrotate_binary()
        with open(os.path.join(SRC, "contrib/logrotate/sallyport"),
                  encoding="utf-8") as f:
            snippet = f.read()
        self.conf = os.path.join(tmp, "logrotate.conf")
        with open(self.conf, "w", encoding="utf-8") as f:
            f.write(snippet.replace("/var/log/sallyport/", logs + "/"))
        self.state = os.path.join(tmp, "state")

    def rotate(self):
        log = os.path.join(self.logs, "audit.jsonl")
        if self.binary:
            p = subprocess.run([self.binary, "-f", "-s", self.state,
                                self.conf], capture_output=True, text=True,
                               timeout=BUDGET)
            return p.returncode == 0 and not os.path.exists(log), p.stderr
        os.rename(log, log + ".1")
        return True, ""


def linked(new, old):
    """new's first record links to old's last: rotated_from, seq, prev."""
    last, first = old[-1], new[0]
    with open(old.path, "rb") as f:
        line = f.read().split(b"\n")[-2]
    return (first.get("rotated_from") == {"seq": last["seq"],
                                         "hash": last["hash"]} and
            first["seq"] == last["seq"] + 1 and
            first["prev"] == hashlib.sha256(line).hexdigest())


class Records(list):
    def __init__(self, path):
        super().__init__(read_log(path)[0])
        self.path = path


def rotated_between_sessions(tmp):
    logs = os.path.join(tmp, "logs")
    os.mkdir(logs, 0o700)
    log = os.path.join(logs, "audit.jsonl")
    config = shared_target_policy(logs)
    rot = Rotator(tmp, logs)
    if not rot.binary:
        skip("the shipped snippet run by logrotate",
             "logrotate not installed: a rename stands for it")
    ok, err = session(config, 2)
    check("a first session writes the log", ok and os.path.exists(log), err)
    ok, err = rot.rotate()
    check("the log is rotated while no session runs (nothing at the path)",
          ok, err)
    ok, err = session(config, 3)
    old, new = Records(log + ".1"), Records(log)
    check("the next session starts a new log, linked to audit.jsonl.1",
          ok and old and new and linked(new, old) and
          new[0]["session"] != old[-1]["session"],
          (err, new[:1], old[-1:]))
    st, out = verify([log + ".1", log])
    check("oldest first: one chain (exit 0)", st == 0 and "ok: 2 files" in
          out and "last seq %d" % new[-1]["seq"] in out, out)
    st, out = verify([log, log + ".1"])
    check("the wrong order: exit 1, the misplaced file named, and why",
          st == 1 and ("broken: %s.1" % log) in out and
          "out of order" in out, out)

    # A second rotation: the snippet compresses the older file
    # (delaycompress), the newest stays readable as .1 and is linked to.
    ok, err = rot.rotate()
    check("a second rotation", ok, err)
    ok, err = session(config, 1)
    prev, last = Records(log + ".1"), Records(log)
    check("the session after it links to the newest rotated file",
          ok and prev == new and linked(last, prev), (err, last[:1]))
    st, out = verify([log + ".1", log])
    check("... and the two verify as one chain", st == 0, out)


def unlinked_files(tmp):
    """Rotated under a name the writer does not look for (dateext's
    audit.jsonl-YYYYMMDD): the next log starts a new chain, and the files
    are not one chain in either order."""
    logs = os.path.join(tmp, "dated")
    os.mkdir(logs, 0o700)
    log = os.path.join(logs, "audit.jsonl")
    dated = log + "-20261205"
    config = shared_target_policy(logs)
    ok, err = session(config, 1)
    os.rename(log, dated)
    ok2, err2 = session(config, 2)
    fresh = Records(log)
    check("renamed to another name: the next log starts a new chain",
          ok and ok2 and fresh and fresh[0]["seq"] == 1 and
          "rotated_from" not in fresh[0], (err, err2, fresh[:1]))
    for order in ([dated, log], [log, dated]):
        st, out = verify(order)
        check("two unlinked files (%s first): exit 1, the second named as "
              "not linked" % os.path.basename(order[0]),
              st == 1 and ("broken: %s line 1 (seq 1" % order[1]) in out
              and "not linked to the file before it" in out, out)
    st1, out1 = verify(dated)
    st2, out2 = verify(log)
    check("each verifies on its own", st1 == 0 and st2 == 0, out1 + out2)
    p = subprocess.run([SP, "audit", "verify",
                        "--json", dated, log], capture_output=True,
                       timeout=BUDGET)
    j = json.loads(p.stdout or b"{}")
    check("--json says it: verdict broken, the reason, no new_chains",
          p.returncode == 1 and j.get("verdict") == "broken" and
          j.get("break", {}).get("reason", "").startswith("not linked")
          and "new_chains" not in j, p.stdout)


def main():
    tmp = tmpdir("sp-rotation-")
    try:
        rotated_between_sessions(tmp)
        unlinked_files(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

#!/usr/bin/env python3
"""The approvals line on stderr (broker/approvals.c) is said when a call
of a tool an operator approves waits, naming that call and how to list
it; not at the start of every session of a policy that has such a tool,
so `sp call` of a read-only tool and a session that calls none say
nothing of approvals.  Real sp, a real HTTP target counting what ran."""
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, call  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

BUDGET = 60
ITEM = '-x "$(id)" %2e%2e \u00e9t\u00e9'


def operator_policy(tmp, port):
    """create_item approved by an operator (uid 0, anyone may approve);
    get_item read-only, no confirmation."""
    path = confirmed_create_item_policy(tmp, port, timeout_s=120)
    with open(path) as f:
        doc = json.load(f)
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o711)
    doc["state_dir"] = state
    doc["tools"][0]["confirm"].update({"via": "operator",
                                       "approvers": {"uid": [os.getuid()]}})
    with open(path, "w") as f:
        json.dump(doc, f)
    return path, state


def listed(state):
    """sp approve --list lines once one shows, or [] after the budget."""
    end = time.monotonic() + BUDGET
    while time.monotonic() < end:
        p = subprocess.run([SP, "approve", "--state-dir", state, "--list"],
                           capture_output=True, timeout=BUDGET)
        lines = [l for l in p.stdout.decode().splitlines() if l.strip()]
        if lines:
            return lines
        time.sleep(0.1)
    return []


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)

    p = subprocess.run([SP, "call", "--config", cfg, "get_item",
                        json.dumps({"id": ITEM})], capture_output=True,
                       timeout=BUDGET)
    err = p.stderr.decode("utf-8", "replace")
    check("sp call of a read-only tool: runs once, says nothing of "
          "approvals", p.returncode == 0 and len(target.requests()) == 1 and
          "approvals" not in err, (p.returncode, err))

    status, _, err = finish(start(cfg), INITIALIZE + call(
        1, "get_item", {"id": ITEM}) + call(2, "get_item", {"id": "2"}),
        BUDGET)
    check("a session that calls only read-only tools: no approvals line",
          status == 0 and len(target.requests()) == 3 and
          "approvals" not in err, (status, err))

    s = start(cfg)
    s.stdin.write(INITIALIZE + call(7, "create_item",
                                    {"name": ITEM, "qty": 3}))
    s.stdin.flush()
    shown = listed(state)
    status, _, err = finish(s, b"", BUDGET)
    posts = [r for r in target.requests() if r["method"] == "POST"]
    lines = [l for l in err.splitlines() if "approvals:" in l]
    check("a call of an operator's tool: one line naming that call and how "
          "to list it; nothing sent", shown and posts == [] and
          len(lines) == 1 and "call 1 (create_item) waits for an approver"
          in lines[0] and ("sp approve --state-dir %s --list" % state) in
          lines[0], (shown, posts, err))
    target.stop()
    done()


main()

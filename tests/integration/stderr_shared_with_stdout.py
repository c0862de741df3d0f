#!/usr/bin/env python3
"""sp mcp whose stderr is the same pipe as its stdout (`2>&1`,
StandardError=socket): the broker and its children still log, yet the
client reads exactly the protocol lines and nothing else."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, only_protocol, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

# A line no parser accepts (quotes, $(), %2e%2e, multibyte); the policy
# closes the session on it, so the calls after it get no answer.
INPUT = (INITIALIZE + b'{"id": 7, "method": "x\\"$(id)%2e%2e \xc3\xa9\n'
         + request(2, "tools/list") + request(3, "ping"))


def run(cfg, stderr):
    p = subprocess.run([SP, "mcp", "--config", cfg], input=INPUT,
                       stdout=subprocess.PIPE, stderr=stderr,
                       env=sp_env(), timeout=20)
    return p.returncode, p.stdout, p.stderr


def test(tmp, audit):
    name = "audit" if audit else "no audit"
    os.makedirs(tmp, exist_ok=True)
    cfg = shared_target_policy(tmp, audit=audit)
    status, alone, err = run(cfg, subprocess.PIPE)
    # The same input with stderr apart does log: the test can see a leak.
    check("%s: with stderr apart, diagnostics are written" % name,
          err.strip() != b"", err)
    status2, shared, _ = run(cfg, subprocess.STDOUT)
    check("%s: shared stderr, same exit status" % name,
          status2 == status, "%r vs %r" % (status2, status))
    check("%s: shared stderr, only protocol lines" % name,
          only_protocol(shared) is None and shared.count(b"\n") == 2,
          shared)
    check("%s: shared stderr, exactly the bytes of stdout alone" % name,
          shared == alone, b"%s\n---\n%s" % (shared, alone))


def main():
    tmp = tmpdir()
    test(os.path.join(tmp, "a"), True)
    test(os.path.join(tmp, "b"), False)
    done()


main()

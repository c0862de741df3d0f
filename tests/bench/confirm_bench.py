#!/usr/bin/env python3
"""How long a confirmed call takes end to end beside unconfirmed ones
(`make bench-confirm`; printed, not asserted).  One sp mcp session on a
local HTTP target; the client declares elicitation and answers each
question at once, as a human who had already decided would, so the
figure is Sallyport's own cost: the challenge, the elicitation round
trip, the answer's checks and the extra audit records.  Calls run one at
a time; each time is from writing the tools/call line to reading its
response."""
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from sptest.confirm import ConfirmSession  # noqa: E402
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import tmpdir  # noqa: E402
from sptest.target import Target  # noqa: E402

CALLS = int(os.environ.get("SP_BENCH_CALLS", "200"))


def write_policy(tmp, port):
    token = os.path.join(tmp, "api.token")
    fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b"confirm-bench-secret\n")
    os.close(fd)

    def tool(name, mutating, confirm=None):
        t = {"name": name, "description": "Bench.", "target": "api",
             "scope": "rw", "mutating": mutating,
             "http": {"method": "POST" if mutating else "GET",
                      "path": "/items/{qty}"},
             "params": {"qty": {"type": "integer", "minimum": 1,
                                "maximum": 1000000}}}
        if confirm is not None:
            t["confirm"] = confirm
        return t

    doc = {"sallyport": 1, "server": {"name": "confirm-bench"},
           "limits": {"call_timeout_ms": 10000,
                      "calls_per_session": 3 * CALLS + 10},
           "audit": {"path": os.path.join(tmp, "audit.jsonl")},
           "credentials": {"t": {"type": "bearer", "file": token}},
           "targets": {"api": {"type": "http", "credential": "t",
                               "base_url": "http://127.0.0.1:%d" % port}},
           "tools": [tool("read", False), tool("write", True),
                     tool("write_confirmed", True,
                          {"retype": "qty", "timeout_s": 60})],
           "profiles": {"default": {"scopes": ["rw"]}}}
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def answer(req):
    want = req["params"]["message"].rsplit("qty = ", 1)[1].rstrip("?")
    return {"action": "accept", "content": {"qty": want}}


def one(s, name, rid, qty):
    t0 = s.call(rid, name, {"qty": qty})
    msg, t1 = s.wait([rid], 60)[rid]
    outcome = msg["result"]["structuredContent"]["outcome"]
    if outcome != "ok":
        raise SystemExit("%s call %d: %s" % (name, rid, outcome))
    return (t1 - t0) * 1000.0


def run(s, names):
    """CALLS rounds, each one call of every tool in turn, so that a
    slower moment of a shared machine falls on all of them alike."""
    times = {n: [] for n in names}
    rid = 1
    for i in range(CALLS):
        for n in names:
            times[n].append(one(s, n, rid, i + 1))
            rid += 1
    return times


def show(name, times):
    times.sort()
    print("%-16s n=%d  median %.2f ms  p90 %.2f ms  mean %.2f ms" % (
        name, len(times), statistics.median(times),
        times[int(len(times) * 0.9) - 1], statistics.mean(times)))


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder", 600)
    s = ConfirmSession(write_policy(tmp, target.port), answer)
    try:
        names = ("read", "write", "write_confirmed")
        for n in names:	# warm up
            one(s, n, 1_000_000 + len(n), 1)
        results = run(s, names)
    finally:
        s.close()
        target.stop()
    print("# one call at a time, end to end (the client answers each "
          "question at once)")
    for name in names:
        show(name, results[name])


if __name__ == "__main__":
    main()

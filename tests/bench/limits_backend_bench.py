#!/usr/bin/env python3
"""Throughput of a limited tool with 16 calls in flight through the real
sp mcp, for each place per_day is decided (`make bench-limits-backend`;
printed, not asserted): in memory (no state_dir), in state_dir's
limits.jsonl, and in PostgreSQL (a throwaway cluster,
tests/integration/sptest/postgres.py; the row says why when there is
none).  Each session also runs a tool with no limits, the baseline of the
same session, so the ratio is the decision's own cost and not the
machine's mood; a second session on the same backend and tool runs at
the same time, so the count is contended as on a busy host."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.postgres import Cluster, absent_reason  # noqa: E402
from sptest.run import SP, Session, sp_env, tmpdir  # noqa: E402
from sptest.target import Target  # noqa: E402

CALLS = int(os.environ.get("SP_BENCH_CALLS", "600"))
ROUNDS = 3
WINDOW = 16


def doc(tmp, name, port, backend):
    def tool(tname, path, **kw):
        t = {"name": tname, "description": "Bench.", "target": "api",
             "scope": "rw", "http": {"method": "GET", "path": path},
             "params": {"id": {"type": "integer"}}}
        t.update(kw)
        return t
    d = {"sallyport": 1, "server": {"name": "bench-" + name},
         "limits": {"call_timeout_ms": 60000, "max_inflight": WINDOW,
                    "calls_per_session": 10 * CALLS + 100},
         "audit": {"path": os.path.join(tmp, "audit-%s.jsonl" % name)},
         "targets": {"api": {"type": "http",
                             "base_url": "http://127.0.0.1:%d" % port}},
         "tools": [tool("free_item", "/free/{id}"),
                   tool("day_item", "/day/{id}",
                        limits={"per_day": 1000000})],
         "profiles": {"default": {"scopes": ["rw"]}}}
    if backend[0] in ("state_dir", "postgres"):
        state = os.path.join(tmp, "state-" + name)
        os.makedirs(state, 0o700, exist_ok=True)
        d["state_dir"] = state
    if backend[0] == "postgres":
        d["state"] = {"postgres": backend[1]}
    return d


def burst(s, tool, first):
    """CALLS calls of tool, WINDOW in flight; calls per second."""
    sent, got, nxt = 0, 0, first
    t0 = time.monotonic()
    while sent < min(WINDOW, CALLS):
        s.call(nxt, tool, {"id": nxt})
        nxt, sent = nxt + 1, sent + 1
    while got < CALLS:
        rid, msg, _ = s.answers.get(timeout=120)
        if structured((msg, 0)).get("outcome") != "ok":
            raise SystemExit("%s call %d: %s" % (tool, rid, msg))
        got += 1
        if sent < CALLS:
            s.call(nxt, tool, {"id": nxt})
            nxt, sent = nxt + 1, sent + 1
    return CALLS / (time.monotonic() - t0)


def contended(a, b, tool, first):
    """a's burst of tool while b sends the same tool: a's calls/s."""
    rival = threading.Thread(target=burst, args=(b, tool, first + CALLS),
                             daemon=True)
    rival.start()
    rate = burst(a, tool, first)
    rival.join(300)
    return rate


def run_backend(tmp, port, label, backend):
    """(free calls/s, limited calls/s), medians of ROUNDS alternating
    rounds of one session while a second session on the same backend
    sends the same tool (so both rows are contended alike)."""
    cfgs = [write_policy(tmp, doc(tmp, "%s%d" % (label, i), port, backend),
                         "%s%d.json" % (label, i)) for i in (0, 1)]
    a, b = Session(cfgs[0]), Session(cfgs[1])
    free, limited = [], []
    try:
        burst(a, "free_item", 1)		# warm up both paths
        burst(a, "day_item", 1 + CALLS)
        for r in range(ROUNDS):
            first = (4 * r + 2) * CALLS
            free.append(contended(a, b, "free_item", first))
            limited.append(contended(a, b, "day_item", first + 2 * CALLS))
    finally:
        a.close()
        b.close()
    return statistics.median(free), statistics.median(limited)


def postgres_backend(tmp):
    why = absent_reason()
    if why is not None:
        return None, why
    cluster = Cluster(tmp)
    cluster.make_database("bench")
    conninfo = cluster.conninfo(db="bench")
    init = write_policy(tmp, doc(tmp, "init", 9, ("postgres", conninfo)),
                        "init.json")
    r = subprocess.run([SP, "state", "init", "--config", init],
                       capture_output=True, env=sp_env(), timeout=120)
    if r.returncode != 0:
        raise SystemExit("sp state init: %s" % r.stderr.decode())
    return cluster, ("postgres", conninfo)


def main():
    tmp = tmpdir("sp-bench-limits-")
    os.chmod(tmp, 0o755)
    target = Target(tmp, "recorder", 1800)
    cluster, pg = postgres_backend(tmp)
    rows = [("memory", ("memory",)), ("state_dir", ("state_dir",))]
    if cluster is not None:
        rows.append(("postgres", pg))
    results = {}
    try:
        for label, backend in rows:
            results[label] = run_backend(tmp, target.port, label, backend)
    finally:
        target.stop()
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("# %d calls, %d in flight, median of %d rounds; a second session "
          "on the same backend sends the same tool at the same time"
          % (CALLS, WINDOW, ROUNDS))
    base = results["memory"][1]
    for label, (free, limited) in results.items():
        print("%-10s free %7.0f calls/s  per_day %7.0f calls/s  "
              "per_day/free %.2f  per_day vs memory %.2f" % (
                  label, free, limited, limited / free, limited / base))
    if cluster is None:
        print("postgres   skipped: %s" % pg)
    print(json.dumps({k: {"free": round(v[0]), "per_day": round(v[1])}
                      for k, v in results.items()}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""`make bench-limits`: runs tests/bench/bench_limits (argv[1]), which
times one per_day decision in memory and with state_dir, and with a
throwaway PostgreSQL cluster (tests/integration/sptest/postgres.py, its
schema made by sp state init) named in SP_BENCH_PG_CONNINFO, so that the
PostgreSQL row is timed in the same process as the others.  When no
cluster can be made here, SP_BENCH_PG_WHY says why and the row is
skipped with that reason.  Printed, not asserted."""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from sptest.postgres import absent_reason, shared_state  # noqa: E402


def doc(tmp, name, port, conninfo):
    """The policy sp state init reads: only its "state" matters."""
    return {"sallyport": 1, "server": {"name": "bench-" + name},
            "targets": {"api": {"type": "http",
                                "base_url": "http://127.0.0.1:%d" % port}},
            "tools": [{"name": "count_item", "description": "Bench.",
                       "target": "api", "scope": "read",
                       "http": {"method": "GET", "path": "/items/{id}"},
                       "params": {"id": {"type": "integer"}}}],
            "profiles": {"default": {"scopes": ["read"]}},
            "state": {"postgres": conninfo}}


def cluster_for(env):
    """(tmp, cluster): started, its schema made, its conninfo in env; or
    None, and why in env."""
    why = absent_reason()
    if why is None:
        try:
            tmp, cluster, conninfo, r = shared_state("sp-bench-limits-pg-",
                                                     doc, db="bench")
        except RuntimeError as e:  # initdb or the server failed
            tmp, cluster, r = None, None, None
            why = "no cluster: %s" % str(e).strip()[-300:]
    if why is None and r.returncode == 0:
        env["SP_BENCH_PG_CONNINFO"] = conninfo
        return tmp, cluster
    if why is None:
        why = "sp state init failed: %s" % r.stderr.decode().strip()
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    env["SP_BENCH_PG_WHY"] = why
    return None


def main():
    env = dict(os.environ)
    made = cluster_for(env)
    try:
        status = subprocess.run([sys.argv[1]], env=env).returncode
    finally:
        if made is not None:
            made[1].stop()
            shutil.rmtree(made[0], ignore_errors=True)
    sys.exit(status)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""per_day counts in state_dir (docs/design.md section 9), shared by every
sp mcp of the host: real sp processes sharing one state_dir, and a real
HTTP target counting what reached it.

- two sessions at once: the second sees the first's count at once, and
  the first the second's; the call past per_day is denied in both and
  never reaches the target;
- limits.jsonl is created 0600, and no stderr line says the limits end
  with the process;
- a torn last line (a writer killed mid-line) is survived: it is skipped,
  and the next line starts on a line of its own;
- a truncated file starts the counts over; a replaced one (renamed over)
  is read anew from its start;
- sp check refuses a state_dir that is missing or not a directory."""
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

SCOPE_LINE = "no state_dir: tool limits and the idempotency journal are kept in this process"
WHO = "profile:default"  # pipes carry no peer uid: per profile


def doc(tmp, port, state):
    def tool(name, per_day):
        return {"name": name, "description": "Counted per day.",
                "target": "api", "scope": "read",
                "http": {"method": "GET", "path": "/" + name + "/{id}"},
                "params": {"id": {"type": "string", "maxLength": 64}},
                "limits": {"per_day": per_day}}
    return {
        "sallyport": 1,
        "server": {"name": "limits-state"},
        "limits": {"call_timeout_ms": 120000},
        "state_dir": state,
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [tool("count_item", 3), tool("torn_item", 2)],
        "profiles": {"default": {"scopes": ["read"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


class Caller:
    """One session; every answer kept (Session.wait hands each out once)."""

    def __init__(self, config):
        self.s = Session(config)
        self.answers = {}
        self.next = 100

    def call(self, tool, value):
        self.next += 1
        self.s.call(self.next, tool, {"id": value})
        got = self.s.wait([self.next])
        return structured(got.get(self.next))


def paths(target, prefix):
    return [r["path"] for r in target.requests()
            if r["path"].startswith(prefix)]


def today_line(tool):
    return json.dumps({"day": int(time.time() // 86400), "tool": tool,
                       "who": WHO})


def shared(a, b, target, state_file):
    r = [a.call("count_item", "1"), a.call("count_item", "2 'x'"),
         b.call("count_item", "$(id)")]
    check("two sessions: three calls pass between them",
          [x.get("outcome") for x in r] == ["ok"] * 3, r)
    st = os.stat(state_file)
    check("limits.jsonl is created mode 0600", st.st_mode & 0o777 == 0o600,
          oct(st.st_mode))
    nb, na = b.call("count_item", "4"), a.call("count_item", "5")
    check("the second session sees the first's count at once: denied",
          nb.get("outcome") == "denied" and "3 of 3" in nb.get("message", "")
          and WHO in nb.get("message", ""), nb)
    check("the first session sees the second's count at once: denied",
          na.get("outcome") == "denied", na)
    check("exactly three requests reached the target",
          len(paths(target, "/count_item/")) == 3,
          paths(target, "/count_item/"))


def torn(a, target, state_file):
    first = a.call("torn_item", "t1")
    with open(state_file, "a") as f:
        f.write('{"day": %d, "tool": "torn_it' % int(time.time() // 86400))
    second = a.call("torn_item", "t2")
    third = a.call("torn_item", "t3")
    check("a torn last line is survived: the next call is counted",
          first.get("outcome") == "ok" and second.get("outcome") == "ok",
          (first, second))
    check("the torn line counts for nothing: per_day 2 holds",
          third.get("outcome") == "denied", third)
    with open(state_file) as f:
        lines = f.read().split("\n")
    parsed = []
    for l in lines[:-1]:
        try:
            parsed.append(json.loads(l))
        except ValueError:
            parsed.append(None)
    check("the line after the torn one starts on a line of its own",
          lines[-1] == "" and parsed.count(None) == 1 and
          parsed[-1] is not None and parsed[-1].get("tool") == "torn_item",
          lines)
    check("two torn_item requests reached the target",
          len(paths(target, "/torn_item/")) == 2,
          paths(target, "/torn_item/"))


def truncated_and_replaced(a, target, state_file):
    os.truncate(state_file, 0)
    r = a.call("count_item", "after truncation")
    check("a truncated file starts the counts over",
          r.get("outcome") == "ok", r)
    new = state_file + ".new"
    with open(new, "w") as f:
        f.write("\n".join([today_line("count_item")] * 3) + "\n")
    os.chmod(new, 0o600)
    os.rename(new, state_file)
    r = a.call("count_item", "after replacement")
    check("a replaced file is read anew: its three calls count",
          r.get("outcome") == "denied" and "3 of 3" in r.get("message", ""),
          r)
    check("the call after truncation reached the target, the denied ones "
          "did not", len(paths(target, "/count_item/")) == 4,
          paths(target, "/count_item/"))


def sp_check(tmp, port):
    missing = os.path.join(tmp, "no-such-dir")
    bad = write_policy(tmp, doc(tmp, port, missing))
    r = subprocess.run([SP, "check", "--config", bad],
                       stderr=subprocess.PIPE, text=True)
    check("sp check refuses a missing state_dir", r.returncode != 0 and
          "state_dir %s" % missing in r.stderr, r.stderr)
    afile = os.path.join(tmp, "a-file")
    open(afile, "w").close()
    bad = write_policy(tmp, doc(tmp, port, afile))
    r = subprocess.run([SP, "check", "--config", bad],
                       stderr=subprocess.PIPE, text=True)
    check("sp check refuses a state_dir that is not a directory",
          r.returncode != 0 and "not a directory" in r.stderr, r.stderr)


def main():
    tmp = tmpdir()
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    state_file = os.path.join(state, "limits.jsonl")
    target = Target(tmp, lifetime=600)
    try:
        config = write_policy(tmp, doc(tmp, target.port, state))
        r = subprocess.run([SP, "check", "--config", config],
                           stderr=subprocess.PIPE, text=True)
        check("sp check accepts the policy with its state_dir",
              r.returncode == 0, r.stderr)
        a, b = Caller(config), Caller(config)
        shared(a, b, target, state_file)
        torn(a, target, state_file)
        truncated_and_replaced(a, target, state_file)
        status = [a.s.close(), b.s.close()]
        sp_check(tmp, target.port)
    finally:
        target.stop()
    err = (a.s.stderr + b.s.stderr).decode("utf-8", "replace")
    check("both sessions end with 0", status == [0, 0], err)
    check("with state_dir no line says the limits end with the process",
          SCOPE_LINE not in err, err)
    done()


main()

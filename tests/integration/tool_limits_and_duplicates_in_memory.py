#!/usr/bin/env python3
"""Per-tool limits and duplicates without state_dir (docs/design.md section
9), the default, with the real sp and a real HTTP target that logs every
request: what a limit refuses never reaches the target, counted there.

- stderr says at start that the limits end with the process;
- max_distinct 3: three different ids pass, the fourth is denied (naming
  the limit, 3 of 3, when it resets), the first id asked again is not;
- min_interval_ms: an identical call inside the interval is denied, a call
  with other values is not;
- per_day 2: the third call is denied, naming tomorrow 00:00 UTC;
- each refusal is a "limit" record in the audit log, and no intent;
- two identical mutating calls in one read of stdin: one request at the
  target, two answers, the second marked duplicate_of the first's call
  number; the same call again within dedupe_ms is a duplicate too, and a
  call with another value is not."""
import datetime
import json
import os
import re
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import request, structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir, wait_for  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

SCOPE_LINE = "no state_dir: tool limits and the idempotency journal are kept in this process"


def tool(name, path, limits=None, method="GET", mutating=False):
    t = {"name": name, "description": "A tool with limits.",
         "target": "api", "scope": "rw",
         "http": {"method": method, "path": path},
         "params": {"id": {"type": "string", "maxLength": 64}}}
    if limits is not None:
        t["limits"] = limits
    if mutating:
        t["mutating"] = True
    return t


def doc(tmp, port):
    return {
        "sallyport": 1,
        "server": {"name": "limits-memory"},
        "limits": {"call_timeout_ms": 120000},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [
            tool("scan_item", "/scan/{id}", {"max_distinct": {"id": 3}}),
            tool("poll_item", "/poll/{id}", {"min_interval_ms": 600000}),
            tool("count_item", "/count/{id}", {"per_day": 2}),
            tool("create_item", "/hold/dup/{id}", method="POST",
                 mutating=True),
        ],
        "profiles": {"default": {"scopes": ["rw"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


ANSWERS = {}


def wait(s, ids):
    """Every answer so far for ids: Session.wait hands each out once."""
    ANSWERS.update(s.wait([i for i in ids if i not in ANSWERS]))
    return {i: ANSWERS[i] for i in ids if i in ANSWERS}


def paths(target, prefix):
    return [r["path"] for r in target.requests()
            if r["path"].startswith(prefix)]


def audit(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        return [json.loads(l) for l in f if l.strip()]


def outcome(answers, rid):
    return structured(answers.get(rid)).get("outcome")


def message(answers, rid):
    return structured(answers.get(rid)).get("message", "")


def max_distinct(s, target, tmp):
    ids = ["a", "b'\"\n", "$(id)", "-4 \u00e9\u6f22"]
    for n, v in enumerate(ids):
        s.call(10 + n, "scan_item", {"id": v})
        wait(s, [10 + n])
    s.call(14, "scan_item", {"id": "a"})
    got = wait(s, [10, 11, 12, 13, 14])
    check("max_distinct: three different values pass",
          [outcome(got, i) for i in (10, 11, 12)] == ["ok"] * 3, got)
    check("max_distinct: the fourth different value is denied",
          outcome(got, 13) == "denied", got.get(13))
    m = message(got, 13)
    check("max_distinct: the refusal names the limit, the count and when "
          "it resets", "max_distinct of scan_item.id" in m and
          "3 of 3" in m and "session ends" in m, m)
    check("max_distinct: the first value asked again is not refused",
          outcome(got, 14) == "ok", got.get(14))
    check("max_distinct: the refused value never reached the target",
          len(paths(target, "/scan/")) == 4, paths(target, "/scan/"))
    lim = [r for r in audit(tmp) if r["kind"] == "limit"]
    check("max_distinct: a limit record says what was refused",
          len(lim) == 1 and lim[0].get("limit") == "max_distinct" and
          lim[0].get("param") == "id" and lim[0].get("count") == 3 and
          lim[0].get("max") == 3 and lim[0].get("resets") == "session-end"
          and lim[0].get("tool") == "scan_item", lim)


def min_interval(s, target):
    s.call(20, "poll_item", {"id": "x"})
    wait(s, [20])
    s.call(21, "poll_item", {"id": "x"})
    s.call(22, "poll_item", {"id": "y"})
    got = wait(s, [20, 21, 22])
    check("min_interval_ms: the first call passes",
          outcome(got, 20) == "ok", got.get(20))
    m = message(got, 21)
    check("min_interval_ms: an identical call inside the interval is "
          "denied, naming the limit and when it is allowed again",
          outcome(got, 21) == "denied" and "min_interval_ms of poll_item"
          in m and "allowed again at 20" in m, got.get(21))
    check("min_interval_ms: another value is not refused",
          outcome(got, 22) == "ok", got.get(22))
    check("min_interval_ms: the refused call never reached the target",
          sorted(paths(target, "/poll/")) == ["/poll/x", "/poll/y"],
          paths(target, "/poll/"))


def per_day(s, target):
    for n, v in enumerate(["1", "2", "3"]):
        s.call(30 + n, "count_item", {"id": v})
        wait(s, [30 + n])
    got = wait(s, [30, 31, 32])
    tomorrow = (datetime.datetime.now(datetime.timezone.utc).date() +
                datetime.timedelta(days=1)).isoformat() + "T00:00:00.000Z"
    m = message(got, 32)
    check("per_day 2: two calls pass, the third is denied",
          [outcome(got, i) for i in (30, 31, 32)] == ["ok", "ok", "denied"],
          got)
    check("per_day: the refusal names the limit, the count and the reset",
          "per_day of count_item" in m and "2 of 2" in m and tomorrow in m,
          m)
    check("per_day: the third call never reached the target",
          paths(target, "/count/") == ["/count/1", "/count/2"],
          paths(target, "/count/"))


def duplicates(s, target, tmp):
    args = {"id": "k 1"}
    s.send(request(40, "tools/call", {"name": "create_item",
                                      "arguments": args}) +
           request(41, "tools/call", {"name": "create_item",
                                      "arguments": args}))
    seen = wait_for(lambda: any(r.get("duplicate_of") for r in audit(tmp)
                                if r["kind"] == "intent"))
    check("duplicates: the second identical call is written as a duplicate "
          "while the first is held", seen)
    target.release("dup")
    got = wait(s, [40, 41])
    first = [r for r in audit(tmp) if r["kind"] == "intent" and
             r.get("tool") == "create_item" and "duplicate_of" not in r]
    s40, s41 = structured(got.get(40)), structured(got.get(41))
    check("duplicates: both calls are answered ok",
          s40.get("outcome") == "ok" and s41.get("outcome") == "ok", got)
    check("duplicates: one of them is marked duplicate_of the other's call",
          len(first) == 1 and
          [x.get("duplicate_of") for x in (s40, s41)].count(
              first[0]["call"]) == 1 and
          [x.get("duplicate_of") for x in (s40, s41)].count(None) == 1,
          (first, s40, s41))
    check("duplicates: the duplicate carries the first's answer",
          s40.get("http") == s41.get("http"), (s40, s41))
    s.call(42, "create_item", args)
    s.call(43, "create_item", {"id": "k 2"})
    got = wait(s, [42, 43])
    check("duplicates: the same call within dedupe_ms is a duplicate too",
          structured(got.get(42)).get("duplicate_of") == first[0]["call"],
          got.get(42))
    check("duplicates: another value is a call of its own",
          outcome(got, 43) == "ok" and
          "duplicate_of" not in structured(got.get(43)), got.get(43))
    check("duplicates: one request at the target per different call",
          sorted(paths(target, "/hold/dup/")) ==
          ["/hold/dup/k%201", "/hold/dup/k%202"], paths(target, "/hold/"))


def recipe(tmp):
    """docs/sp-audit.5's recipe for limit records, on this session's log."""
    with open(os.path.join(os.environ["SP_SRCDIR"], "docs",
                           "sp-audit.5")) as f:
        cmd = re.search(r'^\.\\" recipe: which calls a limit refused\n'
                        r'\.EX\n(.*?)\n\.EE', f.read(), re.M | re.S).group(1)
    cmd = cmd.replace("\\e", "\\").replace("\\-", "-")
    argv = [a for a in shlex.split(cmd.replace("\\\n", " "))
            if a not in ("audit.jsonl.1", "audit.jsonl")]
    p = subprocess.run(argv + [os.path.join(tmp, "audit.jsonl")],
                       capture_output=True, text=True, timeout=30)
    got = [json.loads(l) for l in p.stdout.splitlines()]
    check("sp-audit.5's recipe names each refusal's limit and reset",
          p.returncode == 0 and
          [(g["tool"], g["limit"]) for g in got] ==
          [("scan_item", "max_distinct"), ("poll_item", "min_interval_ms"),
           ("count_item", "per_day")] and
          all(g.get("resets") for g in got), (p.stdout, p.stderr))


def main():
    tmp = tmpdir()
    target = Target(tmp, lifetime=600)
    try:
        s = Session(write_policy(tmp, doc(tmp, target.port)))
        max_distinct(s, target, tmp)
        min_interval(s, target)
        per_day(s, target)
        duplicates(s, target, tmp)
        status = s.close()
    finally:
        target.stop()
    err = s.stderr.decode("utf-8", "replace")
    check("stderr says once at start that the limits end with the process",
          err.count(SCOPE_LINE) == 1, err)
    check("the session ends with 0", status == 0, err)
    recipe(tmp)
    log = audit(tmp)
    check("no intent is written for a refused call",
          not any(r["kind"] == "intent" and r.get("call") in
                  [x.get("call") for x in log if x["kind"] == "limit"]
                  for r in log), log)
    done()


main()

#!/usr/bin/env python3
"""sp metrics (docs/sp.1, METRICS) against what really happened: real sp
mcp sessions against a real HTTP target that logs every request, then sp
metrics, its output read by a strict exposition-format reader
(sptest/prom.py), and compared with

- the audit log's records, counted here independently (the JSON lines
  parsed by this test, with the rule sp(1) documents: each call counted
  once, by the record that ends it);
- the target's request log: the calls whose outcome is ok (or unknown:
  sent, then the executor killed) are exactly the requests it received;
- state_dir: per_day spend equals the calls that passed, and the
  journal's entries by state (done, unknown from a killed executor, a
  pending line older than twice the budget counted unknown, a fresh one
  pending), all four states present;
- label values from state_dir lines (who) with a quote, a backslash, a
  newline, multibyte text and one past the length limit, escaped and cut;
- rotation: counts add up across audit.jsonl.1 and audit.jsonl, by
  default and with --audit;
- a call waiting for an operator is sallyport_approvals_pending 1 while
  its session lives, 0 once it ended."""
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest import prom  # noqa: E402
from sptest.confirm import ConfirmSession  # noqa: E402
from sptest.mcp import INITIALIZE, call, request, structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, Session, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

BUDGET = 120
WHO = "profile:default"  # pipes carry no peer uid: per profile
TIMEOUT_MS = 5000
# a who written by hand into limits.jsonl: what the label must survive
ODD_WHO = 'uid:"1\\2\n\u00e9t\u00e9 \u2603'
LONG_WHO = "profile:" + "\u00e9" * 100   # 208 bytes: cut at 128


def tool(name, path, scope="read", method="GET", **more):
    t = {"name": name, "description": "A tool of the metrics test.",
         "target": "api", "scope": scope,
         "http": {"method": method, "path": path},
         "params": {"id": {"type": "string", "maxLength": 64}}}
    t.update(more)
    return t


def doc(tmp, port, state):
    journal = {"idempotency": {"window_s": 3600}}
    create = tool("create_item", "/create/{id}", "rw", "POST", mutating=True,
                  confirm={"message": "Create {id}", "timeout_s": 60})
    approve = tool("approve_item", "/approve/{id}", "rw", "POST",
                   mutating=True, confirm={
                       "message": "Approve {id}", "timeout_s": 120,
                       "via": "operator",
                       "approvers": {"uid": [os.getuid()]}})
    return {
        "sallyport": 1,
        "server": {"name": "metrics-test"},
        "limits": {"call_timeout_ms": TIMEOUT_MS, "dedupe_ms": 0},
        "state_dir": state,
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [
            tool("get_item", "/items/{id}", limits={"per_day": 3}),
            tool("put_item", "/put/{id}", "rw", "PUT", mutating=True,
                 **journal),
            tool("hold_item", "/hold/m/{id}", "rw", "POST", mutating=True,
                 **journal),
            tool("drop_item", "/drop/{id}", "admin", "DELETE",
                 mutating=True),
            create, approve,
        ],
        "profiles": {"default": {"scopes": ["read", "rw"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


def answer(req):
    """Decline the question about "no", accept any other."""
    msg = json.dumps(req.get("params", {}))
    if "no-" in msg:
        return {"action": "decline"}
    return {"action": "accept", "content": {"confirm": True}}


class Caller:
    def __init__(self, s):
        self.s = s
        self.next = 100

    def send(self, name, args):
        self.next += 1
        self.s.call(self.next, name, args)
        return self.next

    def call(self, name, args):
        rid = self.send(name, args)
        return self.s.wait([rid], BUDGET).get(rid)


def first_session(config):
    """Calls of every ending: ok, per_day, replay, invalid arguments,
    scope denied, unknown tool, declined, accepted, then a parse error."""
    c = Caller(ConfirmSession(config, answer))
    ids = ["1", "2 'x'", "$(id)", "-d %2e%2e", "5\u00e9"]
    got = [structured(c.call("get_item", {"id": i})) for i in ids]
    check("get_item: three pass, two refused by per_day",
          [g.get("outcome") for g in got] == ["ok"] * 3 + ["denied"] * 2,
          got)
    c.call("put_item", {"id": "p\n1"})
    again = structured(c.call("put_item", {"id": "p\n1"}))
    check("put_item again: replayed from the journal",
          again.get("replay") is True, again)
    c.call("get_item", {"id": 7})                 # invalid-arguments
    c.call("get_item", {"id": "x" * 65})          # invalid-arguments
    c.call("drop_item", {"id": "1"})              # scope-denied
    c.call("no_such_tool", {"id": "1"})           # unknown-tool
    c.call("create_item", {"id": "no-thanks"})    # declined
    made = structured(c.call("create_item", {"id": "yes \"q\""}))
    check("create_item accepted: ok", made.get("outcome") == "ok", made)
    # a line that is no JSON ends the session (sp(1) EXIT STATUS): last
    c.s.send(b'{"jsonrpc": "2.0", "id": 9, "method"\n')  # parse-error
    return c.s.close()


def killed_session(config, target):
    """A mutating call at the target when its executor is killed: its
    outcome and journal entry unknown."""
    c = Caller(Session(config))
    executor = c.s.executor_pid()
    c.send("hold_item", {"id": "k$(x)"})
    end = time.monotonic() + BUDGET
    while not requests(target, "/hold/") and time.monotonic() < end:
        time.sleep(0.02)
    os.kill(executor, signal.SIGKILL)
    status = c.s.close()
    target.release("m")
    return status


def requests(target, prefix="/"):
    return [r for r in target.requests() if r["path"].startswith(prefix)
            and not r["path"].startswith("/__sptest")]


def metrics(config, *more):
    p = subprocess.run([SP, "metrics", "--config", config] + list(more),
                       capture_output=True, timeout=BUDGET)
    try:
        fams = prom.parse(p.stdout)
        error = None
    except ValueError as e:
        fams, error = {}, str(e)
    return p, fams, error


def read_records(paths):
    recs = []
    for path in paths:
        with open(path) as f:
            recs += [json.loads(l) for l in f if l.endswith("\n")]
    return recs


def expected(recs):
    """The counts sp(1) METRICS promises, from the records themselves."""
    calls, refusals, confirms, kinds = {}, {}, {}, {}

    def add(d, key, n=1):
        d[key] = d.get(key, 0) + n

    for r in recs:
        kind, t = r["kind"], r.get("tool", "")
        add(kinds, kind)
        if kind == "rejection":
            n = r.get("repeated", 1)
            add(refusals, r["reason"], n)
            if r.get("method") == "tools/call":
                add(calls, (t, "rejected"), n)
        elif kind == "limit":
            add(refusals, r["limit"])
            add(calls, (t, "limit"))
        elif kind == "execution":
            add(calls, (t, r["outcome"]))
        elif kind == "intent" and "duplicate_of" in r:
            add(calls, (t, "duplicate"))
        elif kind == "intent" and r.get("replay") is True:
            add(calls, (t, "replayed"))
        elif kind == "confirmation":
            d = r["decision"]
            add(confirms, (t, d))
            if d == "relayed":
                add(calls, (t, "relayed"))
            elif d not in ("asked", "accepted"):
                add(refusals, d)
                add(calls, (t, "unconfirmed"))
    return {"calls": calls, "refusals": refusals, "confirms": confirms,
            "kinds": kinds,
            "sessions": kinds.get("session-start", 0)}


def series(fams, name, *labels):
    return {tuple(l[k] for k in labels) if len(labels) > 1 else
            l[labels[0]]: int(v)
            for l, v in fams.get(name, {}).get("samples", []) if v}


def compare(what, fams, want):
    check(what + ": calls_total by tool and outcome match the log",
          series(fams, "sallyport_calls_total", "tool", "outcome") ==
          want["calls"],
          (series(fams, "sallyport_calls_total", "tool", "outcome"),
           want["calls"]))
    check(what + ": refusals_total by reason match the log",
          series(fams, "sallyport_refusals_total", "reason") ==
          want["refusals"],
          (series(fams, "sallyport_refusals_total", "reason"),
           want["refusals"]))
    check(what + ": confirmations_total match the log",
          series(fams, "sallyport_confirmations_total", "tool",
                 "decision") == want["confirms"],
          (series(fams, "sallyport_confirmations_total", "tool",
                  "decision"), want["confirms"]))
    check(what + ": audit_records_total by kind and sessions_total",
          series(fams, "sallyport_audit_records_total", "kind") ==
          want["kinds"] and prom.value(fams, "sallyport_sessions_total") ==
          want["sessions"],
          (series(fams, "sallyport_audit_records_total", "kind"),
           want["kinds"], prom.value(fams, "sallyport_sessions_total")))


def against_the_target(fams, target):
    reached = requests(target)
    ok = prom.total(fams, "sallyport_calls_total", outcome="ok")
    unknown = prom.total(fams, "sallyport_calls_total", outcome="unknown")
    check("calls ok plus unknown (sent, executor killed) are exactly the "
          "requests the target received", ok + unknown == len(reached) and
          unknown == len(requests(target, "/hold/")) == 1,
          (ok, unknown, [r["path"] for r in reached]))
    check("no request of a refused call reached the target: get_item "
          "3 times, drop_item never",
          len(requests(target, "/items/")) == 3 and
          not requests(target, "/drop/"), [r["path"] for r in reached])


def journal_line(key, tool_name, state, ts_ms):
    return json.dumps({"key": key, "state": state, "ts": ts_ms, "call": 1,
                       "tool": tool_name, "summary": "written by the test"})


def state_lines(state):
    """Lines as another writer would leave them: a pending entry of a
    broker long dead (unknown by the budget rule), a fresh pending one,
    and two per_day lines whose who must be escaped and cut."""
    now = int(time.time() * 1000)
    with open(os.path.join(state, "journal.jsonl"), "a") as f:
        f.write(journal_line("a" * 64, "put_item", "pending",
                             now - 60 * TIMEOUT_MS) + "\n")
        f.write(journal_line("b" * 64, "put_item", "pending", now) + "\n")
        f.write(journal_line("c" * 64, "put_item", "pending",
                             now - 7200 * 1000) + "\n")   # window passed
    day = int(time.time() // 86400)
    with open(os.path.join(state, "limits.jsonl"), "a") as f:
        for who in (ODD_WHO, ODD_WHO, LONG_WHO):
            f.write(json.dumps({"day": day, "tool": "get_item",
                                "who": who}) + "\n")
        f.write(json.dumps({"day": day - 1, "tool": "get_item",
                            "who": WHO}) + "\n")          # yesterday


def check_state(fams, want_ok_get):
    spent = series(fams, "sallyport_limit_spent", "tool", "limit", "who")
    cut = LONG_WHO.encode()[:128].decode("utf-8", "ignore") + "..."
    check("per_day spent: the calls that passed today, by who; yesterday's "
          "line not counted",
          spent == {("get_item", "per_day", WHO): want_ok_get,
                    ("get_item", "per_day", ODD_WHO): 2,
                    ("get_item", "per_day", cut): 1} and want_ok_get == 3,
          (spent, want_ok_get))
    check("per_day max: get_item's 3, no other tool",
          series(fams, "sallyport_limit_max", "tool", "limit") ==
          {("get_item", "per_day"): 3},
          fams.get("sallyport_limit_max"))
    j = {(l["tool"], l["state"]): int(v) for l, v in
         fams.get("sallyport_journal_entries", {}).get("samples", [])}
    want = {(t, s): 0 for t in ("put_item", "hold_item")
            for s in ("pending", "done", "failed", "unknown")}
    want.update({("put_item", "done"): 1, ("put_item", "pending"): 1,
                 ("put_item", "unknown"): 1, ("hold_item", "unknown"): 1})
    check("journal entries: every state of every journal tool, 0 included; "
          "done, killed unknown, stale pending unknown, fresh pending",
          j == want, (j, want))
    check("state_up 1 for state_dir",
          series(fams, "sallyport_state_up", "backend") ==
          {"state_dir": 1}, fams.get("sallyport_state_up"))


def check_format(p, fams, error):
    check("sp metrics: exit 0, nothing on stderr, strict exposition format",
          p.returncode == 0 and error is None and fams,
          (p.returncode, error, p.stderr[-500:], p.stdout[-2000:]))
    check("every family has a HELP, counters end in _total",
          all("HELP" in f and (f["TYPE"] != "counter" or
                               n.endswith("_total"))
              for n, f in fams.items()), list(fams))
    check("nothing truncated",
          prom.value(fams, "sallyport_metrics_truncated") == 0)
    for needle in (b"$(id)", b"2 'x'", b"no-thanks", b"p\\n1", b"%2e"):
        check("no argument value %r in the output" % needle,
              needle not in p.stdout)


def rotated(tmp, config, target):
    log = os.path.join(tmp, "audit.jsonl")
    os.rename(log, log + ".1")
    status, _, _ = finish(start(config), INITIALIZE + call(
        1, "put_item", {"id": "after rotation"}) + call(
        2, "drop_item", {"id": "x"}) + request(3, "tools/list"), BUDGET)
    check("a session after the rotation ends 0", status == 0, status)
    want = expected(read_records([log + ".1", log]))
    p, fams, error = metrics(config)
    check("after rotation: the default reads audit.jsonl.1 and audit.jsonl",
          p.returncode == 0 and error is None and
          prom.value(fams, "sallyport_audit_files") == 2, (error, p.stderr))
    compare("rotated, by default", fams, want)
    p, fams, error = metrics(config, "--audit", log + ".1", "--audit", log)
    compare("rotated, with --audit", fams, want)
    p, fams, error = metrics(config, "--audit", log)
    compare("the newest file alone, with --audit", fams,
            expected(read_records([log])))
    return fams


def pending(config):
    s = start(config)
    s.stdin.write(INITIALIZE + call(1, "approve_item", {"id": "op-1"}))
    s.stdin.flush()
    end = time.monotonic() + BUDGET
    fams = {}
    while time.monotonic() < end:
        _, fams, _ = metrics(config)
        if prom.value(fams, "sallyport_approvals_pending") == 1:
            break
        time.sleep(0.1)
    check("a call waiting for an operator: approvals_pending 1",
          prom.value(fams, "sallyport_approvals_pending") == 1,
          fams.get("sallyport_approvals_pending"))
    finish(s, b"", BUDGET)
    _, fams, _ = metrics(config)
    check("its session ended: approvals_pending 0",
          prom.value(fams, "sallyport_approvals_pending") == 0 and
          "sallyport_approvals_pending" in fams,
          fams.get("sallyport_approvals_pending"))


def main():
    tmp = tmpdir()
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    target = Target(tmp, lifetime=600)
    try:
        config = write_policy(tmp, doc(tmp, target.port, state))
        r = subprocess.run([SP, "check", "--config", config],
                           capture_output=True, text=True)
        check("sp check accepts the policy", r.returncode == 0, r.stderr)
        check("the first session ends 65 at its malformed last line",
              first_session(config) == 65)
        killed_session(config, target)
        state_lines(state)
        recs = read_records([os.path.join(tmp, "audit.jsonl")])
        want = expected(recs)
        p, fams, error = metrics(config)
        check_format(p, fams, error)
        compare("one file", fams, want)
        against_the_target(fams, target)
        check_state(fams, want["calls"].get(("get_item", "ok"), 0))
        rotated(tmp, config, target)
        pending(config)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

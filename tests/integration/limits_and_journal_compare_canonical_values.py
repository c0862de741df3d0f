#!/usr/bin/env python3
"""min_interval_ms and the idempotency journal key a call by its values'
canonical form (common/value.h, value_digest()), the form a retyped
confirmation is compared in: written differently, the same value is the
same call.  Real sp, real HTTP target counting what reached it.

- a decimal (scale 2) written "042.50", "42.5", "42.50": one call for
  min_interval_ms (with and without state_dir) and for the journal, whose
  replay carries the first call's key; "1.5" and "1.05" stay apart;
- an integer written 42, 42.0, 42.00: one call; 42 and 420 stay apart;
- an integer cannot be written 042 (not JSON) nor as the string "42"
  (not the schema's type), nor a decimal as a JSON number: refused, and
  nothing reaches the target; so no other spelling of a value reaches
  the keys."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import request, structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402


def doc(tmp, port, state=None):
    params = {"amount": {"type": "decimal", "scale": 2},
              "n": {"type": "integer"}}

    def tool(name, method, extra):
        t = {"name": name, "description": "Canonical values.",
             "target": "api", "scope": "rw",
             "http": {"method": method, "path": "/" + name +
                      "/{amount}/{n}"},
             "params": params}
        t.update(extra)
        return t
    d = {
        "sallyport": 1,
        "server": {"name": "canonical-values"},
        "limits": {"call_timeout_ms": 120000, "dedupe_ms": 0},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port}},
        "tools": [
            tool("spaced", "GET",
                 {"limits": {"min_interval_ms": 3600000}}),
            tool("journaled", "PUT",
                 {"mutating": True,
                  "idempotency": {"window_s": 3600,
                                  "header": "Idempotency-Key"}}),
        ],
        "profiles": {"default": {"scopes": ["rw"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }
    if state is not None:
        d["state_dir"] = state
    return d


class Caller:
    def __init__(self, config):
        self.s = Session(config)
        self.next = 100

    def call(self, tool, amount, n, raw=None):
        """raw: the arguments as JSON text, for what json.dumps cannot
        write (42.0 stays 42.0 there, but 042 needs raw text)."""
        self.next += 1
        if raw is None:
            self.s.call(self.next, tool, {"amount": amount, "n": n})
        else:
            line = request(self.next, "tools/call",
                           {"name": tool, "arguments": "@ARGS@"})
            self.s.send(line.replace(b'"@ARGS@"', raw.encode()))
        got = self.s.wait([self.next]).get(self.next)
        return got[0] if got else {}


def paths(target, prefix):
    return [r["path"] for r in target.requests()
            if r["path"].startswith(prefix)]


def sc(answer):
    return structured((answer, 0) if answer else None)


def spaced(c, target, label):
    first = sc(c.call("spaced", "042.50", 7))
    again = [sc(c.call("spaced", a, 7)) for a in ("42.5", "42.50")]
    other = sc(c.call("spaced", "1.05", 7))
    check("%s: min_interval_ms: the first decimal call is sent" % label,
          first.get("outcome") == "ok", first)
    check("%s: min_interval_ms: \"42.5\" and \"42.50\" are \"042.50\" "
          "again: denied" % label,
          [a.get("outcome") for a in again] == ["denied"] * 2 and
          all("min_interval_ms" in a.get("message", "") for a in again),
          again)
    check("%s: min_interval_ms: another amount is another call" % label,
          other.get("outcome") == "ok", other)
    ints = [sc(c.call("spaced", "3", None, raw='{"amount":"3","n":%s}' % t))
            for t in ("42", "42.0", "42.00", "420")]
    check("%s: min_interval_ms: 42.0 and 42.00 are 42 again, 420 is not"
          % label, [a.get("outcome") for a in ints] ==
          ["ok", "denied", "denied", "ok"], ints)
    sent = paths(target, "/spaced/")
    check("%s: min_interval_ms: four requests reached the target, each "
          "written canonically" % label,
          sorted(sent) == sorted(["/spaced/42.50/7", "/spaced/1.05/7",
                                  "/spaced/3.00/42", "/spaced/3.00/420"]),
          sent)


def journaled(c, target, label):
    first = sc(c.call("journaled", "1.50", -3))
    again = [sc(c.call("journaled", a, -3)) for a in ("1.5", "01.5")]
    other = sc(c.call("journaled", "1.05", -3))
    check("%s: journal: the first call is sent" % label,
          first.get("outcome") == "ok" and "replay" not in first, first)
    check("%s: journal: \"1.5\" and \"01.5\" are \"1.50\": replayed, "
          "not sent" % label,
          all(a.get("replay") is True for a in again), again)
    check("%s: journal: another amount is another call" % label,
          other.get("outcome") == "ok" and "replay" not in other, other)
    sent = paths(target, "/journaled/")
    check("%s: journal: two requests reached the target" % label,
          sorted(sent) == ["/journaled/1.05/-3", "/journaled/1.50/-3"],
          sent)


def refused(c, config, target):
    before = len(target.requests())
    answers = [c.call("spaced", "9", None, raw=raw) for raw in
               ('{"amount":"9","n":"42"}', '{"amount":9.5,"n":1}')]
    check("an integer given as the string \"42\" and a decimal given as a "
          "number are refused by the schema",
          all(a.get("result", {}).get("isError") is True and
              sc(a).get("outcome") != "ok" for a in answers), answers)
    z = Caller(config)
    z.s.send(request(5, "tools/call", {"name": "spaced", "arguments": "@"})
             .replace(b'"@"', b'{"amount":"9","n":042}'))
    z.s.close()
    check("an integer written 042 is not JSON: a parse error",
          b'"code":-32700' in z.s.stdout and b"leading zero" in z.s.stdout,
          z.s.stdout)
    target.flush()
    check("none of them reached the target",
          len(target.requests()) == before, target.requests()[before:])


def main():
    tmp = tmpdir()
    target = Target(tmp, lifetime=600)
    try:
        config = write_policy(tmp, doc(tmp, target.port))
        c = Caller(config)
        spaced(c, target, "in memory")
        journaled(c, target, "in memory")
        refused(c, config, target)
        status = [c.s.close()]
        target.stop()
        target = Target(tmp, name="state-target", lifetime=600)
        state = os.path.join(tmp, "state")
        os.mkdir(state, 0o700)
        config = write_policy(tmp, doc(tmp, target.port, state),
                              name="state.json")
        r = subprocess.run([os.environ.get("SP_BIN", "./sp"), "check",
                            "--config", config], stderr=subprocess.PIPE,
                           text=True)
        check("sp check accepts the policy with its state_dir",
              r.returncode == 0, r.stderr)
        a = Caller(config)
        spaced(a, target, "state_dir")
        status.append(a.s.close())
        b = Caller(config)
        journaled(b, target, "state_dir")
        again = sc(b.call("journaled", "001.500", -3, raw='{"amount":'
                          '"001.50","n":-3.0}'))
        check("state_dir: a later session writing both values otherwise "
              "still gets the replay", again.get("replay") is True, again)
        status.append(b.s.close())
        with open(os.path.join(state, "journal.jsonl")) as f:
            keys = {json.loads(l)["key"] for l in f if l.strip()}
        check("state_dir: the journal holds two keys, one per amount",
              len(keys) == 2, keys)
    finally:
        target.stop()
    check("every session ends with 0", status == [0, 0, 0], status)
    done()


main()

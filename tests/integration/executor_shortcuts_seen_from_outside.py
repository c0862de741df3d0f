#!/usr/bin/env python3
"""The executor's per-call shortcuts seen from outside, with the real
`sp mcp` against http_target.py (docs/internals/executor-engines.md):

- hosts written as numbers other than a dotted quad (127.1, 0x7f.1,
  2130706433, 0177.0.0.1) are not literals to the executor, so they go
  through the resolver; whatever they become, it is the address the rules
  judge, curl connects to, and TLS verifies the certificate against;
- IPv4-mapped IPv6 literals, which skip the resolver, meet the rules of
  the IPv4 address they carry;
- a target without the CA that another target trusts is refused on
  every call, although its calls reuse the other's easy handle (with its
  TLS session cache) and find its kept-alive connection to the same
  host and port;
- a read-only tool's result now leaves before its execution record, and
  a client that hangs up as soon as it has its answers still leaves
  every execution record in the log."""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

NUMERIC = ["127.1", "0x7f.1", "2130706433", "0177.0.0.1"]


def policy(tmp, hosts, port, extra):
    targets, tools = {}, []
    for i, host in enumerate(hosts):
        targets["t%d" % i] = dict({
            "type": "http", "base_url": "https://%s:%d" % (host, port),
            "ca_file": os.path.join(tmp, "cert.pem")}, **extra)
        tools.append({"name": "get%d" % i, "description": "Get %d." % i,
                      "target": "t%d" % i, "scope": "read",
                      "http": {"method": "GET", "path": "/n%d" % i},
                      "params": {}})
    return write_policy(tmp, {
        "sallyport": 1, "server": {"name": "exec-literals"},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
        "profiles": {"default": {"scopes": ["read"]}},
        "targets": targets, "tools": tools})


def run_each(cfg, hosts):
    s = Session(cfg)
    answers = {}
    for i in range(len(hosts)):
        s.call(10 + i, "get%d" % i, {})
        answers[hosts[i]] = structured(s.wait([10 + i]).get(10 + i))
    s.close()
    return answers


def sub(tmp, name):
    path = os.path.join(tmp, name)
    os.mkdir(path)
    return path


def numeric_hosts(tmp):
    """Refused as loopback unless the target allows it; when allowed, the
    request reaches 127.0.0.1 and its certificate (made for 127.0.0.1)
    verifies: curl, the resolver and the rules agree on the address."""
    d = sub(tmp, "numeric")
    target = Target(d, tls=True)
    try:
        got = run_each(policy(d, NUMERIC, target.port, {}), NUMERIC)
        for host in NUMERIC:
            a = got[host]
            check("%s without allow_loopback: refused as loopback" % host,
                  a.get("outcome") == "failed" and
                  "127.0.0.1 of %s is loopback" % host in a.get("message",
                                                                 "") and
                  "not connected" in a.get("message", ""), a)
        check("nothing reached the target", target.requests() == [],
              target.requests())
        got = run_each(policy(d, NUMERIC, target.port,
                              {"allow_loopback": True}), NUMERIC)
        for host in NUMERIC:
            a = got[host]
            check("%s with allow_loopback: 200 over verified TLS" % host,
                  a.get("outcome") == "ok" and
                  a.get("message") == "HTTP 200", a)
        paths = sorted(r["path"] for r in target.requests())
        check("each numeric host's request arrived once",
              paths == ["/n%d" % i for i in range(len(NUMERIC))], paths)
    finally:
        target.stop()


def mapped_literals(tmp):
    d = sub(tmp, "mapped")
    target = Target(d, tls=True)
    hosts = ["[::ffff:127.0.0.1]", "[::ffff:169.254.169.254]",
             "[::ffff:a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]"]
    try:
        got = run_each(policy(d, hosts, target.port,
                              {"allow_private": True}), hosts)
        a = got[hosts[0]]
        check("::ffff:127.0.0.1 is loopback, refused",
              a.get("outcome") == "failed" and
              "is loopback" in a.get("message", ""), a)
        for host in hosts[1:]:
            a = got[host]
            check("%s is cloud metadata, refused" % host,
                  a.get("outcome") == "failed" and
                  "cloud metadata" in a.get("message", "") and
                  "not connected" in a.get("message", ""), a)
        check("nothing reached the target", target.requests() == [],
              target.requests())
    finally:
        target.stop()


def trust_not_carried(tmp, rounds=3):
    d = sub(tmp, "trust")
    target = Target(d, tls=True)
    base = "https://127.0.0.1:%d" % target.port
    cfg = write_policy(d, {
        "sallyport": 1, "server": {"name": "exec-trust"},
        "audit": {"path": os.path.join(d, "audit.jsonl")},
        "profiles": {"default": {"scopes": ["read"]}},
        "targets": {
            "trusted": {"type": "http", "base_url": base,
                        "ca_file": os.path.join(d, "cert.pem")},
            "untrusted": {"type": "http", "base_url": base}},
        "tools": [{"name": n, "description": "Get.", "target": n,
                   "scope": "read",
                   "http": {"method": "GET", "path": "/" + n + "/{v}"},
                   "params": {"v": {"type": "string"}}}
                  for n in ("trusted", "untrusted")]})
    try:
        s = Session(cfg)
        outcomes = []
        for i in range(rounds):
            for j, name in enumerate(("trusted", "untrusted")):
                rid = 10 * i + j + 1
                s.call(rid, name, {"v": "r%d \"q\" $(id)" % i})
                a = structured(s.wait([rid]).get(rid))
                outcomes.append((name, a.get("outcome"),
                                 a.get("message", "")[:60]))
        s.close()
        want = [("trusted", "ok"), ("untrusted", "failed")] * rounds
        check("trusted, untrusted, ... in turn: only the trusted calls "
              "verify", [(n, o) for n, o, _ in outcomes] == want, outcomes)
        check("the untrusted calls failed on the certificate",
              all("certificate" in m or "SSL" in m
                  for n, _, m in outcomes if n == "untrusted"), outcomes)
        reqs = target.requests()
        check("only the trusted requests reached the target, over one "
              "connection", [r["path"].split("/")[1] for r in reqs] ==
              ["trusted"] * rounds and
              len(set(r["peer_port"] for r in reqs)) == 1,
              [(r["path"], r["peer_port"]) for r in reqs])
    finally:
        target.stop()


def hang_up_after_answers(tmp, sessions=4, calls=6):
    """Every answered read-only call has its execution record, although
    the client closes its input the moment the last answer arrives."""
    d = sub(tmp, "hangup")
    target = Target(d, tls=True)
    hosts = ["127.0.0.1"] * calls
    cfg = policy(d, hosts, target.port, {})
    missing = []
    try:
        for n in range(sessions):
            s = Session(cfg)
            ids = [100 + i for i in range(calls)]
            for i, rid in enumerate(ids):
                s.call(rid, "get%d" % i, {})
            got = s.wait(ids)
            s.close()
            answered = len([r for r in ids if
                            structured(got.get(r)).get("outcome") == "ok"])
            with open(os.path.join(d, "audit.jsonl")) as f:
                recs = [json.loads(line) for line in f if line.strip()]
            last = recs[-1]["session"]
            execs = [r for r in recs if r["session"] == last and
                     r["kind"] == "execution"]
            end = [r for r in recs if r["session"] == last and
                   r["kind"] == "session-end"]
            if answered != calls or len(execs) != calls or \
                    not end or end[0].get("executions") != calls:
                missing.append((n, answered, len(execs),
                                end[0].get("executions") if end else None))
        check("%d sessions x %d read-only calls: each answered call has its "
              "execution record, counted at session end" % (sessions, calls),
              missing == [], missing)
    finally:
        target.stop()


def main():
    tmp = tmpdir()
    numeric_hosts(tmp)
    mapped_literals(tmp)
    trust_not_carried(tmp)
    hang_up_after_answers(tmp)
    done()


if __name__ == "__main__":
    main()

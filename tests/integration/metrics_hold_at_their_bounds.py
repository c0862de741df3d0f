#!/usr/bin/env python3
"""sp metrics (docs/sp.1, METRICS) on what a long-lived or crafted host
leaves: every bound holds and says so, and the gauges an alert watches
are always there.

- past METRICS_SERIES_MAX series of calls, sallyport_metrics_truncated is
  1 and the health gauges (audit_files, audit_chain_intact,
  approvals_pending, state_up) still have their sample;
- 4096 waiting calls of killed sessions do not hide a live session's
  waiting call;
- a journal.jsonl with 65536 keys past their window does not crowd out
  a live entry;
- numbers out of a double's exact range (ts 1e19, day 1e300, call 1e300)
  are not taken as counts or times;
- a counter summed from crafted "repeated" values stops at the top, it
  does not wrap;
- a session id with "../" names no path: a socket outside state_dir
  does not count as a live session;
- a FIFO among the audit files is refused at once (exit 66), not waited
  on for ever."""
import json
import os
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest import prom  # noqa: E402
from sptest.audit import write_chained  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

LIVE = "0123456789abcdef"


def doc(tmp):
    def tool(name, **kw):
        t = {"name": name, "description": "Bounds tool.", "target": "api",
             "scope": "rw", "http": {"method": "POST", "path": "/x/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}}}
        t.update(kw)
        return t
    state = os.path.join(tmp, "state")
    os.makedirs(os.path.join(state, "approvals"), 0o700, exist_ok=True)
    return {
        "sallyport": 1,
        "server": {"name": "bounds"},
        "limits": {"call_timeout_ms": 5000},
        "state_dir": state,
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:9"}},
        "tools": [
            tool("put_item", mutating=True,
                 idempotency={"window_s": 3600}),
            tool("day_item", limits={"per_day": 5}),
            tool("approve_item", mutating=True, confirm={
                "message": "Approve {id}", "timeout_s": 120,
                "via": "operator", "approvers": {"uid": [os.getuid()]}}),
        ],
        "profiles": {"default": {"scopes": ["rw"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }


def metrics(config, *more, timeout=300):
    r = subprocess.run([SP, "metrics", "--config", config] + list(more),
                       capture_output=True, env=sp_env(), timeout=timeout)
    try:
        return r, prom.parse(r.stdout)
    except ValueError as e:
        return r, {"error": str(e)}


def samples(fams, name):
    return fams.get(name, {}).get("samples", [])


def many_series(tmp, config):
    recs = [("a%04x" % i, "execution", {"tool": "t%04d" % i,
                                        "outcome": "ok"})
            for i in range(1100)]
    path = os.path.join(tmp, "many.jsonl")
    write_chained(path, recs)
    r, fams = metrics(config, "--audit", path)
    check("1100 tools' calls: exit 0, strict format, truncated 1",
          r.returncode == 0 and "error" not in fams and
          prom.value(fams, "sallyport_metrics_truncated") == 1,
          (r.returncode, fams.get("error"), r.stderr[-300:]))
    missing = [n for n in ("sallyport_audit_files",
                           "sallyport_audit_chain_intact",
                           "sallyport_approvals_pending",
                           "sallyport_state_up") if not samples(fams, n)]
    check("past the series bound the health gauges keep their sample",
          missing == [] and
          prom.value(fams, "sallyport_audit_chain_intact") == 1, missing)


def live_socket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    return s


def asked(session, call=1):
    return (session, "confirmation", {"tool": "approve_item", "call": call,
                                      "decision": "asked"})


def waiting_calls(tmp, config):
    state = os.path.join(tmp, "state")
    recs = [asked("%016x" % i) for i in range(4096)] + [asked(LIVE)]
    path = os.path.join(tmp, "asked.jsonl")
    write_chained(path, recs)
    sock = live_socket(os.path.join(state, "approvals", LIVE + ".sock"))
    try:
        r, fams = metrics(config, "--audit", path)
        check("4096 killed sessions' waiting calls do not hide a live one",
              r.returncode == 0 and
              prom.value(fams, "sallyport_approvals_pending") == 1,
              (r.returncode, samples(fams, "sallyport_approvals_pending")))
    finally:
        sock.close()
        os.unlink(os.path.join(state, "approvals", LIVE + ".sock"))
    # a socket outside state_dir, named by a session id with ../
    outside = live_socket(os.path.join(tmp, "x.sock"))
    path = os.path.join(tmp, "dots.jsonl")
    write_chained(path, [asked("../../x")])
    try:
        r, fams = metrics(config, "--audit", path)
        check("a session id with ../ names no path outside state_dir",
              r.returncode == 0 and
              prom.value(fams, "sallyport_approvals_pending") == 0,
              samples(fams, "sallyport_approvals_pending"))
    finally:
        outside.close()


def journal_line(key, state, ts):
    return json.dumps({"key": key, "state": state, "ts": ts, "call": 1,
                       "tool": "put_item", "summary": "s"})


def old_journal(tmp, config):
    now = int(time.time() * 1000)
    old = now - 30 * 86400 * 1000
    state = os.path.join(tmp, "state")
    with open(os.path.join(state, "journal.jsonl"), "w") as f:
        for i in range(65536):
            f.write(journal_line("%064x" % i, "done", old) + "\n")
        f.write(journal_line("f" * 64, "pending", now) + "\n")
        f.write(journal_line("e" * 64, "pending", 1e19) + "\n")
        f.write('{"key":"%s","state":"done","ts":1e300,"call":1e300,'
                '"tool":"put_item","summary":"s"}\n' % ("d" * 64))
    with open(os.path.join(state, "limits.jsonl"), "w") as f:
        f.write('{"day":1e300,"tool":"day_item","who":"uid:1"}\n')
        f.write('{"day":%d.5,"tool":"day_item","who":"uid:2"}\n'
                % (now // 86400000))
    r, fams = metrics(config, "--audit", os.path.join(tmp, "dots.jsonl"))
    j = {(l["tool"], l["state"]): v for l, v in
         samples(fams, "sallyport_journal_entries")}
    check("65536 keys past their window do not crowd out a live entry",
          j.get(("put_item", "pending")) == 1 and
          prom.value(fams, "sallyport_metrics_truncated") == 0,
          (j, prom.value(fams, "sallyport_metrics_truncated")))
    check("ts 1e19 and 1e300 are no times: no entry of theirs counted",
          sum(j.values()) == 1, j)
    check("day 1e300 and a fractional day count nothing",
          samples(fams, "sallyport_limit_spent") == [],
          samples(fams, "sallyport_limit_spent"))


def saturated(tmp, config):
    top = 9007199254740991
    recs = [("%016x" % i, "rejection", {"method": "tools/call",
                                        "reason": "invalid-arguments",
                                        "repeated": top, "code": -32602})
            for i in range(2049)]
    path = os.path.join(tmp, "repeated.jsonl")
    write_chained(path, recs)
    r, fams = metrics(config, "--audit", path)
    got = prom.value(fams, "sallyport_refusals_total",
                     reason="invalid-arguments")
    check("a sum past 2^64 stops at the top, it does not wrap",
          r.returncode == 0 and got >= 2.0 ** 64 - 2 ** 12, got)


def fifo(tmp, config):
    path = os.path.join(tmp, "audit.fifo")
    os.mkfifo(path, 0o600)
    start = time.monotonic()
    try:
        r = subprocess.run([SP, "metrics", "--config", config, "--audit",
                            path], capture_output=True, env=sp_env(),
                           timeout=60)
        status, err = r.returncode, r.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        status, err = None, "still waiting after 60 s"
    check("a FIFO among the audit files is refused at once, named (66)",
          status == 66 and path in err and "regular file" in err,
          (status, err, time.monotonic() - start))


def main():
    tmp = tmpdir("sp-metrics-bounds-")
    config = write_policy(tmp, doc(tmp))
    r = subprocess.run([SP, "check", "--config", config],
                       capture_output=True, env=sp_env())
    check("sp check accepts the policy", r.returncode == 0, r.stderr)
    many_series(tmp, config)
    waiting_calls(tmp, config)
    old_journal(tmp, config)
    saturated(tmp, config)
    fifo(tmp, config)
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""HTTP actions end to end (issue 6): the real `sp mcp` against
http_target.py on loopback.  The request is built only from the tool's
templates, the credential is added by the executor alone and leaks
nowhere, redirects to another host are not followed, bodies are cut while
the executor's memory stays bounded, Retry-After and the budget are
honoured, outcomes say what is known, and calls run side by side."""
import json
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy, write_secret  # noqa: E402
from sptest.procfs import vm_hwm_kib  # noqa: E402
from sptest.run import SP_TEST, Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target, free_port  # noqa: E402

TOKEN = b"tok-9f8e7d6c5b4a-SECRET"
BIG = 5 * 1024 * 1024

HOSTILE = ["../admin", "%2e%2e", "a\r\nX-Injected: yes",
           "q\"uote'$(id)`x`", "h\u00e9llo-\u00fcn\u00ef \u6f22"]


def tool(name, target, method, path, params, **extra):
    t = {"name": name, "description": "Test tool %s." % name,
         "target": target, "scope": "read",
         "http": dict({"method": method, "path": path},
                      **extra.pop("http", {})),
         "params": params}
    t.update(extra)
    return t


def make_policy(tmp, port, dead_port, call_timeout_ms=8000):
    string = {"type": "string", "maxLength": 200}
    opt = {"type": "string", "maxLength": 200, "required": False}
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "exec-http"},
        "limits": {"call_timeout_ms": call_timeout_ms},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
        "credentials": {"tok": {"type": "bearer", "file": write_secret(
            tmp, "api.token", TOKEN + b"\n")}},
        "targets": {
            "api": {"type": "http", "base_url": "http://127.0.0.1:%d" % port,
                    "credential": "tok", "follow_redirects": True},
            "named": {"type": "http",
                      "base_url": "http://localhost:%d" % port},
            "dead": {"type": "http",
                     "base_url": "http://127.0.0.1:%d" % dead_port}},
        "tools": [
            tool("get_item", "api", "GET", "/items/{id}",
                 {"id": string, "q": opt, "note": opt},
                 http={"query": {"q": "{q}"},
                       "headers": {"X-Note": "{note}"}}),
            tool("big", "api", "GET", "/big/{n}",
                 {"n": {"type": "integer", "minimum": 1}}),
            tool("retry", "api", "GET", "/retry-after/{v}/{tag}",
                 {"v": string, "tag": string}),
            tool("slow", "api", "GET", "/slow/{ms}",
                 {"ms": {"type": "integer", "minimum": 1}},
                 timeout_ms=1500),
            tool("redirect", "api", "GET", "/redirect/302",
                 {"to": string}, http={"query": {"to": "{to}"}}),
            tool("post_close", "api", "POST", "/close", {"name": string},
                 http={"body": {"name": "{name}"}}, mutating=True),
            tool("by_name", "named", "GET", "/named/{v}", {"v": string}),
            tool("refused", "dead", "GET", "/x/{v}", {"v": string}),
        ],
        "profiles": {"default": {"scopes": ["read"]}},
    })


def message(answer):
    return structured(answer).get("message", "")


def outcome(answer):
    return structured(answer).get("outcome")


def phase_big(cfg, api):
    """A 5 MB body is cut; the executor never holds it."""
    s = Session(cfg)
    pid = s.executor_pid()
    before = vm_hwm_kib(pid)
    s.call(1, "big", {"n": BIG})
    got = s.wait([1])
    after = vm_hwm_kib(pid)
    s.close()
    a = got.get(1)
    check("5 MB body: outcome ok, the message says it was cut",
          outcome(a) == "ok" and "body cut" in message(a) and
          "of %d bytes" % BIG in message(a), a)
    check("5 MB body: the answer line stays small (< 512 KiB)",
          len(s.stdout) < 512 * 1024, len(s.stdout))
    check("5 MB body: executor VmHWM grew by less than 2 MiB",
          before is not None and after is not None and
          after - before < 2048, (before, after))
    check("5 MB body: the target sent it all", any(
        r["path"] == "/big/%d" % BIG for r in api.requests()))


def phase_many(cfg, api, other, tmp):
    s = Session(cfg)
    sent = {}
    sent[10] = s.call(10, "slow", {"ms": 20000})
    for i, v in enumerate(HOSTILE):
        sent[20 + i] = s.call(20 + i, "get_item", {"id": v, "q": v})
    sent[30] = s.call(30, "get_item", {"id": "n", "note": "ok\r\nX-Injected: yes"})
    sent[31] = s.call(31, "get_item", {"id": "m", "note": "fine \"note\""})
    sent[40] = s.call(40, "retry", {"v": "2", "tag": "two"})
    sent[41] = s.call(41, "retry", {"v": "120", "tag": "long"})
    sent[50] = s.call(50, "redirect", {
        "to": "http://localhost:%d/landing" % other.port})
    sent[60] = s.call(60, "post_close", {"name": "x\"y $(z)"})
    sent[70] = s.call(70, "refused", {"v": "y"})
    sent[80] = s.call(80, "by_name", {"v": "z"})
    got = s.wait(list(sent), timeout=30)
    status = s.close()
    check("the session ends with 0 and every call was answered",
          status == 0 and set(got) == set(sent),
          (status, sorted(got), s.stderr.decode("utf-8", "replace")))
    reqs = api.requests()

    # Templates only: a value stays one path segment, one query value.
    for i, v in enumerate(HOSTILE):
        want = "/items/%s?q=%s" % (urllib.parse.quote(v, safe=""),
                                   urllib.parse.quote(v, safe=""))
        check("value %r stays data: path %s" % (v, want),
              any(r["path"] == want for r in reqs) and
              outcome(got.get(20 + i)) == "ok",
              [r["path"] for r in reqs if r["path"].startswith("/items/")])
    check("no request left /items/ or carried an injected header",
          all(not r["path"].startswith("/admin") for r in reqs) and
          all(k.lower() != "x-injected" for r in reqs for k, _ in
              r["headers"]), reqs)
    check("CR/LF in a header value: refused, no request sent",
          outcome(got.get(30)) == "invalid" and
          not any(r["path"].startswith("/items/n") for r in reqs),
          got.get(30))
    check("a header value with quotes arrives as one header",
          any(r["path"] == "/items/m" and ["X-Note", "fine \"note\""] in
              r["headers"] for r in reqs), reqs)

    # The credential: at the target, nowhere else.
    auth = [dict(r["headers"]).get("Authorization") for r in reqs
            if r["path"].startswith("/items/")]
    check("the bearer token arrives (one trailing newline trimmed)",
          auth and all(a == "Bearer " + TOKEN.decode() for a in auth), auth)
    with open(os.path.join(tmp, "audit.jsonl"), "rb") as f:
        audit = f.read()
    check("the token is in no stdout, stderr or audit record",
          TOKEN not in s.stdout and TOKEN not in s.stderr and
          TOKEN not in audit)
    lines = [json.loads(l) for l in audit.splitlines()]
    first_intent = {}
    for i, l in enumerate(lines):
        if l["kind"] == "intent":
            first_intent.setdefault(l.get("call"), i)
    execs = [(i, l.get("call")) for i, l in enumerate(lines)
             if l["kind"] == "execution"]
    check("every execution was preceded by its intent in the audit log",
          len(execs) >= 8 and all(first_intent.get(c, len(lines)) < i
                                  for i, c in execs), (first_intent, execs))

    # Redirects, Retry-After, budget, outcomes.
    check("redirect to another host: not followed, 302 returned",
          other.requests() == [] and outcome(got.get(50)) == "ok" and
          "302" in message(got.get(50)), (other.requests(), got.get(50)))
    two = [r for r in reqs if r["path"] == "/retry-after/2/two"]
    waited = got[40][1] - sent[40] if 40 in got else 0
    check("503 Retry-After: 2 waits once, then ok (%.2f s)" % waited,
          len(two) == 2 and outcome(got.get(40)) == "ok" and
          "HTTP 200" in message(got.get(40)) and 1.9 <= waited < 30,
          (two, got.get(40)))
    long_ = [r for r in reqs if r["path"] == "/retry-after/120/long"]
    quick = got[41][1] - sent[41] if 41 in got else 99
    check("503 Retry-After: 120 returns at once saying so (%.2f s)" % quick,
          len(long_) == 1 and "wait 120 s" in message(got.get(41)) and
          quick < 30, got.get(41))	# far from 120 s on any machine
    slow = got[10][1] - sent[10] if 10 in got else 0
    check("a slow server hits the 1500 ms budget, named (%.2f s)" % slow,
          "1500 ms" in message(got.get(10)) and 1.3 < slow < 15 and
          outcome(got.get(10)) in ("failed", "unknown"), got.get(10))
    check("the server closing after a POST: unknown",
          outcome(got.get(60)) == "unknown" and
          any(r["method"] == "POST" and r["path"] == "/close" and
              json.loads(r["body"]) == {"name": "x\"y $(z)"}
              for r in reqs), (got.get(60), reqs))
    check("a host name resolves inside the executor's sandbox",
          outcome(got.get(80)) == "ok" and
          any(r["path"] == "/named/z" for r in reqs), got.get(80))
    check("connection refused: failed",
          outcome(got.get(70)) == "failed", got.get(70))
    check("calls run side by side: quick answers came before the slow one",
          s.order.index(10) > s.order.index(20), s.order)


def audit_records(path):
    """The log's records, one JSON object per line."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def phase_no_ack(tmp, dead_port):
    """The broker never acknowledges the intent: nothing is sent."""
    sub = os.path.join(tmp, "noack")
    os.mkdir(sub)
    api = Target(sub)
    try:
        cfg = make_policy(sub, api.port, dead_port, call_timeout_ms=1200)
        s = Session(cfg, binary=SP_TEST, hook="broker:no-ack")
        s.call(1, "get_item", {"id": "one"})
        got = s.wait([1])
        s.close()
        check("no audit ack: failed, saying the audit did not confirm",
              outcome(got.get(1)) == "failed" and
              "audit" in message(got.get(1)), got.get(1))
        check("no audit ack: the target received nothing",
              api.requests() == [], api.requests())
        kinds = [(r.get("kind"), r.get("outcome")) for r in
                 audit_records(os.path.join(sub, "audit.jsonl"))
                 if r.get("call") == 1]
        check("no audit ack: the intent written late is followed by an "
              "execution record saying the call failed",
              kinds == [("intent", None), ("execution", "failed")], kinds)
    finally:
        api.stop()


def phase_tls(tmp):
    """HTTPS under the executor's sandbox: the CA file read before it,
    verification always on."""
    sub = os.path.join(tmp, "tls")
    os.mkdir(sub)
    api = Target(sub, tls=True)
    try:
        base = "https://127.0.0.1:%d" % api.port
        cfg = write_policy(sub, {
            "sallyport": 1, "server": {"name": "exec-tls"},
            "credentials": {"tok": {"type": "bearer", "file": write_secret(
                sub, "api.token", TOKEN + b"\n")}},
            "targets": {
                "secure": {"type": "http", "base_url": base,
                           "credential": "tok",
                           "ca_file": os.path.join(sub, "cert.pem")},
                "untrusted": {"type": "http", "base_url": base,
                              "credential": "tok"}},
            "tools": [tool("trusted_get", "secure", "GET", "/secure/{v}",
                           {"v": {"type": "string"}}),
                      tool("untrusted_get", "untrusted", "GET",
                           "/untrusted/{v}", {"v": {"type": "string"}})],
            "profiles": {"default": {"scopes": ["read"]}}})
        s = Session(cfg)
        s.call(1, "trusted_get", {"v": "a"})
        s.call(2, "untrusted_get", {"v": "b"})
        got = s.wait([1, 2])
        status = s.close()
        reqs = api.requests()
        check("HTTPS with the target's CA file: ok, token sent",
              status == 0 and outcome(got.get(1)) == "ok" and
              any(r["path"] == "/secure/a" and
                  ["Authorization", "Bearer " + TOKEN.decode()] in
                  r["headers"] for r in reqs), (got.get(1), reqs))
        check("HTTPS without it: failed, nothing reached the server",
              outcome(got.get(2)) == "failed" and
              not any(r["path"].startswith("/untrusted") for r in reqs),
              (got.get(2), reqs))
    finally:
        api.stop()


def phase_missing_credential(tmp, port, dead_port):
    """A token file that is no regular file: the executor refuses to start."""
    sub = os.path.join(tmp, "badcred")
    os.mkdir(sub)
    cfg = make_policy(sub, port, dead_port)
    os.unlink(os.path.join(sub, "api.token"))
    os.mkfifo(os.path.join(sub, "api.token"), 0o600)
    s = Session(cfg)
    status = s.close()
    err = s.stderr.decode("utf-8", "replace")
    check("a FIFO as token file: sp mcp ends non-zero, naming the file",
          status != 0 and "api.token" in err, (status, err))


def main():
    tmp = tmpdir()
    api = Target(tmp, "api")
    other = Target(tmp, "other")
    dead_port = free_port()
    try:
        cfg = make_policy(tmp, api.port, dead_port)
        phase_big(cfg, api)
        phase_many(cfg, api, other, tmp)
        phase_no_ack(tmp, dead_port)
        phase_tls(tmp)
        phase_missing_credential(tmp, api.port, dead_port)
    finally:
        api.stop()
        other.stop()
    done()


main()

#!/usr/bin/env python3
"""A target that reflects the request cannot hand the credential to the
client (issue 14, finding 1): the real `sp mcp` calls a local HTTP target
that echoes its request headers raw, JSON-escaped, percent-encoded, in a
Location and a Content-Type, and after a padding that puts the secret
across the result's cut, for each credential type (bearer, basic,
header).  The target must have received each secret (else the test proves
nothing); sp's stdout and the audit log must hold none of them, in any
form, nor a 4-character prefix of one; each such result says
"redacted": true and every text of it is "[credential withheld]" (issue
29: which bytes matched would answer a guess).  At most 3 calls a session:
the executor takes no more once 3 results withheld a credential."""
import base64
import json
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import strings, structured  # noqa: E402
from sptest.policy import write_policy, write_secret  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import REFLECTIONS, Target  # noqa: E402

MARKER = "[credential withheld]"
# Quotes, '/', '+', '$()', spaces and multibyte text: each form differs.
SECRETS = {
    "tok": "Zq7-x/9+w~Tk3$(id)\"q",
    "bas": "alice:Pw0d p@ss/w0rd+\u00e9\u6f22",
    "hdr": "Hv9-\u00e9\u6f22/Q+\"=;`x`",
}
ROUTES = list(REFLECTIONS)
# result_max_chars 1024: a 4096-byte record field, 1024 characters shown.
# 1020 four-byte characters before the secret put it across both cuts.
PAD = 1020


def forms(secret):
    """Every spelling a reflecting target might use, as text."""
    raw = secret.encode()
    out = {secret, urllib.parse.quote(raw, safe=""),
           urllib.parse.quote_plus(raw, safe=""),
           json.dumps(secret)[1:-1], json.dumps(secret)[1:-1]
           .replace("/", "\\/"), json.dumps(secret, ensure_ascii=False)[1:-1]}
    return out


def needles():
    """name -> the forms of what must never be shown."""
    out = {}
    for name, secret in SECRETS.items():
        f = forms(secret)
        if name == "bas":
            f |= {base64.b64encode(secret.encode()).decode()}
            f |= forms(secret.split(":", 1)[1])
        out[name] = f
    return out


def count_in(text, name):
    """Occurrences of any form of a secret, and of a 4-character prefix."""
    full = sum(text.count(f) for f in needles()[name])
    prefix = sum(text.count(f[:4]) for f in needles()[name])
    return full, prefix


def make_policy(tmp, port, audit):
    creds = {
        "tok": {"type": "bearer", "file": write_secret(
            tmp, "tok", SECRETS["tok"].encode() + b"\n")},
        "bas": {"type": "basic", "file": write_secret(
            tmp, "bas", SECRETS["bas"].encode())},
        "hdr": {"type": "header", "header_name": "X-Api-Key",
                "file": write_secret(tmp, "hdr", SECRETS["hdr"].encode())},
    }
    targets = {n: {"type": "http", "base_url": "http://127.0.0.1:%d" % port,
                   "credential": n} for n in creds}
    tools = [{"name": "reflect_" + n, "description": "Echo the request.",
              "target": n, "scope": "read",
              "http": {"method": "GET", "path": "/r/{how}"},
              "params": {"how": {"type": "string", "enum": ROUTES}}}
             for n in creds]
    return write_policy(tmp, {
        "sallyport": 1, "server": {"name": "exec-redact"},
        "limits": {"call_timeout_ms": 10000, "result_max_chars": 1024},
        "audit": {"path": audit},
        "credentials": creds, "targets": targets, "tools": tools,
        "profiles": {"default": {"scopes": ["read"]}}})


def main():
    tmp = tmpdir()
    target = Target(tmp, reflect=PAD)	# it echoes the headers it got
    audit = os.path.join(tmp, "audit.jsonl")
    policy = make_policy(tmp, target.port, audit)
    calls = {}
    got = {}
    stdout = ""
    todo = [(name, how) for name in SECRETS for how in ROUTES]
    rid = 10
    while todo:
        s = Session(policy)
        ids = []
        for name, how in todo[:3]:
            s.call(rid, "reflect_" + name, {"how": how})
            calls[rid] = (name, how)
            ids.append(rid)
            rid += 1
        todo = todo[3:]
        got.update(s.wait(ids, timeout=60))
        s.close()
        stdout += s.stdout.decode("utf-8", "replace")
    target.stop()
    check("every call answered", len(got) == len(calls),
          sorted(set(calls) - set(got)))
    seen = "".join(k + ": " + v + "\n" for r in target.requests()
                   for k, v in r["headers"])
    for name, secret in SECRETS.items():
        sent = secret if name != "bas" else \
            base64.b64encode(secret.encode()).decode()
        check("the target received the %s credential on each call" % name,
              seen.count(sent) == len(ROUTES), seen.count(sent))
    try:
        with open(audit, encoding="utf-8", errors="replace") as f:
            audit_text = f.read()
    except OSError:
        audit_text = ""
    check("the audit log was written", audit_text.count("\n") >= len(calls),
          len(audit_text))
    for name in SECRETS:
        full, prefix = count_in(stdout, name)
        print("# %s: %d occurrences, %d prefixes on stdout"
              % (name, full, prefix))
        check("no form of the %s credential on stdout" % name, full == 0,
              full)
        check("no 4-character prefix of it on stdout either", prefix == 0,
              prefix)
        full, prefix = count_in(audit_text, name)
        check("none in the audit log", full == 0 and prefix == 0,
              (full, prefix))
    for rid, (name, how) in sorted(calls.items()):
        sc = structured(got.get(rid))
        text = "\n".join(strings(sc))
        views = [text, urllib.parse.unquote(text),
                 urllib.parse.unquote_plus(text)]
        full = sum(count_in(v, name)[0] for v in views)
        http = sc.get("http", {})
        check("%s via %s: ok, redacted, every text withheld, nothing "
              "decodes to it" % (name, how), sc.get("outcome") == "ok" and
              sc.get("redacted") is True and full == 0 and
              sc.get("message") == MARKER and
              http.get("body") == MARKER and
              http.get("content_type") == MARKER and
              http.get("body_total_bytes") == len(MARKER),
              json.dumps(sc)[-600:])
    sc = structured(got.get(min(r for r, c in calls.items()
                                if c == ("tok", "pad"))))
    http = sc.get("http", {})
    check("the padded body is withheld whole, its length with it",
          http.get("body") == MARKER and http.get("truncated") is False,
          json.dumps(http)[-200:])
    done()


main()

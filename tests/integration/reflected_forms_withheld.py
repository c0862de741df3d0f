#!/usr/bin/env python3
"""Redaction sees what the client sees and answers no guess (issue 29,
findings 2 and 3), through the real `sp mcp` against a local HTTP target
(this file, run with --log, is the target) that sends the credential it
received back in one of 44 forms: case changes, hex, base64 and base64url
of the raw token and of user:pass (alone and inside a longer encoded
text), base64 of base64, HTML entities, percent-encoding once and twice,
split by whitespace -- for each credential type (bearer, basic, header).
No form may reach the client, and each such result is withheld whole.
Then: the token in full-width letters (the frontend folds them into
ASCII); ten guesses in one reflected search, the password among them or
not (the withheld result is the same whichever guess it is, and the
session takes no more calls after 3 withheld results, which the target
proves by not seeing the 4th); and a credential too short to withhold
safely, refused by `sp check` and by `sp mcp` naming it, never its
value.  "# shown" lines give how many forms per type reached the
client."""
import base64
import html
import html.entities
import json
import os
import subprocess
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, strings, structured  # noqa: E402
from sptest.policy import write_policy, write_secret  # noqa: E402
from sptest.run import SP, Session, finish, sp_env, start, tmpdir  # noqa
from sptest.tap import check, done  # noqa: E402

MARKER = "[credential withheld]"
# Quotes, '/', '+', '$()', a space, a newline-free multibyte tail.
SECRETS = {
    "tok": "Zq7-x/9+w~Tk3$(id)\"q",
    "bas": "alice:Pw0d p@ss/w0rd+\u00e9\u6f22",
    "hdr": "Hv9-\u00e9\u6f22/Q+\"=;`x`-7",
}
GUESS_TOOL = "search_bas"


def b64(b):
    return base64.b64encode(b)


def b64url(b):
    return base64.urlsafe_b64encode(b)


def pct_all(b, lower=False):
    return "".join(("%%%02x" if lower else "%%%02X") % c for c in b).encode()


def entities(s, how):
    out = []
    for i, ch in enumerate(s):
        if how == "dec":
            out.append("&#%d;" % ord(ch))
        elif how == "hex":
            out.append("&#x%x;" % ord(ch))
        elif how == "HEX":
            out.append("&#X%X;" % ord(ch))
        elif how == "pad":
            out.append("&#%07d;" % ord(ch))
        elif how == "mixed":
            out.append(ch if i % 2 else "&#%d;" % ord(ch))
        elif how == "named":
            out.append("&%s" % NAMED[ch] if ch in NAMED else
                       "&#%d;" % ord(ch))
    return "".join(out).encode()


# HTML5's shortest name of each ASCII character that has one.
NAMED = {}
for _n, _v in sorted(html.entities.html5.items(), key=lambda x: len(x[0])):
    if _n.endswith(";") and len(_v) == 1 and ord(_v) < 128:
        NAMED.setdefault(_v, _n)


def alternate(s):
    return "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(s))


def every(s, n, sep):
    return sep.join(s[i:i + n] for i in range(0, len(s), n))


# name -> (family, function of the subject's bytes); 44 forms.
FORMS = {
    "upper": ("case", lambda b: b.decode().upper().encode()),
    "lower": ("case", lambda b: b.decode().lower().encode()),
    "swap": ("case", lambda b: b.decode().swapcase().encode()),
    "alternate": ("case", lambda b: alternate(b.decode()).encode()),
    "upper-split": ("case", lambda b: every(b.decode().upper(), 5,
                                            "\n").encode()),
    "hex": ("hex", lambda b: b.hex().encode()),
    "HEX": ("hex", lambda b: b.hex().upper().encode()),
    "hex-spaced": ("hex", lambda b: b.hex(" ").encode()),
    "HEX-lines": ("hex", lambda b: every(b.hex().upper(), 8,
                                         "\n").encode()),
    "hex-0x": ("hex", lambda b: b"0x" + b.hex().encode()),
    "b64": ("b64", lambda b: b64(b)),
    "b64-nopad": ("b64", lambda b: b64(b).rstrip(b"=")),
    "b64url": ("b64", lambda b: b64url(b)),
    "b64url-nopad": ("b64", lambda b: b64url(b).rstrip(b"=")),
    "b64-wrapped": ("b64", lambda b: every(b64(b).decode(), 8,
                                           "\r\n").encode()),
    "b64-after-1": ("b64", lambda b: b64(b"k" + b)),
    "b64-after-2": ("b64", lambda b: b64(b"k=" + b)),
    "b64-header": ("b64", lambda b: b64(b"Authorization: Basic " + b +
                                        b"\r\n")),
    "b64-b64": ("b64", lambda b: b64(b64(b))),
    "b64-b64-nopad": ("b64", lambda b: b64(b64(b).rstrip(b"="))),
    "b64url-after-1": ("b64", lambda b: b64url(b"?" + b)),
    "html-dec": ("html", lambda b: entities(b.decode(), "dec")),
    "html-hex": ("html", lambda b: entities(b.decode(), "hex")),
    "html-HEX": ("html", lambda b: entities(b.decode(), "HEX")),
    "html-named": ("html", lambda b: entities(b.decode(), "named")),
    "html-escape": ("html", lambda b: html.escape(b.decode()).encode()),
    "html-padded": ("html", lambda b: entities(b.decode(), "pad")),
    "html-mixed": ("html", lambda b: entities(b.decode(), "mixed")),
    "html-upper": ("html", lambda b: entities(b.decode().upper(), "dec")),
    "pct": ("pct", lambda b: urllib.parse.quote(b, safe="").encode()),
    "pct-lower": ("pct", lambda b: urllib.parse.quote(b, safe="")
                  .lower().encode()),
    "pct-all": ("pct", lambda b: pct_all(b)),
    "pct-all-lower": ("pct", lambda b: pct_all(b, True)),
    "pct-plus": ("pct", lambda b: urllib.parse.quote_plus(b, safe="")
                 .encode()),
    "pct-twice": ("pct", lambda b: urllib.parse.quote(urllib.parse.quote(
        b, safe=""), safe="").encode()),
    "pct-twice-all": ("pct", lambda b: urllib.parse.quote(pct_all(b),
                                                          safe="").encode()),
    "pct-twice-plus": ("pct", lambda b: urllib.parse.quote_plus(
        urllib.parse.quote_plus(b, safe=""), safe="").encode()),
    "pct-upper": ("pct", lambda b: urllib.parse.quote(
        b.decode().upper().encode(), safe="").encode()),
    "split-space": ("split", lambda b: every(b.decode(), 4, " ").encode()),
    "split-newline": ("split", lambda b: every(b.decode(), 9,
                                               "\n").encode()),
    "split-crlf": ("split", lambda b: every(b.decode(), 7,
                                            "\r\n").encode()),
    "split-tab": ("split", lambda b: every(b.decode(), 3, "\t").encode()),
    "split-indent": ("split", lambda b: every(b.decode(), 6,
                                              "\n    ").encode()),
    "split-chars": ("split", lambda b: " ".join(b.decode()).encode()),
}
FULLWIDTH = "fullwidth"


def subject(name, family, secret):
    """What a form is applied to: the token or header value; for basic,
    user:pass under base64, the password otherwise."""
    if name == "bas" and family != "b64":
        return secret.split(":", 1)[1].encode()
    return secret.encode()


def fullwidth(b):
    return "".join(chr(ord(c) + 0xfee0) if 0x21 <= ord(c) <= 0x7e else c
                   for c in b.decode()).encode()


# ---- the target -------------------------------------------------------


def target_main():
    from sptest import target as t
    plain = t.Handler.reflect

    def reflect(self, how):
        if self.path.startswith("/s/"):
            q = urllib.parse.unquote(self.path.split("/")[-1])
            self.reply(200, ("results for: " + q + "\n").encode())
            return
        sec = self.credential()
        name = "bas" if self.headers.get("Authorization", "").startswith(
            "Basic") else "other"
        if name == "bas":
            sec = base64.b64decode(sec)
        if how == FULLWIDTH:
            self.reply(200, b"echo: " + fullwidth(sec) + b" :end\n")
        elif how in FORMS:
            fam, f = FORMS[how]
            if name == "bas" and fam != "b64":
                sec = sec.split(b":", 1)[1]
            self.reply(200, b"echo: " + f(sec) + b" :end\n")
        else:
            plain(self, how)

    t.Handler.reflect = reflect
    return t.main(sys.argv[1:] + ["--reflect", "0"])


# ---- the test ---------------------------------------------------------


def make_policy(tmp, port, creds=None, name="policy.json"):
    creds = creds or {
        "tok": {"type": "bearer", "file": write_secret(
            tmp, "tok", SECRETS["tok"].encode() + b"\n")},
        "bas": {"type": "basic", "file": write_secret(
            tmp, "bas", SECRETS["bas"].encode())},
        "hdr": {"type": "header", "header_name": "X-Api-Key",
                "file": write_secret(tmp, "hdr", SECRETS["hdr"].encode())},
    }
    targets = {n: {"type": "http", "base_url": "http://127.0.0.1:%d" % port,
                   "credential": n} for n in creds}
    routes = list(FORMS) + [FULLWIDTH]
    tools = [{"name": "reflect_" + n, "description": "Echo the credential.",
              "target": n, "scope": "read",
              "http": {"method": "GET", "path": "/r/{how}"},
              "params": {"how": {"type": "string", "enum": routes}}}
             for n in creds]
    tools += [{"name": "search_" + n, "description": "Search for words.",
               "target": n, "scope": "read",
               "http": {"method": "GET", "path": "/s/{q}"},
               "params": {"q": {"type": "string", "maxLength": 1000}}}
              for n in creds]
    return write_policy(tmp, {
        "sallyport": 1, "server": {"name": "exec-forms"},
        "limits": {"call_timeout_ms": 20000, "result_max_chars": 4096},
        "credentials": creds, "targets": targets, "tools": tools,
        "profiles": {"default": {"scopes": ["read"]}}}, name)


def shown(sc, form, secret_subject):
    """Whether the client can read the form (as the sanitizer shows it:
    '\\r' becomes a space) or the subject itself in a result."""
    text = "\n".join(strings(sc))
    f = form.decode("utf-8", "replace").replace("\r", " ")
    return f in text or secret_subject.decode() in text


def run_calls(policy, calls):
    """calls: [(tool, args)], 3 a session (the executor takes no more once
    3 results withheld a credential); returns the answers in order."""
    out = []
    for i in range(0, len(calls), 3):
        s = Session(policy)
        ids = []
        for k, (tool, args) in enumerate(calls[i:i + 3]):
            s.call(100 + k, tool, args)
            ids.append(100 + k)
        got = s.wait(ids, timeout=120)
        s.close()
        out += [structured(got.get(r)) for r in ids]
    return out


def forms_part(policy):
    calls = [("reflect_" + n, {"how": f}) for n in SECRETS for f in FORMS]
    answers = run_calls(policy, calls)
    for (tool, args), sc in zip(calls, answers):
        name = tool.split("_", 1)[1]
        fam, f = FORMS[args["how"]]
        subj = subject(name, fam, SECRETS[name])
        sc["_shown"] = shown(sc, f(subj), subj)
    for n in SECRETS:
        mine = [(a["how"], sc) for (t, a), sc in zip(calls, answers)
                if t == "reflect_" + n]
        reached = [how for how, sc in mine if sc["_shown"]]
        print("# shown: %s %d of %d %s" % (n, len(reached), len(mine),
                                           " ".join(reached)))
        check("%s: every call answered ok" % n,
              all(sc.get("outcome") == "ok" for _, sc in mine),
              [how for how, sc in mine if sc.get("outcome") != "ok"])
        check("%s: none of the %d forms reaches the client" % (n, len(mine)),
              not reached, reached)
        check("%s: each is withheld whole and marked" % n,
              all(sc.get("redacted") is True and
                  sc.get("http", {}).get("body") == MARKER
                  for _, sc in mine),
              [how for how, sc in mine if sc.get("redacted") is not True])


def fullwidth_part(policy):
    answers = run_calls(policy, [("reflect_" + n, {"how": FULLWIDTH})
                                 for n in SECRETS])
    leaked = []
    for n, sc in zip(SECRETS, answers):
        subj = subject(n, "raw", SECRETS[n])
        if shown(sc, fullwidth(subj), subj):
            leaked.append(n)
    print("# shown: fullwidth %d of 3 %s" % (len(leaked), " ".join(leaked)))
    check("full-width reflection: withheld for 3 of 3 types",
          not leaked and all(sc.get("redacted") is True and
                             sc.get("http", {}).get("body") == MARKER
                             for sc in answers), leaked)


def guesses(at):
    """Ten guesses of the password, the real one at index at (None: not
    among them)."""
    pw = SECRETS["bas"].split(":", 1)[1]
    out = ["Pw0d p@ss/w0rd+\u00e9%d" % i for i in range(10)]
    if at is not None:
        out[at] = pw
    return ", ".join(out)


def without_duration(sc):
    return {k: v for k, v in sc.items() if k != "duration_ms"}


def guesses_part(policy, target_log):
    s = Session(policy)
    plan = [("none", None), ("at 2", 2), ("at 9", 9), ("alone", -1),
            ("after three", 5)]
    got = {}
    for rid, (label, at) in enumerate(plan, 200):
        q = SECRETS["bas"].split(":", 1)[1] if at == -1 else guesses(at)
        s.call(rid, GUESS_TOOL, {"q": q})
        got[label] = structured(s.wait([rid], timeout=120).get(rid))
    s.close()
    none, a2, a9, alone, after = (got[p[0]] for p in plan)
    check("ten wrong guesses come back as the target sent them",
          none.get("outcome") == "ok" and "redacted" not in none and
          guesses(None) in none.get("http", {}).get("body", ""),
          json.dumps(none)[-300:])
    check("the password among ten guesses: the whole result withheld",
          a2.get("redacted") is True and
          a2.get("http", {}).get("body") == MARKER and
          a2.get("message") == MARKER, json.dumps(a2)[-300:])
    check("whichever guess it is, the result is the same",
          without_duration(a2) == without_duration(a9) ==
          without_duration(alone),
          [json.dumps(x)[-200:] for x in (a2, a9, alone)])
    # The allowed difference from a search holding no secret: the
    # body (marker), the message (marker), "redacted" and the totals.
    diff = sorted(k for k in set(none) | set(a2)
                  if k != "duration_ms" and none.get(k) != a2.get(k))
    check("it differs from a search without the secret only in the "
          "withheld texts and the flag", diff == ["http", "message",
                                                  "redacted"], diff)
    check("after 3 withheld results the session takes no more calls",
          after.get("outcome") == "denied" and "session has ended" in
          after.get("message", ""), json.dumps(after)[-300:])
    with open(target_log, encoding="utf-8") as f:
        reached = sum(1 for l in f if '"/s/' in l)
    check("the target saw 4 searches, not the 5th", reached == 4, reached)


def short_policy(tmp, port, kind, cname, data, hname):
    d = os.path.join(tmp, cname)
    os.mkdir(d)
    c = {"type": kind, "file": write_secret(d, "secret", data)}
    if hname:
        c["header_name"] = hname
    return make_policy(d, port, {cname: c})


def short_part(tmp, target):
    """Files too small to hold 8 bytes: sp check and sp mcp refuse them
    before any child starts.  Larger files holding a short secret (a
    newline dropped, a long user name before a short password): only the
    executor reads them, and refuses them as it loads them."""
    small = [
        ("bearer", "short_tok", b"a\"$(x", None),
        ("header", "short_hdr", b"\xe6\xbc\xa2-\n", "X-K"),
        ("basic", "short_bas", b"al:pw$(x", None),
    ]
    for kind, cname, data, hname in small:
        policy = short_policy(tmp, target.port, kind, cname, data, hname)
        value = data.rstrip(b"\n").split(b":")[-1]
        p = subprocess.run([SP, "check", "--config", policy],
                           capture_output=True, env=sp_env(), timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        check("%s: sp check refuses it naming the credential" % kind,
              p.returncode == 78 and "credential %s: its secret is shorter "
              "than 8 bytes" % cname in err and value.decode() not in err,
              err)
        status, out, err = finish(start(policy), INITIALIZE, timeout=30)
        check("%s: sp mcp refuses to start, exit 78, naming it" % kind,
              status == 78 and cname in err and b"shorter than 8" in out
              and value not in out and value.decode() not in err,
              (status, err[-300:], out[-300:]))
    read = [
        ("bearer", "long_file_tok", b"ab\"c$(x\n", None),
        ("basic", "long_user_bas", b"alice-in-wonderland:pw3$(x)", None),
    ]
    before = len(target.requests())
    for kind, cname, data, hname in read:
        policy = short_policy(tmp, target.port, kind, cname, data, hname)
        value = data.rstrip(b"\n").split(b":")[-1]
        s = Session(policy)
        s.call(1, "reflect_" + cname, {"how": "upper"})
        got = s.wait([1], timeout=60)
        status = s.close()
        err = s.stderr.decode("utf-8", "replace")
        check("%s: the executor refuses it at start, naming it, and the "
              "session ends before any call" % kind,
              status != 0 and "credential %s: its %s is shorter than 8 "
              "bytes" % (cname, "password" if kind == "basic" else "secret")
              in err and structured(got.get(1)).get("outcome") != "ok" and
              value not in s.stdout and value.decode() not in err,
              (status, err[-400:], got))
    check("none of those calls reached the target",
          len(target.requests()) == before, len(target.requests()) - before)


def main():
    from sptest.target import Target
    tmp = tmpdir()
    target = Target(tmp, script=os.path.abspath(__file__), lifetime=1800)
    policy = make_policy(tmp, target.port)
    forms_part(policy)
    fullwidth_part(policy)
    guesses_part(policy, target.log)
    short_part(tmp, target)
    target.stop()
    done()


if __name__ == "__main__":
    if "--log" in sys.argv:
        sys.exit(target_main())
    main()

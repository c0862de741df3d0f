#!/usr/bin/env python3
"""What a human reads before saying yes is what is sent (docs/design.md
section 8, policy/confirm_message.h), in both questions: the client's
elicitation message and the operator's line of sp approve --list.

Values hold tag characters ("al" U+E0075 "ice" reads "alice"), full-width
letters, a bidi override, a zero-width space, C0 and C1 controls, a text
that spells an escape, and four long values before user=mallory.  Each
hidden or look-alike character must show as \\u{XXXX} (a spelled
backslash as \\\\), no such character may reach the human raw, each long
value's cut must be said with its length, and user=mallory must still
show.  The client's question is declined, then accepted: the target
receives the original bytes once.  The operator's call is denied through
sp approve (the test's own uid is the approver): nothing reaches the
target."""
import json
import os
import re
import subprocess
import sys
import time
import unicodedata

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.confirm import ConfirmSession  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP, Session, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

NAME = "al\U000E0075ice \uff41\uff4c\uff49\uff43\uff45 \u202egnp.exe"
NAME_SHOWN = ("al\\u{E0075}ice \\u{FF41}\\u{FF4C}\\u{FF49}\\u{FF43}"
              "\\u{FF45} \\u{202E}gnp.exe")
A = "ad\u200bmin \u009b31m \u001b[2J \\u{202E} -x\n" + "a" * 290
A_SHOWN = ("ad\\u{200B}min \\u{009B}31m \\u{001B}[2J \\\\u{202E} "
           "-x\\u{000A}aaa")
LONG = {"a": A, "b": "b\u00e9" * 150, "c": "$(id)%2e%2e" * 30,
        "d": "\U0001F600" * 333}
ARGS = dict(LONG, name=NAME, qty=3, user="mallory")
CUT = re.compile("\u2026 \\(cut: shown (\\d+) of (\\d+) chars\\)")


def hidden(ch):
    """A character no human may be shown raw."""
    c = ord(ch)
    return (unicodedata.category(ch) in ("Cc", "Cf", "Co", "Zl", "Zp") or
            (unicodedata.category(ch) == "Zs" and ch != " ") or
            0xff01 <= c <= 0xff60 or 0xe0000 <= c <= 0xe0fff)


def policy(tmp, port, template):
    path = confirmed_create_item_policy(tmp, port)
    with open(path) as f:
        doc = json.load(f)
    tool = doc["tools"][0]
    tool["params"]["name"]["maxLength"] = 1000
    for p in ("a", "b", "c", "d", "user"):
        tool["params"][p] = {"type": "string", "maxLength": 1000}
        tool["http"]["body"][p] = "{%s}" % p
    if template is None:
        del tool["confirm"]["message"]
    else:
        tool["confirm"]["message"] = template
    return path, doc


def save(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def question_checks(who, msg):
    """The checks both questions must pass; msg is what the human reads."""
    msg = msg or ""
    check("%s: tag, full-width and bidi characters shown escaped" % who,
          NAME_SHOWN in msg, msg[:400])
    check("%s: zero-width, C1 and C0 controls, a line feed shown escaped, a "
          "spelled escape's backslash doubled" % who, A_SHOWN in msg,
          msg[:400])
    raw = sorted({"U+%04X" % ord(c) for c in msg if hidden(c)})
    check("%s: no hidden or look-alike character reaches the human raw"
          % who, raw == [], raw)
    cuts = [(int(a), int(b)) for a, b in CUT.findall(msg)]
    want = sorted(len(v) for v in LONG.values())
    check("%s: each of the four long values cut, the cut said with the "
          "value's length" % who, sorted(b for _, b in cuts) == want and
          all(0 < a < b for a, b in cuts), (cuts, want))
    check("%s: every param still appears: user=mallory after the four "
          "long values, and the whole is not cut" % who,
          "mallory" in msg and "question cut" not in msg, msg[-200:])


def test_client():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    path, doc = policy(tmp, target.port, "Create {qty} x {name} from {a}, "
                       "{b}, {c}, {d} for {user}")
    save(path, doc)
    answers = [{"action": "decline"},
               {"action": "accept", "content": {"qty": "3"}}]
    s = ConfirmSession(path, lambda req: answers.pop(0) if answers else None)
    s.call(1, "create_item", ARGS)
    s.wait([1], 60)
    posts_declined = [r for r in target.requests() if r["method"] == "POST"]
    s.call(2, "create_item", ARGS)
    got = s.wait([2], 60)
    s.close()
    msg = s.asked[0]["params"]["message"] if s.asked else None
    question_checks("client", msg)
    check("client: the question ends with the template's own last words",
          (msg or "").endswith(" for mallory"), (msg or "")[-80:])
    posts = [r for r in target.requests() if r["method"] == "POST"]
    body = json.loads(posts[0].get("body") or "{}") if posts else {}
    r = got.get(2, ({},))[0].get("result", {}).get("structuredContent", {})
    check("client: declined, nothing sent; then accepted, the target got "
          "the original bytes once",
          posts_declined == [] and r.get("outcome") == "ok" and
          len(posts) == 1 and body.get("name") == NAME and
          body.get("a") == A and body.get("user") == "mallory",
          (posts_declined, r, body))
    target.stop()


def approve(state, *args):
    p = subprocess.run([SP, "approve", "--state-dir", state] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, start_new_session=True)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def test_operator():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    path, doc = policy(tmp, target.port, None)
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    doc["state_dir"] = state
    doc["tools"][0]["confirm"].update({
        "via": "operator", "others_only": False,
        "approvers": {"uid": [os.getuid()]}})
    save(path, doc)
    s = Session(path)
    s.call(1, "create_item", ARGS)
    out = b""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        _, out, _ = approve(state, "--list")
        if out.strip():
            break
        time.sleep(0.1)
    line = out.decode("utf-8", "replace").rstrip("\n")
    # id, tool, requester, age, the question, (retype qty): tab-separated
    fields = line.split("\t")
    msg = fields[4] if len(fields) == 6 else None
    question_checks("sp approve --list", msg)
    check("sp approve --list: the default question ends with the last "
          "param", (msg or "").endswith("user = mallory?"), line[-120:])
    check("sp approve --list: no terminal control byte in its output",
          re.search(b"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", out) is None,
          out[:300])
    ident = line.split("\t")[0] if line else "none.1"
    st, _, err = approve(state, ident, "--deny")
    got = s.wait([1], 60)
    s.close()
    r = got.get(1, ({},))[0].get("result", {}).get("structuredContent", {})
    check("sp approve: denied, nothing reached the target",
          st == 0 and r.get("outcome") == "denied" and
          target.requests() == [], (st, err, r, target.requests()))
    target.stop()


def main():
    test_client()
    test_operator()
    return done()


if __name__ == "__main__":
    sys.exit(main())

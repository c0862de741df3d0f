#!/usr/bin/env python3
"""Out-of-band approval (docs/design.md section 8.3): a tool with
confirm.via "operator" acts only when a person the kernel names, through
sp approve on the session's approval socket, approves it -- and with
others_only, a person other than the requester.  Real sp, a real HTTP
target that logs every request, and real uids: throwaway users and groups
made with useradd/groupadd and removed at the end (root only; otherwise
each check is a counted skip).

  approver   primary group SOCK, supplementary APPR (create_item's
             approvers): listed only through SO_PEERGROUPS
  outsider   primary group SOCK only: an approver of delete_item, so the
             broker reads its request, and no approver of create_item
  root       runs sp mcp (the requester: stdin is a pipe) and is listed
             by uid in create_item's approvers: others_only refuses it
"""
import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import audit_records  # noqa: E402
from sptest.confirm import ConfirmSession, accept, decisions  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP, SP_TEST, Session, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

NAME = "widget \"$(id)\"\n-x \u00e9t\u00e9"
SUFFIX = "%05d" % random.randrange(100000)
APPR, SOCK = "spa-appr-" + SUFFIX, "spa-sock-" + SUFFIX
APPROVER, OUTSIDER = "spa-ok-" + SUFFIX, "spa-out-" + SUFFIX
CASES = ["approve", "default question", "others_only", "outsider", "deny", "wrong value",
         "timeout",
         "ended", "forged", "two sessions"]


def sh(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_users():
    sh("groupadd", APPR)
    sh("groupadd", SOCK)
    sh("useradd", "-M", "-N", "-s", "/usr/sbin/nologin", "-g", SOCK,
       "-G", APPR, APPROVER)
    sh("useradd", "-M", "-N", "-s", "/usr/sbin/nologin", "-g", SOCK,
       OUTSIDER)


def remove_users():
    for argv in (("userdel", APPROVER), ("userdel", OUTSIDER),
                 ("groupdel", APPR), ("groupdel", SOCK)):
        subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def gid(name):
    import grp
    return grp.getgrnam(name).gr_gid


def uid(name):
    import pwd
    return pwd.getpwnam(name).pw_uid


def operator_policy(tmp, port, timeout_s=120, others_only=True):
    """create_item approved by root's uid or group APPR, others_only;
    delete_item by group SOCK."""
    path = confirmed_create_item_policy(tmp, port, timeout_s=timeout_s)
    with open(path) as f:
        doc = json.load(f)
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    os.chmod(tmp, 0o711)
    os.chmod(state, 0o711)
    doc["state_dir"] = state
    create = doc["tools"][0]
    create["confirm"].update({"via": "operator", "others_only": others_only,
                              "approvers": {"uid": [0],
                                            "gid": [gid(APPR)]}})
    delete = {"name": "delete_item", "description": "Delete an item.",
              "target": "api", "scope": "write", "mutating": True,
              "confirm": {"via": "operator",
                          "approvers": {"gid": [gid(SOCK)]}},
              "http": {"method": "DELETE", "path": "/items/{id}"},
              "params": {"id": {"type": "string", "maxLength": 64}}}
    doc["tools"].insert(0, delete)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path, state


def approve(state, *args, user=None, stdin=b""):
    """sp approve as user (None: root); (status, stdout, stderr)."""
    kw = {}
    if user is not None:
        import pwd
        pw = pwd.getpwnam(user)
        import grp
        extra = [g.gr_gid for g in grp.getgrall() if user in g.gr_mem]
        kw = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": extra}
    p = subprocess.run([SP, "approve", "--state-dir", state] + list(args),
                       input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120,
                       start_new_session=True, **kw)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def listed(state, user=APPROVER, want=1, timeout=60):
    """The --list lines once want of them show (or what showed)."""
    end = time.monotonic() + timeout
    lines = []
    while time.monotonic() < end:
        _, out, _ = approve(state, "--list", user=user)
        lines = [l for l in out.splitlines() if l.strip()]
        if len(lines) >= want:
            break
        time.sleep(0.1)
    return lines


def result(got, rid):
    msg = got.get(rid, ({},))[0]
    return msg.get("result", {}).get("structuredContent", {})


def posts(target):
    return [r for r in target.requests() if r["method"] == "POST"]


def call_with_progress(s, rid, qty):
    s.send((json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                        "params": {"name": "create_item",
                                   "arguments": {"name": NAME, "qty": qty},
                                   "_meta": {"progressToken": "p%d" % rid}}})
            + "\n").encode())


def confirmations(tmp):
    return [r for r in audit_records(tmp) if r.get("kind") == "confirmation"]


def test_approve():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    s = Session(cfg)
    call_with_progress(s, 1, 3)
    lines = listed(state)
    check("approve: --list shows the waiting call to an approver: id, "
          "tool, requester uid 0, the values as the message renders them",
          len(lines) == 1 and "\tcreate_item\tuid 0\t" in lines[0] and
          "Create 3 x widget \"$(id)\"\\u{000A}-x \u00e9t\u00e9 in the shop"
          in lines[0] and "(retype qty)" in lines[0], lines)
    ident = lines[0].split("\t")[0] if lines else "none.1"
    check("... nothing reached the target while it waits",
          posts(target) == [], posts(target))
    st, out, err = approve(state, ident, user=APPROVER, stdin=b"3\n")
    got = s.wait([1], 60)
    s.close()
    check("... the approver (in the approvers' group as a supplementary "
          "group) retypes 3: exit 0, accepted, one request at the target",
          st == 0 and out.strip() == "accepted" and
          result(got, 1).get("outcome") == "ok" and
          len(posts(target)) == 1, (st, out, err, result(got, 1)))
    notes = [json.loads(l) for l in s.stdout.splitlines()
             if b"notifications/progress" in l]
    check("... the client heard at once that it waits for an operator",
          notes and "operator" in notes[0]["params"].get("message", ""),
          notes[:1])
    acc = [r for r in confirmations(tmp) if r.get("decision") == "accepted"]
    check("... the confirmation record names the approver's uid",
          len(acc) == 1 and acc[0].get("approver_uid") == uid(APPROVER),
          confirmations(tmp))
    check("... the socket is gone with its session",
          os.listdir(os.path.join(state, "approvals")) == [],
          os.listdir(os.path.join(state, "approvals")))
    target.stop()


def test_default_question():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    with open(cfg) as f:
        doc = json.load(f)
    del doc["tools"][1]["confirm"]["message"]
    with open(cfg, "w") as f:
        json.dump(doc, f)
    s = Session(cfg)
    call_with_progress(s, 1, 9)
    lines = listed(state)
    check("no template: the approver reads \"Allow TOOL: param = value, "
          "...?\", the values as the executor holds them",
          len(lines) == 1 and "Allow create_item: name = widget "
          "\"$(id)\"\\u{000A}-x \u00e9t\u00e9, qty = 9?" in lines[0], lines)
    ident = lines[0].split("\t")[0] if lines else "none.1"
    st, out, err = approve(state, ident, "--deny", user=APPROVER)
    s.wait([1], 60)
    s.close()
    check("... denied: zero requests", st == 0 and posts(target) == [],
          (st, out, err, posts(target)))
    target.stop()


def test_refusals():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    s = Session(cfg)
    call_with_progress(s, 1, 3)
    lines = listed(state)
    ident = lines[0].split("\t")[0] if lines else "none.1"
    st, out, err = approve(state, ident, stdin=b"3\n")
    check("others_only: root, listed by uid but the requester, approving "
          "its own call: exit 1, refused, zero requests",
          st == 1 and "others_only" in err and posts(target) == [],
          (st, out, err, posts(target)))
    _, lout, _ = approve(state, "--list", user=OUTSIDER)
    st, out, err = approve(state, ident, user=OUTSIDER, stdin=b"3\n")
    check("outsider: a user who reaches the socket but is no approver of "
          "the tool: not listed; approving: exit 1, refused, zero requests",
          lout.strip() == "" and st == 1 and "not among" in err and
          posts(target) == [], (lout, st, out, err, posts(target)))
    st, out, err = approve(state, ident, "--deny", user=APPROVER)
    got = s.wait([1], 60)
    s.close()
    r = result(got, 1)
    check("deny: sp approve --deny: exit 0; the call is denied, naming the "
          "operator's denial; zero requests",
          st == 0 and out.strip() == "denied" and
          r.get("outcome") == "denied" and "operator denied" in
          r.get("message", "") and posts(target) == [],
          (st, out, err, r, posts(target)))
    den = [r for r in confirmations(tmp) if r.get("decision") == "denied"]
    check("... the confirmation record names who denied it",
          len(den) == 1 and den[0].get("denied_by_uid") == uid(APPROVER),
          confirmations(tmp))
    target.stop()


def test_wrong_value():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    s = Session(cfg)
    call_with_progress(s, 1, 3)
    lines = listed(state)
    ident = lines[0].split("\t")[0] if lines else "none.1"
    st, out, err = approve(state, ident, user=APPROVER, stdin=b"-4\n")
    got = s.wait([1], 60)
    s.close()
    r = result(got, 1)
    check("wrong value: the approver retypes -4 for qty 3: exit 1, "
          "wrong-value; the call is denied, zero requests",
          st == 1 and out.strip() == "wrong-value" and
          r.get("outcome") == "denied" and posts(target) == [],
          (st, out, err, r, posts(target)))
    target.stop()


def test_timeout():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port, timeout_s=2)
    s = Session(cfg)
    call_with_progress(s, 1, 3)
    got = s.wait([1], 60)
    s.close()
    r = result(got, 1)
    check("timeout: no approval within timeout_s: denied, saying it "
          "expired; zero requests", r.get("outcome") == "denied" and
          "expired" in r.get("message", "") and posts(target) == [],
          (r, posts(target)))
    check("... audited asked, expired", decisions(tmp) == ["asked",
                                                            "expired"],
          decisions(tmp))
    target.stop()


def test_ended():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    s = Session(cfg)
    call_with_progress(s, 1, 3)
    lines = listed(state)
    ident = lines[0].split("\t")[0] if lines else "none.1"
    s.close()
    st, out, err = approve(state, ident, user=APPROVER, stdin=b"3\n")
    check("ended: approving a call whose session has ended: exit 69, the "
          "session is not reachable; zero requests",
          st == 69 and "not reachable" in err and posts(target) == [],
          (st, out, err, posts(target)))
    target.stop()


def test_forged():
    """tests/sp-test's executor:operator-leak lets the frontend see the
    real challenge, and the client's human accepts with the right value:
    the executor still refuses what the frontend relays."""
    if not os.path.exists(SP_TEST):
        skip("forged: a frontend's answer for an operator tool",
             "tests/sp-test is not built")
        return
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    s = ConfirmSession(cfg, accept(3), binary=SP_TEST,
                       hook="executor:operator-leak")
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    got = s.wait([1], 60)
    s.close()
    r = result(got, 1)
    check("forged: the frontend relays an accept with the real challenge "
          "for an operator-confirmed tool: denied, zero requests",
          len(s.asked) == 1 and r.get("outcome") == "denied" and
          "sp approve" in r.get("message", "") and posts(target) == [],
          (len(s.asked), r, posts(target), s.stderr[-400:]))
    check("... audited as not-the-operator",
          decisions(tmp) == ["asked", "not-the-operator"], decisions(tmp))
    target.stop()


def test_two_sessions():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = operator_policy(tmp, target.port)
    a, b = Session(cfg), Session(cfg)
    call_with_progress(a, 1, 3)
    call_with_progress(b, 1, 7)
    lines = listed(state, want=2)
    ids = {}
    for l in lines:
        qty = "7" if "Create 7 x" in l else "3"
        ids[qty] = l.split("\t")[0]
    check("two sessions: --list shows both waiting calls, each its own id",
          len(lines) == 2 and set(ids) == {"3", "7"} and
          ids["3"].split(".")[0] != ids["7"].split(".")[0], lines)
    st7 = approve(state, ids.get("7", "none.1"), user=APPROVER,
                  stdin=b"7\n")[0]
    got_b = b.wait([1], 60)
    st3 = approve(state, ids.get("3", "none.1"), user=APPROVER,
                  stdin=b"3\n")[0]
    got_a = a.wait([1], 60)
    a.close()
    b.close()
    bodies = sorted(json.loads(r.get("body") or "{}").get("qty", 0)
                    for r in posts(target))
    check("... each approval reaches its own call: both ok, the target saw "
          "qty 3 once and qty 7 once",
          st3 == 0 and st7 == 0 and result(got_a, 1).get("outcome") == "ok"
          and result(got_b, 1).get("outcome") == "ok" and bodies == [3, 7],
          (st3, st7, result(got_a, 1), result(got_b, 1), posts(target)))
    target.stop()


def main():
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        for c in CASES:
            skip("operator approval: " + c, "needs root and useradd "
                 "(throwaway users)")
        return done()
    remove_users()
    make_users()
    try:
        test_approve()
        test_default_question()
        test_refusals()
        test_wrong_value()
        test_timeout()
        test_ended()
        test_forged()
        test_two_sessions()
    finally:
        remove_users()
    return done()


if __name__ == "__main__":
    sys.exit(main())

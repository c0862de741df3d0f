#!/usr/bin/env python3
"""Four-eyes approval as shipped (docs/design.md section 8.3): the state
directory 0711 as the systemd units make it, approvers listed by uid
alone or by a group the service user is not in, an approval bound to
the question shown, an approvals directory that must be the broker's
own, sp approve --list saying what it could not reach, and sp call on
an operator tool saying what to approve.  Real sp, a real HTTP target
that logs every request, real throwaway users and groups (useradd,
removed at the end; root only, otherwise each case is a counted skip):

  byuid     listed by uid alone (its own group only)
  ingroup   supplementary group GRP, listed by gid only
  service   runs sp mcp in the group case, not in GRP
  mallory   a local user who is no approver
"""
import json
import os
import pwd
import grp
import random
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP, Session, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

SUFFIX = "%05d" % random.randrange(100000)
GRP = "spb-grp-" + SUFFIX
BYUID, INGROUP = "spb-uid-" + SUFFIX, "spb-gid-" + SUFFIX
SERVICE, MALLORY = "spb-svc-" + SUFFIX, "spb-mal-" + SUFFIX
NAME = "scratch \"$(id)\" -x \u00e9t\u00e9"
CASES = ["uid-only approver", "group approver, service user not in it",
         "approvals/ made by another user", "swapped sockets",
         "--list counts what it could not reach", "sp call says what to approve"]


def sh(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_users():
    sh("groupadd", GRP)
    for name, extra in ((BYUID, []), (INGROUP, ["-G", GRP]), (SERVICE, []),
                        (MALLORY, [])):
        sh("useradd", "-M", "-U", "-s", "/usr/sbin/nologin", *extra, name)


def remove_users():
    for argv in (("userdel", BYUID), ("userdel", INGROUP), ("userdel", SERVICE),
                 ("userdel", MALLORY), ("groupdel", GRP)):
        subprocess.run(argv, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def as_user(user):
    pw = pwd.getpwnam(user)
    extra = [g.gr_gid for g in grp.getgrall() if user in g.gr_mem]
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": extra}


def approve(state, *args, user, stdin=b""):
    p = subprocess.run([SP, "approve", "--state-dir", state] + list(args),
                       input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120,
                       start_new_session=True, **as_user(user))
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def listed(state, user, want=1, timeout=30):
    end = time.monotonic() + timeout
    lines = []
    while time.monotonic() < end:
        _, out, _ = approve(state, "--list", user=user)
        lines = [l for l in out.splitlines() if l.strip()]
        if len(lines) >= want:
            break
        time.sleep(0.2)
    return lines


def check_policy(cfg):
    p = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def posts(target):
    return [r for r in target.requests() if r["method"] == "POST"]


def policy(tmp, port, approvers, state_mode=0o711, timeout_s=60):
    """create_item approved by approvers, others_only, no retype; the
    state directory with the shipped mode."""
    path = confirmed_create_item_policy(tmp, port, timeout_s=timeout_s,
                                        retype=None)
    with open(path) as f:
        doc = json.load(f)
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    os.chmod(tmp, 0o711)
    os.chmod(state, state_mode)
    doc["state_dir"] = state
    doc["tools"][0]["confirm"].update({"via": "operator",
                                       "others_only": True,
                                       "approvers": approvers})
    with open(path, "w") as f:
        json.dump(doc, f)
    return path, state


def call(s, rid, qty):
    s.send((json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                        "params": {"name": "create_item",
                                   "arguments": {"name": NAME, "qty": qty}}})
            + "\n").encode())


def outcome(got, rid):
    msg = got.get(rid, ({},))[0]
    return msg.get("result", {}).get("structuredContent", {}).get("outcome")


def approve_first(state, user):
    """The approver lists and approves what it was shown."""
    lines = listed(state, user)
    ident = lines[0].split("\t")[0] if lines else "none.1.0000000000000000"
    return lines, approve(state, ident, user=user)


def one_waiting(qty):
    """A session whose create_item of qty waits for BYUID (listed by uid
    alone): (target, cfg, state, session)."""
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = policy(tmp, target.port,
                        {"uid": [pwd.getpwnam(BYUID).pw_uid]})
    s = Session(cfg)
    call(s, 1, qty)
    return target, cfg, state, s


def test_uid_only():
    target, _, state, s = one_waiting(4)
    lines, (st, out, err) = approve_first(state, BYUID)
    got = s.wait([1], 60)
    s.close()
    check("uid-only approver: under the shipped 0711 state directory, "
          "listed by uid alone, it lists the call and approves it: exit 0, "
          "accepted, one request at the target",
          len(lines) == 1 and st == 0 and out.strip() == "accepted" and
          outcome(got, 1) == "ok" and len(posts(target)) == 1,
          (lines, st, out, err, outcome(got, 1), posts(target)))
    target.stop()


def service_binary(tmp):
    """sp mcp run as SERVICE, in no group but its own."""
    path = os.path.join(tmp, "sp-as-service")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexec setpriv --reuid=%s --regid=%s "
                "--clear-groups %s \"$@\"\n" % (SERVICE, SERVICE,
                                               os.path.abspath(SP)))
    os.chmod(path, 0o755)
    return path


def chown_tree(top, user):
    pw = pwd.getpwnam(user)
    for d, dirs, files in os.walk(top):
        for n in [d] + [os.path.join(d, x) for x in dirs + files]:
            os.lchown(n, pw.pw_uid, pw.pw_gid)


def test_group_not_service():
    if shutil.which("setpriv") is None:
        skip(CASES[1], "setpriv not installed (util-linux)")
        return
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = policy(tmp, target.port, {"gid": [grp.getgrnam(GRP).gr_gid]})
    wrapper = service_binary(tmp)
    chown_tree(tmp, SERVICE)
    s = Session(cfg, binary=wrapper)
    call(s, 1, 7)
    lines, (st, out, err) = approve_first(state, INGROUP)
    got = s.wait([1], 60)
    s.close()
    check("group approver: sp mcp runs as a service user outside the "
          "approvers' group; the session starts, and a member of the group "
          "approves: exit 0, one request at the target",
          len(lines) == 1 and st == 0 and outcome(got, 1) == "ok" and
          len(posts(target)) == 1,
          (lines, st, out, err, outcome(got, 1), posts(target),
           bytes(s.stderr[-600:])))
    target.stop()


# a python3 another user can run (the test's own may sit under /root)
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    sys.executable


def as_mallory(code):
    subprocess.run([PY, "-c", code], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   **as_user(MALLORY))


SWAP = """
import os, sys
d = sys.argv[1] if len(sys.argv) > 1 else %r
a, b = sorted(n for n in os.listdir(d) if n.endswith('.sock'))[:2]
os.rename(os.path.join(d, a), os.path.join(d, 'x'))
os.rename(os.path.join(d, b), os.path.join(d, a))
os.rename(os.path.join(d, 'x'), os.path.join(d, b))
"""


def wait_sockets(d, n, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if len([x for x in os.listdir(d) if x.endswith(".sock")]) >= n:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def test_premade_dir():
    """mallory makes approvals/ in a 1777 state_dir, then (when sessions
    run anyway) swaps their sockets: the approver's answers reach
    nothing."""
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = policy(tmp, target.port,
                        {"uid": [pwd.getpwnam(BYUID).pw_uid]},
                        state_mode=0o1777)
    appr = os.path.join(state, "approvals")
    as_mallory("import os; os.mkdir(%r, 0o777); os.chmod(%r, 0o777)"
               % (appr, appr))
    a, b = Session(cfg), Session(cfg)
    call(a, 1, 3)
    call(b, 1, 9)
    if wait_sockets(appr, 2, 10):
        as_mallory(SWAP % appr)
    lines = listed(state, BYUID, want=2, timeout=10)
    results = [approve(state, l.split("\t")[0], user=BYUID)
               for l in lines]
    got_a, got_b = a.wait([1], 15), b.wait([1], 15)
    a.close()
    b.close()
    check("approvals/ made by another user in a 1777 state_dir: each "
          "session refuses to start naming it; the approver's answers "
          "reach neither call (zero requests at the target)",
          posts(target) == [] and b"approvals" in a.stderr and
          b"not sp's own approvals directory" in a.stderr,
          (lines, results, posts(target), bytes(a.stderr[-600:])))
    st, out, err = check_policy(cfg)
    check("... sp check refuses it too, at state_dir's line, saying to "
          "remove it", st != 0 and "owned by another user" in err and
          "remove it" in err and re.search(r"policy\.json:\d+:\d+", err),
          (st, err))
    st_mallory = os.stat(appr)
    shutil.rmtree(appr, ignore_errors=True)
    target_dir = os.path.join(tmp, "elsewhere")
    os.mkdir(target_dir)
    os.symlink(target_dir, appr)
    st, _, err = finish(start(cfg), timeout=60)
    check("... approvals/ a symlink: sp mcp refuses at start (status %s), "
          "saying so; zero requests" % st, st not in (None, 0) and
          "symlink" in err and posts(target) == [] and
          st_mallory.st_uid == pwd.getpwnam(MALLORY).pw_uid, err[-400:])
    del got_a, got_b
    target.stop()


def test_swapped():
    """The sockets of two sessions swapped in the broker's own directory
    (what mallory did above, done here by root): each approval names its
    session and question, and reaches neither call."""
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = policy(tmp, target.port,
                        {"uid": [pwd.getpwnam(BYUID).pw_uid]})
    a, b = Session(cfg), Session(cfg)
    call(a, 1, 3)
    call(b, 1, 9)
    lines = listed(state, BYUID, want=2)
    appr = os.path.join(state, "approvals")
    subprocess.run([sys.executable, "-c", SWAP % appr], check=True)
    results = [approve(state, l.split("\t")[0], user=BYUID) for l in lines]
    time.sleep(1)
    n = len(posts(target))
    a.close()
    b.close()
    check("swapped sockets: two waiting calls, the approver approves each "
          "id it was shown; each answer reaches the other session, which "
          "refuses it (exit 1, nothing passed on): zero requests",
          len(lines) == 2 and n == 0 and
          all(r[0] == 1 and "not the call that ID names" in r[2]
              for r in results), (lines, results, posts(target)))
    target.stop()


def test_list_counts():
    target, cfg, state, s = one_waiting(2)
    listed(state, BYUID)
    st, out, err = approve(state, "--list", user=MALLORY)
    check("--list by a user no approvers name: nothing listed, and stderr "
          "says 1 of 1 sessions not listed and why; exit 69",
          st == 69 and out == "" and "1 of 1 sessions not listed" in err
          and "not among the approvers" in err, (st, out, err))
    os.chmod(state, 0o700)
    st, out, err = approve(state, "--list", user=BYUID)
    cst, _, cerr = check_policy(cfg)
    os.chmod(state, 0o711)
    s.close()
    check("--list under a state_dir approvers cannot traverse (0700): "
          "nothing listed, the reason and the mode to give on stderr, "
          "exit 69", st == 69 and out == "" and "Permission denied" in err
          and "0711" in err, (st, out, err))
    check("... and sp check refuses that state_dir for these approvers, "
          "with the fix (chmod 0711)", cst != 0 and "cannot traverse" in
          cerr and "chmod 0711" in cerr, (cst, cerr))
    target.stop()


def test_sp_call():
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg, state = policy(tmp, target.port,
                        {"uid": [pwd.getpwnam(BYUID).pw_uid]}, timeout_s=60)
    p = subprocess.Popen([SP, "call", "--config", cfg, "create_item",
                          json.dumps({"name": NAME, "qty": 5})],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err, ident = b"", None
    end = time.monotonic() + 30
    os.set_blocking(p.stderr.fileno(), False)
    while time.monotonic() < end and ident is None and p.poll() is None:
        chunk = p.stderr.read() or b""
        err += chunk
        for line in err.decode("utf-8", "replace").splitlines():
            if "waits for an approver up to 60 s: " in line:
                ident = line.rsplit(" ", 1)[1]
        time.sleep(0.1)
    st = approve(state, ident or "none.1.0000000000000000", user=BYUID)
    try:
        out, rest = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, rest = p.communicate()
    check("sp call on a via-operator tool: stderr says at once that the "
          "call waits, for how long, and the sp approve id; approving that "
          "id: sp call exits 0, one request at the target",
          ident is not None and st[0] == 0 and p.returncode == 0 and
          len(posts(target)) == 1,
          (ident, st, p.returncode, out, (err + rest)[-600:], posts(target)))
    target.stop()


def main():
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        for c in CASES:
            skip("operator approval as shipped: " + c, "needs root and "
                 "useradd (throwaway users)")
        return done()
    remove_users()
    make_users()
    try:
        test_uid_only()
        test_group_not_service()
        test_premade_dir()
        test_swapped()
        test_list_counts()
        test_sp_call()
    finally:
        remove_users()
    return done()


if __name__ == "__main__":
    sys.exit(main())

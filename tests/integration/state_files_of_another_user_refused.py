#!/usr/bin/env python3
"""state_dir's files and approvals/ are trusted only when they are the
running user's and nobody else may write them (docs/design.md section 9),
as credential files are.  A throwaway local user (useradd, removed at the
end; root only, otherwise each check is a counted skip) plays the
attacker; real sp, real HTTP target counting what reached it.

- the attacker pre-creates limits.jsonl (mode 0666) in a 1777 state_dir,
  then truncates it after three calls of a per_day 3 tool: sp mcp must
  refuse at start (78, one line with the fix) so that nothing, let alone
  six calls, reaches the target; sp check reports it at state_dir's line;
- the same for journal.jsonl, for approvals/ (0777), for a symbolic link,
  for our own file left 0666, and for a state_dir writable by others
  without the sticky bit or owned by the attacker; the 1777 state_dir
  itself is a warning only;
- the file replaced by the attacker's while a session runs: the next
  per_day call is denied, not counted in the attacker's file."""
import json
import os
import random
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, INITIALIZED, structured  # noqa: E402
from sptest.policy import (document, http_target, http_tool,  # noqa: E402
                            write_policy)
from sptest.run import SP, Session, finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

ID = {"id": {"type": "string", "maxLength": 64}}

ATTACKER = "sp-stf-%05d" % random.randrange(100000)
CASES = ["limits.jsonl", "journal.jsonl", "approvals", "symlink",
         "own 0666", "dir 0777", "dir of another user", "replaced"]


def doc(tmp, port, state):
    counted = http_tool("count_item", "/count/{id}", ID, scope="rw",
                        description="Counted.", limits={"per_day": 3})
    return document("state-owners",
                    {"api": http_target("http://127.0.0.1:%d" % port)},
                    [counted], limits={"call_timeout_ms": 120000},
                    audit_path=os.path.join(tmp, "audit.jsonl"),
                    scopes=("rw",), state_dir=state)


def as_attacker(*argv):
    import pwd
    pw = pwd.getpwnam(ATTACKER)
    subprocess.run(argv, check=True, user=pw.pw_uid, group=pw.pw_gid,
                   extra_groups=[], stdout=subprocess.DEVNULL)


def sp_check(config):
    return subprocess.run([SP, "check", "--config", config],
                          stderr=subprocess.PIPE, text=True)


def state_line(config):
    with open(config) as f:
        for n, line in enumerate(f, 1):
            if '"state_dir"' in line:
                return n
    return 0


def six_calls(config, target, truncate):
    """Three calls, the attacker truncates, three more: how many reached
    the target, sp mcp's status and stderr.  A session refused at start
    is seen on a first start fed only initialize."""
    status, _, err = finish(start(config), INITIALIZE + INITIALIZED, 60)
    seen = []
    if status == 0:
        s = Session(config)
        for i in range(6):
            if i == 3:
                truncate()
            s.call(10 + i, "count_item", {"id": "v-%d $(x)" % i})
            seen.append(structured(s.wait([10 + i]).get(10 + i))
                        .get("outcome"))
        status = s.close()
        err = s.stderr.decode("utf-8", "replace")
    target.flush()
    return len(target.requests()), status, err, seen


def fresh(tmp, name, mode=0o1777):
    state = os.path.join(tmp, name)
    os.mkdir(state)
    os.chmod(state, mode)
    return state


def refused(label, config, err, status, reached, want_text):
    lines = [l for l in err.splitlines() if "state_dir" in l]
    check("%s: sp mcp refuses at start with 78 and says the fix" % label,
          status == 78 and any(want_text in l for l in lines), (status,
                                                                err))
    check("%s: nothing reached the target" % label, reached == 0,
          reached)
    r = sp_check(config)
    at = "%s:%d:" % (config, state_line(config))
    check("%s: sp check reports it at state_dir's line" % label,
          r.returncode == 78 and any(l.startswith(at) and want_text in l
                                     for l in r.stderr.splitlines()),
          r.stderr)


def attacker_limits(tmp):
    target = Target(tmp, name="t-limits", lifetime=600)
    state = fresh(tmp, "s-limits")
    path = os.path.join(state, "limits.jsonl")
    as_attacker("sh", "-c", "umask 0; : > '%s'; chmod 0666 '%s'" %
                (path, path))
    config = write_policy(tmp, doc(tmp, target.port, state), "limits.json")
    reached, status, err, seen = six_calls(
        config, target, lambda: as_attacker("truncate", "-s", "0", path))
    target.stop()
    check("limits.jsonl of another user: per_day 3 never lets more than "
          "three through (six did before)", reached <= 3, (reached, seen))
    refused("limits.jsonl of another user", config, err, status, reached,
            "limits.jsonl is owned by uid")
    r = sp_check(config)
    check("a 1777 state_dir is a warning that others may add names",
          "warning" in r.stderr and "lets others add names" in r.stderr,
          r.stderr)


def attacker_made(tmp, label, name, make, want):
    target = Target(tmp, name="t-" + name, lifetime=600)
    state = fresh(tmp, "s-" + name)
    make(state)
    config = write_policy(tmp, doc(tmp, target.port, state), name + ".json")
    reached, status, err, _ = six_calls(config, target, lambda: None)
    target.stop()
    refused(label, config, err, status, reached, want)


def replaced(tmp):
    """A session already running: the attacker renames its file over
    ours (the 1777 directory lets them add a name, sticky or not, and a
    rename of theirs over ours is refused by the sticky bit, so this
    directory is 0777 after start)."""
    target = Target(tmp, name="t-replaced", lifetime=600)
    state = fresh(tmp, "s-replaced", 0o700)
    config = write_policy(tmp, doc(tmp, target.port, state), "repl.json")
    s = Session(config)
    s.call(1, "count_item", {"id": "a"})
    first = structured(s.wait([1]).get(1))
    os.chmod(state, 0o777)
    own = os.path.join(state, "theirs")
    as_attacker("sh", "-c", "umask 0; : > '%s'; mv '%s' '%s'" %
                (own, own, os.path.join(state, "limits.jsonl")))
    s.call(2, "count_item", {"id": "b"})
    second = structured(s.wait([2]).get(2))
    s.close()
    target.flush()
    check("replaced by another user's file mid-session: the next call is "
          "denied, not sent", first.get("outcome") == "ok" and
          second.get("outcome") == "denied" and
          len(target.requests()) == 1, (first, second, target.requests()))
    target.stop()


def main():
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        for c in CASES:
            skip("state files of another user: " + c, "needs root and "
                 "useradd (a throwaway user)")
        return done()
    subprocess.run(["userdel", ATTACKER], stderr=subprocess.DEVNULL)
    subprocess.run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin",
                    ATTACKER], check=True)
    tmp = tmpdir()
    os.chmod(tmp, 0o755)
    try:
        attacker_limits(tmp)
        attacker_made(tmp, "journal.jsonl of another user", "journal",
                      lambda st: as_attacker(
                          "sh", "-c", "umask 0; : > '%s/journal.jsonl'" %
                          st), "journal.jsonl is owned by uid")
        attacker_made(tmp, "approvals/ of another user", "approvals",
                      lambda st: as_attacker(
                          "sh", "-c", "umask 0; mkdir '%s/approvals'" % st),
                      "approvals is owned by uid")
        attacker_made(tmp, "a symbolic link", "symlink",
                      lambda st: as_attacker(
                          "ln", "-s", "/etc/passwd", st + "/limits.jsonl"),
                      "limits.jsonl is a symbolic link")
        attacker_made(tmp, "our own file left 0666", "own",
                      lambda st: (open(st + "/journal.jsonl", "w").close(),
                                  os.chmod(st + "/journal.jsonl", 0o666)),
                      "journal.jsonl is writable by group or others")
        attacker_made(tmp, "a state_dir of mode 0777", "dir0777",
                      lambda st: os.chmod(st, 0o777),
                      "without the sticky bit")
        attacker_made(tmp, "a state_dir of another user", "dirother",
                      lambda st: (os.chmod(st, 0o755), os.chown(
                          st, int(subprocess.check_output(
                              ["id", "-u", ATTACKER])), -1)),
                      "neither the running user")
        replaced(tmp)
    finally:
        subprocess.run(["userdel", ATTACKER], stderr=subprocess.DEVNULL)
    return done()


if __name__ == "__main__":
    sys.exit(main())

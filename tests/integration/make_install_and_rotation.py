#!/usr/bin/env python3
"""make install and make uninstall into a DESTDIR (docs/design.md section
10): the units (the service naming the installed sp), the sysusers.d and
tmpfiles.d entries, run by systemd-sysusers and systemd-tmpfiles into a
scratch root, make the user, the group and the directories with the
units' owners and modes; the examples, the drop-in and the logrotate
snippet are where sp(1) says; uninstall leaves no file.  Then the
snippet's promise, with a real session: a rotation renames the log, the
session that had it open follows the rename (its next record creates the
log anew, linked to the renamed file's last), the two files verify as one
chain, and the next session goes on in the new log."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import (SP, finish, read_line, sanitized_build,  # noqa: E402
                        start, stop)
from sptest.tap import check, done, skip  # noqa: E402

SRC = os.environ["SP_SRCDIR"]
BUILD = os.environ["SP_BUILDDIR"]
BUDGET = 120
DIRS = ("bindir", "pkglibexecdir", "pkgdatadir", "examplesdir",
        "logrotatedir",
        "systemdsystemunitdir", "sysusersdir", "tmpfilesdir")
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
EXAMPLES = ("demo.json", "design.json", "http-readonly.json", "ssh-ops.json")
# The checks each part makes, each a counted skip where the part cannot run.
ACCOUNT_CHECKS = ("systemd-sysusers reads the entry",
                  "it makes the user sallyport",
                  "and the client group sallyport-clients",
                  "systemd-tmpfiles reads the entry",
                  "the directories: the README's owners and modes")
ROTATION_CHECKS = ("a session starts and writes its log",
                   "logrotate -f renames the log",
                   "the call after the rename is answered",
                   "the session ends cleanly",
                   "records before the rename stay there",
                   "next records go to a new log, linked",
                   "both files verify as one chain",
                   "the next session ends cleanly",
                   "and goes on in the log at the path",
                   "which still verifies with the renamed file",
                   "the renamed file is left as it was",
                   "the next rotation compresses the one before")


def make_env():
    """The parent make's jobserver is not ours to use."""
    e = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        e.pop(k, None)
    return e


def configured_dirs():
    """The install directories this build was configured with."""
    rule = "sp-dirs:\n" + "".join(
        "\t@echo '%s=$(%s)'\n" % (d, d) for d in DIRS)
    p = subprocess.run(["make", "-s", "-C", BUILD, "-f", "Makefile",
                        "-f", "-", "sp-dirs"], input=rule, text=True,
                       capture_output=True, env=make_env(), timeout=BUDGET)
    dirs = dict(line.split("=", 1) for line in p.stdout.splitlines()
                if "=" in line)
    return dirs if set(dirs) == set(DIRS) else None


def make(target, destdir):
    return subprocess.run(["make", "-C", BUILD, target, "DESTDIR=" + destdir],
                          capture_output=True, text=True, env=make_env(),
                          timeout=BUDGET)


def files_under(root):
    out = set()
    for d, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def expected(dirs):
    """{installed path: source file or None} relative to DESTDIR."""
    x = {dirs["bindir"] + "/sp": None,
         dirs["pkglibexecdir"] + "/sp-frontend": None,
         dirs["pkglibexecdir"] + "/sp-executor": None,
         dirs["pkgdatadir"] + "/sallyport-root.conf":
         "contrib/systemd/sallyport-root.conf",
         dirs["logrotatedir"] + "/sallyport": "contrib/logrotate/sallyport"}
    for e in EXAMPLES:
        x[dirs["examplesdir"] + "/" + e] = "contrib/examples/" + e
    if dirs["systemdsystemunitdir"] != "no":
        units = dirs["systemdsystemunitdir"]
        x[units + "/sallyport.socket"] = "contrib/systemd/sallyport.socket"
        x[units + "/sallyport@.service"] = None
        x[units + "/sallyport-metrics.service"] = None
        x[units + "/sallyport-metrics.timer"] = \
            "contrib/systemd/sallyport-metrics.timer"
    if dirs["sysusersdir"] != "no":
        x[dirs["sysusersdir"] + "/sallyport.conf"] = \
            "contrib/sysusers.d/sallyport.conf"
    if dirs["tmpfilesdir"] != "no":
        x[dirs["tmpfilesdir"] + "/sallyport.conf"] = \
            "contrib/tmpfiles.d/sallyport.conf"
    return {k.lstrip("/"): v for k, v in x.items()}


def test_install(tmp):
    dirs = configured_dirs()
    if not check("the build names its install directories", dirs, dirs):
        return
    dest = os.path.join(tmp, "dest")
    p = make("install", dest)
    if not check("make install DESTDIR=... succeeds", p.returncode == 0,
                 p.stdout[-2000:] + p.stderr[-2000:]):
        return
    want = expected(dirs)
    got = files_under(dest)
    missing = sorted(set(want) - got)
    check("make install puts each file where sp(1) FILES says",
          not missing, missing)
    same = [k for k, src in want.items() if src is not None and k in got and
            read(os.path.join(dest, k)) == read(os.path.join(SRC, src))]
    check("each is the shipped file, unchanged",
          len(same) == sum(1 for v in want.values() if v is not None),
          sorted(set(k for k, v in want.items() if v) - set(same)))
    modes = {k: oct(os.stat(os.path.join(dest, k)).st_mode & 0o7777)
             for k in want if k in got}
    programs = ("bin/sp", "/sp-frontend", "/sp-executor")
    check("data 0644, sp and its children's programs 0755",
          all(m == ("0o755" if k.endswith(programs) else "0o644")
              for k, m in modes.items()), modes)
    if dirs["systemdsystemunitdir"] != "no":
        svc = read(os.path.join(dest, dirs["systemdsystemunitdir"].lstrip("/"),
                                "sallyport@.service"))
        exec_start = re.findall(r"^ExecStart=(.*)$", svc, re.M)
        check("the installed service runs the installed sp",
              exec_start == [dirs["bindir"] + "/sp mcp --config "
                             "/etc/sallyport/policy.json"], exec_start)
        src = read(os.path.join(SRC, "contrib/systemd/sallyport@.service"))
        check("and differs from the shipped one in ExecStart= alone",
              [l for l in svc.splitlines() if not l.startswith("ExecStart=")]
              == [l for l in src.splitlines()
                  if not l.startswith("ExecStart=")])
        metrics = read(os.path.join(
            dest, dirs["systemdsystemunitdir"].lstrip("/"),
            "sallyport-metrics.service"))
        src = read(os.path.join(SRC,
                                "contrib/systemd/sallyport-metrics.service"))
        check("the installed metrics service runs the installed sp, and "
              "differs from the shipped one in that word alone",
              metrics == src.replace(" /usr/local/bin/sp metrics ",
                                     " %s/sp metrics " % dirs["bindir"]) and
              " %s/sp metrics " % dirs["bindir"] in metrics)
    else:
        check("configured without units: none installed",
              not any(n.endswith((".socket", ".service", ".timer"))
                  for n in got), got)
    test_accounts(tmp, dest, dirs)
    p = make("uninstall", dest)
    left = files_under(dest)
    check("make uninstall removes every file it installed",
          p.returncode == 0 and not left, (p.stderr[-2000:], sorted(left)))


def run_ok(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=BUDGET)
    return p.returncode == 0, p.stdout + p.stderr


def test_accounts(tmp, dest, dirs):
    """systemd-sysusers and systemd-tmpfiles on the installed entries, in a
    scratch root: as root, since tmpfiles chowns."""
    if "no" in (dirs["sysusersdir"], dirs["tmpfilesdir"]):
        for c in ACCOUNT_CHECKS:
            skip(c, "configured without sysusers.d or tmpfiles.d")
        return
    tools = [shutil.which("systemd-sysusers"), shutil.which("systemd-tmpfiles")]
    if None in tools or os.geteuid() != 0:
        for c in ACCOUNT_CHECKS:
            skip(c, "needs root and systemd-sysusers, systemd-tmpfiles")
        return
    root = os.path.join(tmp, "root")
    for kind, d in (("sysusers.d", dirs["sysusersdir"]),
                    ("tmpfiles.d", dirs["tmpfilesdir"])):
        os.makedirs(os.path.join(root, "usr/lib", kind))
        shutil.copy(os.path.join(dest, d.lstrip("/"), "sallyport.conf"),
                    os.path.join(root, "usr/lib", kind))
    os.makedirs(os.path.join(root, "etc"))
    ok, out = run_ok([tools[0], "--root=" + root])
    check("systemd-sysusers reads the entry", ok, out)
    users = {l.split(":")[0]: l.split(":") for l in
             read(os.path.join(root, "etc/passwd")).splitlines()}
    groups = {l.split(":")[0]: l.split(":") for l in
              read(os.path.join(root, "etc/group")).splitlines()}
    u = users.get("sallyport")
    check("it makes the user sallyport: its own group, no login",
          u is not None and groups.get("sallyport", [0, 0, 0])[2] == u[3]
          and u[5:] == ["/var/lib/sallyport", "/usr/sbin/nologin"], u)
    check("and the client group sallyport-clients",
          "sallyport-clients" in groups, groups)
    if u is None:
        return
    ok, out = run_ok([tools[1], "--root=" + root, "--create"])
    check("systemd-tmpfiles reads the entry", ok, out)
    want = {"etc/sallyport": (0o750, 0), "etc/sallyport/creds": (0o700, 1),
            "var/lib/sallyport": (0o711, 1), "var/log/sallyport": (0o700, 1)}
    got = {}
    for d in want:
        try:
            st = os.lstat(os.path.join(root, d))
            got[d] = (st.st_mode & 0o7777, st.st_uid, st.st_gid)
        except OSError as e:
            got[d] = str(e)
    uid, gid = int(u[2]), int(u[3])
    check("the directories: the README's owners and modes (the state "
          "directory 0711, traversable by approvers)",
          all(got[d] == (m, uid if own else 0, gid) for d, (m, own) in
              want.items()), got)


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def wait_kinds(path, kind, budget=BUDGET):
    """The kinds of the records in path once one of them is kind, or what
    is there when the budget ends."""
    end = time.monotonic() + budget
    while True:
        try:
            kinds = [r.get("kind") for r in records(path)]
        except (OSError, ValueError):
            kinds = []     # not there yet, or a record half written
        if kind in kinds or time.monotonic() > end:
            return kinds
        time.sleep(0.02)


def verify(paths):
    """sp audit verify over files oldest first: (ok, its verdict)."""
    p = subprocess.run([SP, "audit", "verify"] + paths, capture_output=True,
                       text=True, timeout=BUDGET)
    return p.returncode == 0, p.stdout + p.stderr


def test_rotation(tmp):
    logrotate = shutil.which("logrotate") or (
        os.path.exists("/usr/sbin/logrotate") and "/usr/sbin/logrotate")
    if not logrotate:
        for c in ROTATION_CHECKS:
            skip(c, "logrotate not installed")
        return
    logs = os.path.join(tmp, "logs")
    os.mkdir(logs, 0o700)
    snippet = read(os.path.join(SRC, "contrib/logrotate/sallyport"))
    conf = os.path.join(tmp, "logrotate.conf")
    with open(conf, "w", encoding="utf-8") as f:
        f.write(snippet.replace("/var/log/sallyport/", logs + "/"))
    config = shared_target_policy(logs)
    log = os.path.join(logs, "audit.jsonl")
    rotate = [logrotate, "-f", "-s", os.path.join(tmp, "state"), conf]

    p = start(config)
    try:
        p.stdin.write(INITIALIZE)
        p.stdin.flush()
        first = read_line(p, BUDGET)
        # The broker writes session-start and the client record after the
        # initialize answer has left: rotating before the second would
        # see it create the log anew, which is the next check's business.
        kinds = wait_kinds(log, "client")
        check("a session starts and writes its log",
              b'"id":0' in first and kinds[:1] == ["session-start"] and
              "client" in kinds, (first, kinds))
        ok, out = run_ok(rotate)
        check("logrotate -f renames the log and creates none (nocreate)",
              ok and not os.path.exists(log) and
              os.path.exists(log + ".1"), (out, os.listdir(logs)))
        # After the rename: a call (its id with a quote, a substitution,
        # an encoded dot-dot and text outside ASCII) is audited as intent
        # and execution (the target refuses the connection), then the
        # session ends.
        p.stdin.write(INITIALIZED)
        p.stdin.write(request(1, "tools/call", {
            "name": "get_item",
            "arguments": {"id": 'x"y $(z) %2e%2e é'}}))
        p.stdin.flush()
        answer = read_line(p, BUDGET)
        check("the call after the rename is answered", b'"id":1' in answer,
              answer)
        status, out, err = finish(p, b"", BUDGET)
    finally:
        stop(p)
    # Under ASan the children cannot exit cleanly (sanitized_build).
    check("the session ends cleanly",
          status == 0 or (sanitized_build() and status is not None), err)
    # The running session follows the rename (docs/sp-audit.5, ROTATION):
    # its next record creates the log anew at the path and links to the
    # last record of the renamed file.
    old = records(log + ".1")
    new = records(log) if os.path.exists(log) else []
    kinds = [r.get("kind") for r in old + new]
    check("the running session's records before the rename stay there",
          old and old[0].get("kind") == "session-start" and
          "intent" not in [r.get("kind") for r in old], kinds)
    mode = os.stat(log).st_mode & 0o777 if new else None
    check("its next records go to a new log at the path, mode 0600, linked",
          new and mode == 0o600 and new[0].get("rotated_from") ==
          {"seq": old[-1]["seq"], "hash": old[-1]["hash"]} and
          new[0].get("seq") == old[-1]["seq"] + 1 and
          "intent" in kinds and kinds[-1] == "session-end" and
          len({r.get("session") for r in old + new}) == 1,
          (kinds, new[:1], mode))
    ok, out = verify([log + ".1", log])
    check("both files verify as one chain (sp audit verify a.1 a)", ok, out)

    status, _, err = finish(start(config), INITIALIZE, BUDGET)
    check("the next session ends cleanly",
          status == 0 or (sanitized_build() and status is not None), err)
    after = records(log)
    check("and goes on in the log at the path",
          len(after) > len(new) and after[len(new)].get("seq") ==
          new[-1]["seq"] + 1, after[len(new):len(new) + 1])
    ok, out = verify([log + ".1", log])
    check("which still verifies with the renamed file", ok, out)
    check("the renamed file is left as it was", records(log + ".1") == old)
    ok, out = run_ok(rotate)
    check("the next rotation compresses the one before (delaycompress)",
          ok and os.path.exists(log + ".2.gz") and
          os.path.exists(log + ".1"), (out, sorted(os.listdir(logs))))


def main():
    tmp = tempfile.mkdtemp(prefix="sp-ops-install-")
    try:
        test_install(tmp)
        test_rotation(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

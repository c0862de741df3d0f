#!/usr/bin/env python3
"""A value that starts with '-' is an option to the remote program even as
one quoted word (issue 14 finding 3): `ls {path}` with "-la" listed a home
directory, `grep -c {pat} F` with "-f/etc/shadow" read that file.  The real
`sp mcp` against the throwaway sshd: each remote command is a wrapper that
logs its arguments to runs.log, then runs the program, so the log counts
what reached the host.  Refused values reach nothing and come back
invalid, naming the param; after a literal "--" element the same value is
an operand; a param with "allow_leading_dash" lets it through as an
option, which is what the key means.  `sp check` warns of the unprotected
placeholders only."""
import getpass
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, Session, tmpdir  # noqa: E402
from sptest.sshd import sshd_fixture  # noqa: E402
from sptest.tap import check, done  # noqa: E402

REFUSED = "must not start with '-' here: the command would read it as " \
          "an option"


def setup_files(tmp):
    """The wrapper, a data file for grep and a file of secret patterns."""
    runs = os.path.join(tmp, "runs.log")
    wrap = os.path.join(tmp, "wrap.sh")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\nprog=$1; shift\n"
                "printf '%%s\\n' \"$prog $#\" \"$@\" >> %s\n"
                "exec \"$prog\" \"$@\"\n" % runs)
    os.chmod(wrap, 0o755)
    data = os.path.join(tmp, "data.txt")
    with open(data, "w") as f:
        f.write("alpha\nbeta\ngamma\n")
    secret = os.path.join(tmp, "secret.txt")
    with open(secret, "w") as f:
        f.write("alpha\nbeta\n")
    os.mkdir(os.path.join(tmp, "listed"))
    with open(os.path.join(tmp, "listed", ".hidden-entry"), "w") as f:
        f.write("x")
    return wrap, data, secret, runs


def make_policy(tmp, port, wrap, data):
    path = {"type": "string", "maxLength": 300,
            "pattern": "[A-Za-z0-9_./-]+"}
    pat = {"type": "string", "maxLength": 300}

    def tool(name, argv, params):
        return {"name": name, "description": "Test tool %s." % name,
                "target": "host", "scope": "run", "ssh": {"argv": argv},
                "params": params}

    listed = os.path.join(tmp, "listed")
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "exec-ssh-dash", "on_invalid": "reject"},
        "limits": {"call_timeout_ms": 10000},
        "credentials": {"key": {
            "type": "ssh-key",
            "private_key": os.path.join(tmp, "user_ed25519"),
            "public_key": os.path.join(tmp, "user_ed25519.pub")}},
        "targets": {"host": {
            "type": "ssh", "host": "127.0.0.1", "port": port,
            "user": getpass.getuser(), "credential": "key",
            "known_hosts": os.path.join(tmp, "known_hosts")}},
        "tools": [
            tool("list", [wrap, "ls", "{path}", listed], {"path": path}),
            tool("count", [wrap, "grep", "-c", "{pat}", data],
                 {"pat": pat}),
            tool("count_dd", [wrap, "grep", "-c", "--", "{pat}", data],
                 {"pat": pat}),
            tool("count_optin", [wrap, "grep", "-c", "{pat}", data],
                 {"pat": dict(pat, allow_leading_dash=True)}),
            tool("nums", [wrap, "echo", "{n}"], {"n": {"type": "integer"}}),
        ],
        "profiles": {"default": {"scopes": ["run"]}},
    })


def runs(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def outcome(answer):
    return structured(answer).get("outcome")


def text_of(answer):
    if answer is None:
        return ""
    return "".join(c.get("text", "") for c in
                   answer[0].get("result", {}).get("content", []))


def stdout_of(answer):
    return structured(answer).get("ssh", {}).get("stdout")


def phase_check(cfg):
    r = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       text=True, timeout=60)
    warned = sorted(l.split("tools[")[1].split("]")[0]
                    for l in r.stderr.splitlines() if ": warning: " in l)
    check("sp check: exit 0, the policy is valid", r.returncode == 0,
          r.stderr)
    check("sp check warns of list, count and nums (tools 0, 1, 4) only",
          warned == ["0", "1", "4"], r.stderr)
    check("each warning names the placeholder and the way out",
          all("may start with '-' and no \"--\" element comes before it"
              in l and "allow_leading_dash" in l
              for l in r.stderr.splitlines() if ": warning: " in l),
          r.stderr)


def phase_calls(cfg, secret, data, log):
    s = Session(cfg)
    refused = [("list", "path", "-la"), ("list", "path", "--all"),
               ("count", "pat", "-f" + secret), ("count", "pat", "--"),
               ("count", "pat", "-e$(touch x)"), ("nums", "n", -5)]
    for i, (name, param, value) in enumerate(refused):
        s.call(10 + i, name, {param: value})
    got = s.wait([10 + i for i in range(len(refused))])
    for i, (name, param, value) in enumerate(refused):
        a = got.get(10 + i)
        check("%s %r: invalid, naming %s" % (name, value, param),
              outcome(a) == "invalid" and
              "%s: %s" % (param, REFUSED) in text_of(a), a)
    check("no refused value reached the host (runs.log empty)",
          runs(log) == "", runs(log))

    s.call(30, "count_dd", {"pat": "-f" + secret})
    a = s.wait([30]).get(30)
    check("after \"--\": -f<file> is a pattern, grep counts 0 lines",
          outcome(a) == "ok" and stdout_of(a) == "0\n" and
          runs(log) == "grep 4\n-c\n--\n-f%s\n%s\n" % (secret, data),
          (a, runs(log)))
    s.call(31, "list", {"path": "la"})
    s.call(32, "nums", {"n": 5})
    s.wait([31, 32])
    check("operands that do not start with '-' still run",
          runs(log).count("\n") == 5 + 3 + 2 and "ls 2\nla\n" in runs(log)
          and "echo 1\n5\n" in runs(log), runs(log))
    s.call(33, "count_optin", {"pat": "-f" + secret})
    a = s.wait([33]).get(33)
    check("allow_leading_dash: the value reaches grep as an option "
          "(2 lines match the file's patterns)",
          outcome(a) == "ok" and stdout_of(a) == "2\n" and
          runs(log).endswith("grep 3\n-c\n-f%s\n%s\n" % (secret, data)),
          (a, runs(log)))
    status = s.close()
    check("the session ends with 0", status == 0,
          s.stderr.decode("utf-8", "replace"))


def main():
    tmp = tmpdir()
    wrap, data, secret, log = setup_files(tmp)
    with sshd_fixture(tmp) as port:
        cfg = make_policy(tmp, port, wrap, data)
        phase_check(cfg)
        phase_calls(cfg, secret, data, log)
    done()


main()

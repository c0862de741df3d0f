#!/usr/bin/env python3
"""A known_hosts file holding a marker line (@cert-authority, @revoked)
verifies nothing (docs/sp-policy.5, known_hosts): a policy whose SSH
target's file has one fails the start-up checks (policy/startcheck.c),
so sp check refuses it and sp mcp exits 78 before any child starts,
telling the client why, even when a plain line for the right host key is
there too, and even for the server's own key written as a certificate
authority.  Counted where it would show: the command's marker file, and
sshd's log of accepted logins.  A control target with the plain line
alone runs its command, so the setup is able to show a run."""
import getpass
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import subprocess  # noqa: E402
from sptest.mcp import INITIALIZE, start_refusal, structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, Session, finish, sp_env, start, tmpdir  # noqa: E402
from sptest.sshd import sshd_fixture  # noqa: E402
from sptest.tap import check, done  # noqa: E402


def key_of(tmp, name):
    """"type base64" of a fixture key's public half."""
    with open(os.path.join(tmp, name + ".pub")) as f:
        return " ".join(f.read().split()[:2])


def variants(tmp, port):
    """name -> known_hosts text; "plain" is the control."""
    host = "[127.0.0.1]:%d" % port
    right, other = key_of(tmp, "host_key"), key_of(tmp, "other_host_key")
    plain = "%s %s\n" % (host, right)
    return {
        "plain": plain,
        "ca-only": "@cert-authority %s %s\n" % (host, right),
        "ca-wildcard": "@cert-authority * %s\n" % right,
        "ca-then-plain": "@cert-authority %s %s\n%s" % (host, right, plain),
        "indented-ca-after-plain": "%s \t@cert-authority %s %s\n" %
        (plain, host, right),
        "revoked-other-then-plain": "@revoked %s %s\n%s" %
        (host, other, plain),
        "crlf-ca-then-plain": "@cert-authority %s %s\r\n%s" %
        (host, right, plain),
    }


def make_policy(tmp, port, name, text):
    kh = os.path.join(tmp, "known_hosts-" + name)
    with open(kh, "w") as f:
        f.write(text)
    key = {"type": "ssh-key",
           "private_key": os.path.join(tmp, "user_ed25519"),
           "public_key": os.path.join(tmp, "user_ed25519.pub")}
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "exec-ssh-markers"},
        "limits": {"call_timeout_ms": 60000},
        "credentials": {"key": key},
        "targets": {"host": {"type": "ssh", "host": "127.0.0.1",
                             "port": port, "user": getpass.getuser(),
                             "credential": "key", "known_hosts": kh}},
        "tools": [{"name": "mark", "description": "Leaves a marker file.",
                   "target": "host", "scope": "run",
                   "ssh": {"argv": ["touch",
                                    os.path.join(tmp, "ran-" + name)]},
                   "params": {}}],
        "profiles": {"default": {"scopes": ["run"]}},
    })


def accepted(tmp):
    with open(os.path.join(tmp, "sshd.log"), errors="replace") as f:
        return f.read().count("Accepted publickey")


def one(tmp, port, name, text):
    """(answer, marker file exists, logins sshd accepted) after a
    session that made one call and then ended."""
    before = accepted(tmp)
    s = Session(make_policy(tmp, port, name, text))
    s.call(1, "mark", {})
    got = s.wait([1], timeout=120).get(1)
    status = s.close(timeout=60)
    ran = os.path.exists(os.path.join(tmp, "ran-" + name))
    return got, status, ran, accepted(tmp) - before, s.stderr


def refused(tmp, port, name, text):
    """(sp check status and stderr, sp mcp status, its refusal, marker
    file exists, logins sshd accepted) for a policy that must not start."""
    before = accepted(tmp)
    cfg = make_policy(tmp, port, name, text)
    c = subprocess.run([SP, "check", "--config", cfg], capture_output=True,
                       timeout=60, env=sp_env())
    status, out, err = finish(start(cfg), INITIALIZE, timeout=60)
    ran = os.path.exists(os.path.join(tmp, "ran-" + name))
    return (c.returncode, c.stderr.decode("utf-8", "replace"), status,
            start_refusal(out), ran, accepted(tmp) - before, err)


def main():
    tmp = tmpdir()
    with sshd_fixture(tmp) as port:
        for name, text in variants(tmp, port).items():
            if name == "plain":
                got, status, ran, logins, err = one(tmp, port, name, text)
                sc = structured(got)
                check("control, the plain line alone: the command ran, "
                      "one login", sc.get("outcome") == "ok" and ran and
                      logins == 1, (got, logins, err))
                continue
            cst, cerr, status, why, ran, logins, err = refused(
                tmp, port, name, text)
            check("%s: sp check exits 78 naming the marker" % name,
                  cst == 78 and "markers such as @revoked" in cerr, cerr)
            check("%s: sp mcp exits 78, the client told of the marker" %
                  name, status == 78 and why is not None and
                  "markers such as @revoked" in why, (status, why, err))
            check("%s: no marker file, no login at sshd (%d)" %
                  (name, logins), not ran and logins == 0, (ran, logins))
    done()


main()

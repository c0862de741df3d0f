#!/usr/bin/env python3
"""A known_hosts file holding a marker line (@cert-authority, @revoked)
verifies nothing (docs/sp-policy.5, known_hosts): an SSH target whose
file has one is denied before anything runs, even when a plain line for
the right host key is there too, and even for the server's own key
written as a certificate authority.  Counted where it would show: the
command's marker file, and sshd's log of accepted logins.  A control
target with the plain line alone runs its command, so the setup is able
to show a run."""
import getpass
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
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


def main():
    tmp = tmpdir()
    with sshd_fixture(tmp) as port:
        for name, text in variants(tmp, port).items():
            got, status, ran, logins, err = one(tmp, port, name, text)
            sc = structured(got)
            if name == "plain":
                check("control, the plain line alone: the command ran, "
                      "one login", sc.get("outcome") == "ok" and ran and
                      logins == 1, (got, logins, err))
                continue
            check("%s: answered denied, naming the marker" % name,
                  sc.get("outcome") == "denied" and
                  "marker" in sc.get("message", ""), (got, err))
            check("%s: no marker file, no login at sshd (%d)" %
                  (name, logins), not ran and logins == 0, (ran, logins))
            check("%s: the session still ends with 0" % name, status == 0,
                  err)
    done()


main()

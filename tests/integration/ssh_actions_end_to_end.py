#!/usr/bin/env python3
"""SSH actions end to end (issue 7): the real `sp mcp` against a throwaway
OpenSSH sshd on 127.0.0.1 (sshd_fixture.sh).  Exit status, stderr and cut
output come back; hostile values reach the remote command as literal
arguments; a host key mismatch is denied before anything runs; a wrong
user key fails; a timeout is unknown; calls share one connection."""
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

BIG = 5 * 1024 * 1024

HOSTILE = ["'; touch {m}/x1 '", "$(touch {m}/x2)", "`touch {m}/x3`",
           "a\ntouch {m}/x4", "--option=\"$(touch {m}/x5)\"",
           "h\u00e9llo \u6f22 %2e%2e"]


def make_policy(tmp, port):
    string = {"type": "string", "maxLength": 300}

    def target(known_hosts, cred):
        return {"type": "ssh", "host": "127.0.0.1", "port": port,
                "user": getpass.getuser(), "credential": cred,
                "known_hosts": os.path.join(tmp, known_hosts)}

    def tool(name, tgt, argv, params=None, **extra):
        t = {"name": name, "description": "Test tool %s." % name,
             "target": tgt, "scope": "run", "ssh": {"argv": argv},
             "params": params or {}}
        t.update(extra)
        return t

    key = {"type": "ssh-key",
           "private_key": os.path.join(tmp, "user_ed25519"),
           "public_key": os.path.join(tmp, "user_ed25519.pub")}
    stranger = {"type": "ssh-key",
                "private_key": os.path.join(tmp, "stranger")}
    # The script records its arguments, one per line, after their count.
    record = "printf '%s\\n' \"$#\" \"$@\" > " + os.path.join(tmp, "args.out")
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "exec-ssh"},
        # far above need: under load 20 echo calls took over 10 s
        "limits": {"call_timeout_ms": 60000},
        "credentials": {"key": key, "stranger": stranger},
        "targets": {"host": target("known_hosts", "key"),
                    "impostor": target("known_hosts_other", "key"),
                    "locked": target("known_hosts", "stranger")},
        "tools": [
            tool("echo", "host", ["echo", "{word}"], {"word": string}),
            # The script only prints "$@": a value such as --option=...
            # is an operand to it, so v opts in (sp-policy.5, ssh).
            tool("record", "host", ["sh", "-c", record, "sh", "{v}"],
                 {"v": dict(string, allow_leading_dash=True)}),
            tool("fail3", "host",
                 ["sh", "-c", "echo out; echo error-text >&2; exit 3"]),
            tool("big", "host", ["head", "-c", str(BIG), "/dev/zero"]),
            tool("mark_impostor", "impostor",
                 ["touch", os.path.join(tmp, "impostor-ran")]),
            tool("mark_locked", "locked",
                 ["touch", os.path.join(tmp, "locked-ran")]),
            tool("sleepy", "host", ["sleep", "5"], timeout_ms=1500),
        ],
        "profiles": {"default": {"scopes": ["run"]}},
    })


def accepted(tmp):
    with open(os.path.join(tmp, "sshd.log"), errors="replace") as f:
        return f.read().count("Accepted publickey")


def message(answer):
    return structured(answer).get("message", "")


def outcome(answer):
    return structured(answer).get("outcome")


def phase_main(cfg, tmp):
    s = Session(cfg)
    twenty = {}
    for wave in (0, 10):  # two waves of 10: max_inflight is 16
        for i in range(wave, wave + 10):
            s.call(100 + i, "echo", {"word": "w%d" % i})
        twenty.update(s.wait([100 + i for i in range(wave, wave + 10)]))
    check("20 echo calls: all exit 0",
          len(twenty) == 20 and all(
              outcome(a) == "ok" and message(a).startswith("exit status 0")
              for a in twenty.values()), twenty)
    check("20 calls: sshd accepted one connection", accepted(tmp) == 1,
          accepted(tmp))

    for i, v in enumerate(HOSTILE):
        v = v.replace("{m}", tmp)
        s.call(200 + i, "record", {"v": v})
        a = s.wait([200 + i]).get(200 + i)
        try:
            with open(os.path.join(tmp, "args.out")) as f:
                got = f.read()
        except OSError:
            got = None
        check("hostile %r arrives as one literal argument" % v,
              outcome(a) == "ok" and got == "1\n%s\n" % v, (a, got))
    check("no hostile value ran a command (no marker file)",
          not any(os.path.exists(os.path.join(tmp, "x%d" % n))
                  for n in range(1, 6)))

    s.call(300, "fail3", {})
    a = s.wait([300]).get(300)
    check("non-zero exit: outcome ok, exit status 3, stdout and stderr",
          outcome(a) == "ok" and message(a) ==
          "exit status 3 (stdout 4 bytes, stderr 11 bytes)", a)
    sc = structured(a).get("ssh") or {}
    check("non-zero exit: stderr text is returned",
          "error-text" in sc.get("stderr", ""), a)

    s.call(400, "big", {})
    a = s.wait([400]).get(400)
    check("5 MB of output: cut, the message says how much of how much",
          outcome(a) == "ok" and "stdout cut at" in message(a) and
          "of %d bytes" % BIG in message(a), a)

    s.call(500, "sleepy", {})
    a = s.wait([500]).get(500)
    check("a command past its 1500 ms budget: unknown",
          outcome(a) == "unknown", a)
    status = s.close()
    check("the session ends with 0", status == 0,
          s.stderr.decode("utf-8", "replace"))
    check("the private key is in no stdout or stderr",
          open(os.path.join(tmp, "user_ed25519"), "rb").read() not in
          s.stdout + s.stderr)


def phase_refusals(cfg, tmp):
    before = accepted(tmp)
    s = Session(cfg)
    s.call(1, "mark_impostor", {})
    s.call(2, "mark_locked", {})
    got = s.wait([1, 2])
    s.close()
    check("host key mismatch: denied, naming the fingerprints",
          outcome(got.get(1)) == "denied" and
          "SHA256:" in message(got.get(1)), got.get(1))
    check("host key mismatch: the command never ran",
          not os.path.exists(os.path.join(tmp, "impostor-ran")))
    check("wrong user key: failed, and the command never ran",
          outcome(got.get(2)) == "failed" and
          not os.path.exists(os.path.join(tmp, "locked-ran")), got.get(2))
    check("neither was let in by sshd", accepted(tmp) == before,
          (before, accepted(tmp)))


def main():
    tmp = tmpdir()
    with sshd_fixture(tmp) as port:
        cfg = make_policy(tmp, port)
        phase_main(cfg, tmp)
        phase_refusals(cfg, tmp)
    done()


main()

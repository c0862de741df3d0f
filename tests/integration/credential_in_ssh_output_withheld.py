#!/usr/bin/env python3
"""SSH output cannot hand a credential to the client (issue 14, finding 1):
no SSH credential sends a secret on stdin (the project has none), but a
remote command can still print one the executor holds, here the bearer
token of an HTTP target, to stdout (raw and JSON-escaped) and to stderr.
Through the real `sp mcp` and the throwaway sshd: the commands ran (sshd
accepted the key, the outputs carry the marker), sp's stdout holds no
form of the token, and each result says "redacted": true."""
import getpass
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy, write_secret  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.sshd import sshd_fixture  # noqa: E402
from sptest.tap import check, done  # noqa: E402

TOKEN = "S5h-t0k/\"e\u00e9n+$(id)"
MARKER = "[credential withheld]"


def make_policy(tmp, port, token_file):
    def tool(name, argv):
        return {"name": name, "description": "Print the token.",
                "target": "host", "scope": "run", "ssh": {"argv": argv}}

    # python3 -c prints the file JSON-escaped, as a JSON API would.
    as_json = "import json,sys; print(json.dumps(open(sys.argv[1]).read()))"
    return write_policy(tmp, {
        "sallyport": 1, "server": {"name": "exec-redact-ssh"},
        "limits": {"call_timeout_ms": 10000},
        "credentials": {
            "key": {"type": "ssh-key",
                    "private_key": os.path.join(tmp, "user_ed25519")},
            "tok": {"type": "bearer", "file": token_file}},
        "targets": {
            "host": {"type": "ssh", "host": "127.0.0.1", "port": port,
                     "user": getpass.getuser(), "credential": "key",
                     "known_hosts": os.path.join(tmp, "known_hosts")},
            "api": {"type": "http", "base_url": "http://127.0.0.1:9",
                    "credential": "tok"}},
        "tools": [tool("out", ["cat", token_file]),
                  tool("err", ["sh", "-c", "cat \"$0\" >&2; echo done",
                               token_file]),
                  tool("json", ["python3", "-c", as_json, token_file])],
        "profiles": {"default": {"scopes": ["run"]}}})


def main():
    tmp = tmpdir()
    token_file = write_secret(tmp, "tok", TOKEN.encode())
    with sshd_fixture(tmp) as port:
        s = Session(make_policy(tmp, port, token_file))
        for rid, name in ((1, "out"), (2, "err"), (3, "json")):
            s.call(10 + rid, name, {})
        got = s.wait([11, 12, 13], timeout=30)
        s.close()
    stdout = s.stdout.decode("utf-8", "replace")
    # As the output held it, as the JSON-RPC line escapes it (cJSON keeps
    # UTF-8), and escaped again in the text content block.
    once = {TOKEN, json.dumps(TOKEN)[1:-1]}
    forms = once | {json.dumps(f, ensure_ascii=False)[1:-1] for f in once}
    forms |= {json.dumps(f, ensure_ascii=False)[1:-1] for f in set(forms)}
    n = sum(stdout.count(f) for f in forms)
    print("# token occurrences on stdout: %d" % n)
    check("no form of the token on stdout", n == 0, n)
    for rid, stream in ((11, "stdout"), (12, "stderr"), (13, "stdout")):
        sc = structured(got.get(rid))
        shown = sc.get("ssh", {}).get(stream, "")
        check("call %d: exit 0, redacted, the marker in its %s"
              % (rid, stream), sc.get("outcome") == "ok" and
              sc.get("ssh", {}).get("exit_status") == 0 and
              sc.get("redacted") is True and MARKER in shown, sc)
    done()


main()

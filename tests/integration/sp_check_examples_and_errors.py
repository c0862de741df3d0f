#!/usr/bin/env python3
"""sp check, run as a user would: the shipped examples pass once the files
they name exist (as root: checked --user daemon, as a service user would
run them); broken policies exit 78 with one FILE:LINE:COL line per problem
on stderr; nothing is ever written to stdout."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import ROOT_RUN_AS  # noqa: E402
from sptest.tap import check, done  # noqa: E402

SP = os.environ["SP_BIN"]
SRC = os.environ["SP_SRCDIR"]
EXAMPLES = os.path.join(SRC, "contrib", "examples")
DIAG = re.compile(r"^[^:\n]+:\d+:\d+: (warning: )?\S.*$")

# As root the examples are checked as the user a service runs as.
SERVICE = ["--user", "daemon"] if os.geteuid() == 0 else []
SERVICE_UID = 1 if os.geteuid() == 0 else os.geteuid()
# What each kind of file the examples name holds (policy/startcheck.c
# reads them all): a host key line, a public key, a 32-byte audit key.
PUBLIC_KEY = (b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOzyXLQUhRWvyCnuf9sELB2Q"
              b"PtLar6+7GN2DpGwKkaib ops@example\n")
CONTENT = {"known_hosts": b"web1.example.com " + PUBLIC_KEY,
           "id_ed25519.pub": PUBLIC_KEY,
           "audit.key": b"k\"$(id)\n\xc3\xa9" + b"k" * 40}


def sp(*args, env=None):
    e = dict(os.environ)
    e.pop("SP_CONFIG", None)
    if env:
        e.update(env)
    return subprocess.run([SP, *args], capture_output=True, text=True,
                          env=e, timeout=20)


def install(example, root):
    """Copies an example into root, pointing /etc/sallyport/ and
    /var/log/sallyport/ there, and creates each file it names with mode
    0600, owned by the service user (audit logs: only their directory)."""
    with open(os.path.join(EXAMPLES, example), encoding="utf-8") as f:
        text = f.read().replace("/etc/sallyport/", root + "/").replace(
            "/var/log/sallyport/", root + "/log/")
    os.makedirs(os.path.join(root, "log"), exist_ok=True)
    os.chown(os.path.join(root, "log"), SERVICE_UID, -1)
    for path in set(re.findall(re.escape(root) + r"/[^\"]+", text)):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if path.endswith(".jsonl") or os.path.exists(path):
            continue
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, CONTENT.get(os.path.basename(path),
                                 b"not a real secret\n"))
        os.close(fd)
        os.chown(path, SERVICE_UID, -1)
    policy = os.path.join(root, example)
    with open(policy, "w", encoding="utf-8") as f:
        f.write(text)
    return policy


def write(root, name, text):
    path = os.path.join(root, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def main():
    root = tempfile.mkdtemp(prefix="sp-check-")
    os.chmod(root, 0o755)
    try:
        run_all(root)
    finally:
        shutil.rmtree(root)
    done()


def run_all(root):
    examples = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".json"))
    check("at least the http and ssh examples ship",
          {"http-readonly.json", "ssh-ops.json"} <= set(examples), examples)
    for example in examples:
        policy = install(example, root)
        r = sp("check", "--config", policy, *SERVICE)
        check("example %s passes (exit 0)" % example, r.returncode == 0,
              r.stderr)
        check("example %s: stdout stays empty" % example, r.stdout == "",
              r.stdout)
        check("example %s: says ok" % example,
              r.stderr.splitlines()[-1:] and
              r.stderr.splitlines()[-1].startswith(policy + ": ok: "),
              r.stderr)

    # The same example whose secret file is missing, then too open.
    policy = install("http-readonly.json", root)
    token = os.path.join(root, "creds", "tracker.token")
    os.chmod(token, 0o644)
    r = sp("check", "--config=" + policy, *SERVICE)
    want = ("%s:8:50: secret file %s is open to group or others (mode 0644);"
            " chmod 600 it (strict_credentials)" % (policy, token))
    check("strict_credentials: a 0644 token is an error, exit 78",
          r.returncode == 78 and want in r.stderr.splitlines(), r.stderr)
    os.unlink(token)
    r = sp("check", "--config", policy, *SERVICE)
    check("missing secret file: exit 78, named at its line",
          r.returncode == 78 and (policy + ":8:50: secret file " + token +
                                  " cannot be opened: No such file or "
                                  "directory") in r.stderr.splitlines(),
          r.stderr)

    bad = write(root, "bad.json", """{
  "sallyport": 1,
  "server": { "sandbox": "off" },
  "targets": { "api": { "type": "http", "base_url": "http://api.example.com" } },
  "tools": [
    { "name": "get", "description": "Fetch.", "target": "api", "scope": "*",
      "http": { "method": "GET", "path": "/items/{id}/{idd}" },
      "params": { "id": { "type": "string", "pattern": "(" } } }
  ],
  "profiles": { "p": { "scopes": ["read"], "match": { "uid": [1.5] } } }
}
""")
    r = sp("check", "--config", bad)
    lines = r.stderr.splitlines()
    check("bad policy: exit 78", r.returncode == 78, r.returncode)
    check("bad policy: stdout stays empty", r.stdout == "", r.stdout)
    check("bad policy: every line is FILE:LINE:COL: message",
          lines and all(DIAG.match(l) for l in lines), r.stderr)
    expected = [
        bad + ':3:26: server.sandbox: must be "required" or "best-effort"',
        bad + ":4:53: targets.api.base_url: uses http:// for a host that is "
        "not loopback; use https://",
        bad + ':6:73: tools[0].scope: "*": there is no wildcard scope',
        bad + ":7:42: tools[0].http.path: placeholder {idd} names no param "
        "of this tool",
        bad + ":8:56: tools[0].params.id.pattern: pattern does not compile "
        "at offset 1: missing closing parenthesis",
        bad + ":10:63: profiles.p.match.uid[0]: must be an integer, not 1.5",
    ]
    check("bad policy: all six problems, in text order", lines == expected,
          "\n".join(["want:"] + expected + ["got:"] + lines))

    # Hostile text in keys stays on one line per problem.
    hostile = write(root, "hostile.json",
                    '{"sallyport": 1, "a\\n\\"$(id)`x`%2e%2e\\r\u00e9": 1}')
    r = sp("check", "--config", hostile)
    check("hostile key: one line, escaped",
          r.returncode == 78 and r.stderr.splitlines() == [
              hostile + ':1:18: unknown key "a\\n\\"$(id)`x`%2e%2e\\u000d\u00e9"'],
          r.stderr)

    # A near miss of a key the loader's own table holds gets its name;
    # a key near two (or near none) gets no guess.
    typo = write(root, "typo.json", """{ "sallyport": 1, "sever": {},
  "credentials": { "t": { "type": "bearer", "flie": "/x" } },
  "targets": { "api": { "type": "http", "base_url": "http://127.0.0.1:9" } },
  "tools": [ { "name": "get", "description": "Fetch.", "target": "api",
    "scpoe": "read", "http": { "method": "GET", "path": "/{id}" },
    "params": { "id": { "type": "string", "maxLenght": 3 } } } ],
  "profiles": { "p": { "scopes": ["read"], "mach": {} } },
  "x": 1, "$(id)\u00e9": 2 }
""")
    r = sp("check", "--config", typo)
    lines = r.stderr.splitlines()
    expected = [
        typo + ':1:19: unknown key "sever"; did you mean "server"?',
        typo + ':2:45: credentials.t: unknown key "flie"; did you mean '
        '"file"?',
        typo + ':5:5: tools[0]: unknown key "scpoe"; did you mean "scope"?',
        typo + ':6:43: tools[0].params.id: unknown key "maxLenght" for a '
        'string param; did you mean "maxLength"?',
        typo + ':7:44: profiles.p: unknown key "mach"; did you mean '
        '"match"?',
        typo + ':8:3: unknown key "x"',
        typo + ':8:11: unknown key "$(id)\u00e9"',
    ]
    check("near-miss keys: did you mean, from the loader's key tables",
          r.returncode == 78 and [l for l in lines if "unknown key" in l]
          == expected, "\n".join(["want:"] + expected + ["got:"] + lines))

    # Grants: a scope no profile grants and a profile granting no tool
    # are warnings; the policy still passes.
    grants = write(root, "grants.json", """{ "sallyport": 1,
  "targets": { "api": { "type": "http", "base_url": "http://127.0.0.1:9" } },
  "tools": [ { "name": "get", "description": "Fetch.", "target": "api",
    "scope": "read", "http": { "method": "GET", "path": "/" } },
    { "name": "put", "description": "Store.", "target": "api",
    "scope": "write", "mutating": true, "http": { "method": "PUT", "path": "/" } },
    { "name": "del", "description": "Drop.", "target": "api",
    "scope": "write", "mutating": true, "http": { "method": "DELETE", "path": "/" } } ],
  "profiles": { "default": { "scopes": ["read"] }, "none": { "scopes": [] },
    "odd": { "scopes": ["admin"] } } }
""")
    r = sp("check", "--config", grants, *SERVICE)
    lines = r.stderr.splitlines()
    check("grants: exit 0 with warnings", r.returncode == 0, r.stderr)
    check("grants: scope write is granted by no profile, said once",
          [l for l in lines if "granted by no profile" in l] ==
          [grants + ':1:1: warning: scope "write" (of tool put) is granted '
           'by no profile: no client can call it'], r.stderr)
    check("grants: profiles none and odd grant no tool",
          [l for l in lines if "grants no tool" in l] ==
          [grants + ':1:1: warning: profile "%s" grants no tool: a client '
           'it matches sees an empty catalog' % n for n in ("none", "odd")],
          r.stderr)

    syntax = write(root, "syntax.json", '{"sallyport": 1,\n  "tools": [,]\n}\n')
    r = sp("check", "--config", syntax)
    check("syntax error: located", r.returncode == 78 and
          r.stderr == syntax + ":2:13: unexpected character\n", r.stderr)

    # A catalog pin that no longer matches fails the check, at the pin.
    good = install("ssh-ops.json", root)
    with open(good, encoding="utf-8") as f:
        text = f.read()
    stale = write(root, "stale.json", text.replace(
        '"sallyport": 1,', '"sallyport": 1, "catalog_sha256": "%s",' % ("0" * 64), 1))
    r = sp("check", "--config", stale, *SERVICE)
    check("stale catalog_sha256: exit 78, located at the pin",
          r.returncode == 78 and any(l.startswith(
              stale + ":2:37: catalog_sha256 is " + "0" * 64 +
              " but the catalog's fingerprint is ")
              for l in r.stderr.splitlines()), r.stderr)

    # Lookup order: --config, then $SP_CONFIG.
    good = install("ssh-ops.json", root)
    r = sp("check", *SERVICE, env={"SP_CONFIG": good})
    check("$SP_CONFIG is used without --config", r.returncode == 0 and
          (good + ": ok: 4 tools") in r.stderr, r.stderr)
    r = sp("check", "--config", bad, env={"SP_CONFIG": good})
    check("--config wins over $SP_CONFIG", r.returncode == 78, r.stderr)
    missing = os.path.join(root, "nope.json")
    r = sp("check", "--config", missing)
    check("unreadable policy: exit 78 and the reason", r.returncode == 78 and
          r.stderr == missing + ": cannot read the policy: No such file or "
          "directory\n", r.stderr)
    if not os.path.exists("/etc/sallyport/policy.json"):
        r = sp("check", env={"SP_CONFIG": ""})
        check("no --config, empty $SP_CONFIG: the system path",
              r.returncode == 78 and r.stderr.startswith(
                  "/etc/sallyport/policy.json: cannot read"), r.stderr)
    r = sp("check", "--bogus")
    check("unknown option: usage, exit 64", r.returncode == 64 and
          "usage: sp check [--config FILE] [--user NAME] [--dump]" in r.stderr, r.stderr)

    # confirm.via "operator" (sp approve): approvers and state_dir needed.
    op = write(root, "operator.json", """{
  "sallyport": 1,
  "targets": { "api": { "type": "http", "base_url": "http://127.0.0.1:9" } },
  "tools": [
    { "name": "wipe", "description": "Wipe.", "target": "api",
      "scope": "w", "mutating": true,
      "confirm": { "via": "operator", "others_only": true },
      "http": { "method": "POST", "path": "/wipe" } }
  ],
  "profiles": { "p": { "scopes": ["w"] } }
}
""")
    r = sp("check", "--config", op)
    check("via operator without approvers or state_dir: exit 78, both said",
          r.returncode == 78 and r.stderr.splitlines() == [
              op + ':7:18: tools[0].confirm: via "operator" needs '
              'approvers: { "uid": [...], "gid": [...] }, who may run sp '
              'approve for this tool',
              op + ':7:27: tools[0].confirm.via: "operator" needs a '
              'state_dir: the approval sockets are made in '
              'state_dir/approvals/'], r.stderr)
    state = os.path.join(root, "state")
    os.makedirs(state, exist_ok=True)
    with open(op, encoding="utf-8") as f:
        text = f.read()
    text = text.replace('"sallyport": 1,', '"sallyport": 1, "state_dir": '
                        + json.dumps(state) + ',').replace(
        '"others_only": true', '"others_only": true, "approvers": '
        '{ "gid": [2001], "uid": [0] }')
    if os.geteuid() == 0:      # as root, the children need a user apart
        text = text.replace('"sallyport": 1,', '"sallyport": 1, "server": '
                            '{ "run_as": "%s" },' % ROOT_RUN_AS)
    op = write(root, "operator.json", text)
    r = sp("check", "--config", op)
    check("... with both: ok", r.returncode == 0, r.stderr)


if __name__ == "__main__":
    main()

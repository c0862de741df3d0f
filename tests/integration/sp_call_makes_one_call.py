#!/usr/bin/env python3
"""sp call TOOL [ARGS_JSON]: one tools/call through a real sp mcp session
(docs/design.md section 3): the call reaches the HTTP target once, with
the arguments as typed (quotes, $(), multibyte text) and the credential
the executor adds; its result is one JSON line on stdout, exit 0; the
session is audited like any other (session-start with the operator as the
peer, intent, execution, session-end).  A call the checks refuse (bad
arguments, unknown tool, a scope the profile lacks) exits 1 and reaches
nothing; a failing target exits 1; ARGS_JSON that is not one object is a
usage error (64) that starts no session; a broken policy exits 78 with
the session's refusal said on stderr."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import shared_target  # noqa: E402

TIMEOUT = 60
TOKEN = "tok-\"$(id)\"-x"


def write_policy(tmp, extra_tools=(), profiles=None, audit=True):
    tok = os.path.join(tmp, "api.token")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(tok, 0o600)
    doc = {
        "sallyport": 1,
        "credentials": {"t": {"type": "bearer", "file": tok}},
        "targets": {"api": {"type": "http", "base_url": shared_target().url,
                            "credential": "t"}},
        "tools": [
            {"name": "get_item", "description": "Read one item.",
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/items/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}}},
            {"name": "put_item", "description": "Store one item.",
             "target": "api", "scope": "write", "mutating": True,
             "http": {"method": "POST", "path": "/items",
                      "body": {"qty": "{qty}"}},
             "params": {"qty": {"type": "integer", "minimum": 1,
                                "maximum": 100}}}] + list(extra_tools),
        "profiles": profiles or {"default": {"scopes": ["read"]},
                                 "ops": {"scopes": ["read", "write"]}},
    }
    if audit:
        doc["audit"] = {"path": os.path.join(tmp, "audit.jsonl")}
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def sp_call(*args, env=None):
    p = subprocess.run([SP, "call"] + list(args), capture_output=True,
                       timeout=TIMEOUT, env=sp_env(extra=env))
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def requests():
    return shared_target().seen()[1]


def audit(tmp):
    try:
        with open(os.path.join(tmp, "audit.jsonl")) as f:
            return [json.loads(l) for l in f if l.strip()]
    except OSError:
        return []


def one_json_line(out):
    lines = out.split("\n")
    if len(lines) != 2 or lines[1] != "":
        return None
    try:
        return json.loads(lines[0])
    except ValueError:
        return None


def test_good_call(tmp, cfg):
    before = len(requests())
    status, out, err = sp_call("--config", cfg, "get_item",
                               '{"id": "7 \\"$(id)\\" \u00e9\u00e9"}')
    result = one_json_line(out)
    check("a good call: exit 0", status == 0, (status, out, err))
    check("... its result is one JSON line on stdout, not an error",
          isinstance(result, dict) and result.get("isError") is False and
          "content" in result, out)
    reqs = requests()[before:]
    check("... it reached the target once, the argument as one path "
          "segment", len(reqs) == 1 and reqs[0].get("path") ==
          "/items/7%20%22%24%28id%29%22%20%C3%A9%C3%A9", reqs)
    check("... with the credential the executor holds",
          len(reqs) == 1 and ["Authorization", "Bearer " + TOKEN] in
          reqs[0].get("headers", []), reqs)
    check("... and the token is never on stdout or stderr",
          TOKEN not in out and TOKEN not in err, (out, err))
    recs = audit(tmp)
    kinds = [r.get("kind") for r in recs]
    start = [r for r in recs if r.get("kind") == "session-start"]
    check("... audited as a session: start, intent, execution, end",
          kinds[:1] == ["session-start"] and "intent" in kinds and
          "execution" in kinds and kinds[-1:] == ["session-end"], kinds)
    check("... whose peer is the operator who ran sp call",
          start and start[0].get("peer_uid") == os.geteuid(), start)


def test_refused(tmp, cfg):
    before = len(requests())
    cases = [
        ("an argument over its maxLength", ["get_item",
                                            '{"id": "%s"}' % ("x" * 65)]),
        ("an argument of the wrong type", ["get_item", '{"id": 7}']),
        ("a missing argument", ["get_item"]),
        ("an unknown tool", ["no_such_tool", "{}"]),
        ("a scope the profile lacks", ["put_item", '{"qty": 3}']),
        ("a value over its maximum, as --profile ops",
         ["--profile", "ops", "put_item", '{"qty": 101}']),
    ]
    for name, args in cases:
        status, out, err = sp_call("--config", cfg, *args)
        check("%s: exit 1, the answer on stdout" % name,
              status == 1 and one_json_line(out) is not None,
              (status, out, err))
    check("... and none of them reached the target",
          len(requests()) == before, requests()[before:])
    status, out, err = sp_call("--config", cfg, "--profile", "ops",
                               "put_item", '{"qty": 3}')
    reqs = requests()[before:]
    check("--profile ops: the write goes, once, with qty a number",
          status == 0 and len(reqs) == 1 and
          json.loads(reqs[0].get("body") or "{}") == {"qty": 3},
          (status, out, err, reqs))


def test_usage(tmp, cfg):
    before = len(audit(tmp))
    for name, args in (("ARGS_JSON an array", ["get_item", "[1]"]),
                       ("ARGS_JSON not JSON", ["get_item", "{id: 1}"]),
                       ("ARGS_JSON with trailing text",
                        ["get_item", '{"id": "1"} x']),
                       ("no TOOL", []),
                       ("three words", ["get_item", "{}", "{}"]),
                       ("an unknown option", ["--frob", "get_item"])):
        status, out, err = sp_call("--config", cfg, *args)
        check("%s: usage error 64, nothing on stdout" % name,
              status == 64 and out == "" and err.strip() != "",
              (status, out, err))
    check("... and no session was started for any",
          len(audit(tmp)) == before, audit(tmp)[before:])


def test_target_fails(tmp):
    cfg = write_policy(tmp, extra_tools=[
        {"name": "fail", "description": "Always 500.", "target": "api",
         "scope": "read", "http": {"method": "GET", "path": "/status/500"}}])
    status, out, err = sp_call("--config", cfg, "fail")
    result = one_json_line(out)
    check("a target answering 500: exit 1, isError in the result",
          status == 1 and isinstance(result, dict) and
          result.get("isError") is True, (status, out, err))


def test_broken(tmp):
    cfg = os.path.join(tmp, "broken.json")
    with open(cfg, "w") as f:
        json.dump(run_as_root({"sallyport": 1, "audit": {
            "path": os.path.join(tmp, "audit.jsonl"),
            "key_file": os.path.join(tmp, "missing.key")}}), f)
    status, out, err = sp_call("--config", cfg, "get_item", "{}")
    check("a broken policy: exit 78, nothing on stdout, the refusal said",
          status == 78 and out == "" and "Sallyport cannot start: the "
          "audit key file named at line 1" in err, (status, out, err))


def main():
    tmp = tmpdir()
    cfg = write_policy(tmp)
    test_good_call(tmp, cfg)
    test_refused(tmp, cfg)
    test_usage(tmp, cfg)
    test_target_fails(tmpdir())
    test_broken(tmpdir())
    done()


main()

#!/usr/bin/env python3
"""sp check --dump prints the effective policy on stdout, as sshd -T
does: every default filled in (on_invalid, sandbox, the limits, a string
param's maxLength 1024, required, audit, a confirmation's via and
timeout_s, a target's redirect and address flags, an ssh port), set
values as set, comments gone.  The dump is itself a policy: sp check
passes it, and sp catalog gives it the same tools/list and catalog
fingerprint.  An invalid policy dumps nothing and exits 78."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import run_as_root, write_secret  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

DESCRIPTION = "Read \"one\" $(id) item, été -- 'quoted'"


def keypair(tmp):
    path = os.path.join(tmp, "id_ed25519")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    path], check=True, stdin=subprocess.DEVNULL)
    with open(path + ".pub", "rb") as f:
        return path, f.read()


def policy(tmp):
    key, public = keypair(tmp)
    known = os.path.join(tmp, "known_hosts")
    with open(known, "wb") as f:
        f.write(b"web.example " + public)
    return run_as_root({
        "sallyport": 1, "comment": "the whole of it",
        "limits": {"max_inflight": 4, "comment": "four"},
        "credentials": {
            "tok": {"type": "bearer", "comment": "api token",
                    "file": write_secret(tmp, "token", b"t0k\"$(id)\n")},
            "k": {"type": "ssh-key", "private_key": key}},
        "targets": {
            "api": {"type": "http", "base_url": "http://127.0.0.1:9/v1",
                    "credential": "tok"},
            "web": {"type": "ssh", "host": "web.example", "user": "ops",
                    "credential": "k", "known_hosts": known}},
        "tools": [
            {"name": "get_item", "description": DESCRIPTION,
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/items/{id}/{{raw}}",
                      "query": {"q": "{q}"}},
             "params": {"id": {"type": "string", "comment": "an id"},
                        "q": {"type": "integer", "minimum": -3,
                              "required": False}}},
            {"name": "pay", "description": "Pay.", "target": "api",
             "scope": "write", "mutating": True, "confirm": True,
             "http": {"method": "POST", "path": "/pay",
                      "body": {"amount": "{amount}", "n": ["N150", None]}},
             "params": {"amount": {"type": "decimal", "scale": 2,
                                   "minimum": "0.05", "audit": "value"}},
             "limits": {"per_day": 3}},
            {"name": "disk", "description": "df.", "target": "web",
             "scope": "read", "timeout_ms": 5000,
             "ssh": {"argv": ["df", "-h", "--", "{mount}"]},
             "params": {"mount": {"type": "string", "maxLength": 20,
                                  "allow_leading_dash": True}}}],
        "profiles": {"default": {"scopes": ["read", "write"]}}})


def sp(*args):
    p = subprocess.run([SP, *args], capture_output=True, env=sp_env(),
                       timeout=30)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def fingerprint(path):
    status, out, err = sp("catalog", "--config", path)
    lines = out.decode().splitlines()
    return status, out, [l for l in lines if l.startswith("catalog_sha256")]


def main():
    tmp = tmpdir()
    try:
        run(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


def run(tmp):
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:   # a number as written: 1.50, not 1.5
        f.write(json.dumps(policy(tmp), indent=1, ensure_ascii=False)
                .replace('"N150"', "1.50"))
    status, out, err = sp("check", "--dump", "--config", path)
    try:
        d = json.loads(out)
    except ValueError:
        d = {}
    check("--dump: exit 0, the effective policy as JSON on stdout",
          status == 0 and d.get("sallyport") == 1, (status, out[:200], err))
    check("... and the ok line on stderr, not stdout",
          (path + ": ok: 3 tools") in err and b": ok:" not in out, err)
    server, limits = d.get("server", {}), d.get("limits", {})
    check("server defaults: on_invalid close, sandbox required, name",
          server.get("on_invalid") == "close" and
          server.get("sandbox") == "required" and
          server.get("name") == "sallyport", server)
    check("limits: the set max_inflight 4 and every default",
          limits == {"max_frame_bytes": 1048576, "max_inflight": 4,
                     "calls_per_session": 200, "result_max_chars": 16000,
                     "call_timeout_ms": 30000, "dedupe_ms": 10000}, limits)
    tools = {t.get("name"): t for t in d.get("tools", [])}
    get, pay, disk = (tools.get(n, {}) for n in ("get_item", "pay", "disk"))
    pid = get.get("params", {}).get("id", {})
    check("a string param: maxLength 1024, minLength 0, required, audit "
          "shape", pid.get("maxLength") == 1024 and
          pid.get("minLength") == 0 and pid.get("required") is True and
          pid.get("audit") == "shape", pid)
    check("an optional integer keeps its minimum -3 and required false",
          get.get("params", {}).get("q") == {
              "type": "integer", "required": False, "audit": "shape",
              "minimum": -3}, get.get("params"))
    check("the description, quotes and all",
          get.get("description") == DESCRIPTION, get.get("description"))
    check("a confirm: true tool: via client, timeout_s 120",
          pay.get("confirm") == {"via": "client", "timeout_s": 120},
          pay.get("confirm"))
    check("a read tool: confirm false, mutating false",
          get.get("confirm") is False and get.get("mutating") is False, get)
    check("templates written back: {{ }}, {param}, the body's 1.50",
          get.get("http", {}).get("path") == "/items/{id}/{{raw}}" and
          get["http"].get("query") == {"q": "{q}"} and
          b'"n":\t[1.50, null]' in out, (get.get("http"), out[-600:]))
    check("a decimal: its scale and minimum as written, a per_day limit",
          pay.get("params", {}).get("amount", {}).get("minimum") == "0.05"
          and pay.get("limits") == {"per_day": 3}, pay)
    check("an ssh param: allow_leading_dash; the tool's own timeout_ms",
          disk.get("params", {}).get("mount", {}).get(
              "allow_leading_dash") is True and
          disk.get("timeout_ms") == 5000, disk)
    api = d.get("targets", {}).get("api", {})
    web = d.get("targets", {}).get("web", {})
    check("an http target: follow_redirects false, loopback allowed (a "
          "loopback host), the other ranges refused",
          api.get("follow_redirects") is False and
          api.get("allow_loopback") is True and
          api.get("allow_private") is False and
          api.get("allow_metadata") is False, api)
    check("an ssh target: port 22 filled in", web.get("port") == 22, web)
    check("no comment is left", b"comment" not in out and
          b"the whole of it" not in out, out[:300])
    dumped = os.path.join(tmp, "dumped.json")
    with open(dumped, "wb") as f:
        f.write(out)
    status, _, err = sp("check", "--config", dumped)
    check("the dump is a policy sp check passes", status == 0, err)
    s1, out1, fp1 = fingerprint(path)
    s2, out2, fp2 = fingerprint(dumped)
    check("... with the same catalog fingerprint and tools/list",
          s1 == 0 and s2 == 0 and fp1 and fp1 == fp2 and out1 == out2,
          (fp1, fp2))
    with open(path, "w") as f:
        f.write('{"sallyport": 1, "limits": {"max_inflight": 0}}')
    status, out, err = sp("check", "--config", path, "--dump")
    check("an invalid policy: exit 78, nothing on stdout",
          status == 78 and out == b"" and "max_inflight" in err,
          (status, out, err))


main()

#!/usr/bin/env python3
"""The session's profile: --profile, else the peer's uid/gid when stdin
is a unix socket (SO_PEERCRED, as under systemd socket activation), else
"default"; no match and no default: no tools.  Fixed by the broker and
recorded in session-start."""
import json
import os
import socket
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_lib import (INITIALIZE, SP, check, done, policy, request,  # noqa
                      sp_env, tmpdir)

TOOLS = [
    {"name": "get_item", "description": "Read one item.", "target": "api",
     "scope": "read", "http": {"method": "GET", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
    {"name": "put_item", "description": "Replace one item.", "target": "api",
     "scope": "write", "http": {"method": "PUT", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
]


def session(cfg, over_socket, args=()):
    """tools/list names, the session-start record and the exit status."""
    msgs = INITIALIZE + request(1, "tools/list")
    cmd = [SP, "mcp", "--config", cfg] + list(args)
    if over_socket:
        ours, theirs = socket.socketpair()
        p = subprocess.Popen(cmd, stdin=theirs, stdout=theirs,
                             stderr=subprocess.PIPE, env=sp_env())
        theirs.close()
        ours.sendall(msgs)
        ours.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            data = ours.recv(65536)
            if not data:
                break
            out += data
        ours.close()
        p.wait(timeout=10)
        err = p.stderr.read().decode()
    else:
        p = subprocess.run(cmd, input=msgs, capture_output=True,
                           env=sp_env(), timeout=10)
        out, err = p.stdout, p.stderr.decode()
    lines = out.splitlines()
    names = []
    if len(lines) == 2:
        names = [t["name"] for t in json.loads(lines[1])["result"]["tools"]]
    return names, p.returncode, err


def start_record(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        recs = [json.loads(l) for l in f]
    return [r for r in recs if r["kind"] == "session-start"][-1]


def main():
    tmp = tmpdir()
    uid, gid = os.getuid(), os.getgid()
    cfg = policy(tmp, tools=TOOLS, profiles={
        "default": {"scopes": ["read"]},
        "ops": {"scopes": ["read", "write"], "match": {"uid": [uid]}},
        "other": {"scopes": ["write"], "match": {"uid": [uid + 4242]}},
    })
    names, status, err = session(cfg, over_socket=True)
    check("peer uid matches 'ops' over a unix socket: both tools",
          status == 0 and names == ["get_item", "put_item"], (names, err))
    rec = start_record(tmp)
    check("session-start names the profile and the peer, with its pid",
          rec.get("profile") == "ops" and
          rec.get("peer") == "uid %d gid %d pid %d" % (uid, gid,
                                                      os.getpid()), rec)
    names, status, err = session(cfg, over_socket=False)
    check("a pipe has no peer credentials: 'default'",
          status == 0 and names == ["get_item"], (names, err))
    names, status, err = session(cfg, over_socket=True,
                                 args=("--profile", "other"))
    check("--profile wins over the peer's credentials",
          status == 0 and names == ["put_item"], (names, err))
    names, status, err = session(cfg, over_socket=False,
                                 args=("--profile", "nope \"$(x)\""))
    check("an unknown --profile is refused (64), not guessed",
          status == 64 and "no profile named" in err, (status, err))
    cfg = policy(tmp, tools=TOOLS, profiles={
        "ops": {"scopes": ["read"], "match": {"uid": [uid + 4242]}}})
    names, status, err = session(cfg, over_socket=True)
    check("no match and no default: no tools at all",
          status == 0 and names == [] and "no tools" in err, (names, err))
    done()


main()

#!/usr/bin/env python3
"""The session's profile (broker/peer.h, docs/design.md section 7).  Over a
unix socket (SO_PEERCRED, as under systemd socket activation): --profile
when its match fits the peer, else the profile whose uid, then gid, match
fits; no match: no tools, never "default" (unless the peer is our own uid,
the local user).  Over anything else: --profile,
else "default" unless its match excludes the running user.  Fixed by the
broker and recorded in session-start."""
import json
import os
import socket
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP, reap, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import shared_target  # noqa: E402

TOOLS = [
    {"name": "get_item", "description": "Read one item.", "target": "api",
     "scope": "read", "http": {"method": "GET", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
    {"name": "put_item", "description": "Replace one item.", "target": "api",
     "scope": "write", "http": {"method": "PUT", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
]


def session(cfg, over_socket, args=(), extra=b"", config_eq=False):
    """tools/list names, the exit status and stderr (the responses to
    extra messages are in the module's last_lines).  config_eq: the
    policy is named as --config=FILE."""
    global last_lines
    msgs = INITIALIZE + request(1, "tools/list") + extra
    config = ["--config=" + cfg] if config_eq else ["--config", cfg]
    cmd = [SP, "mcp"] + config + list(args)
    if over_socket:
        ours, theirs = socket.socketpair()
        p = subprocess.Popen(cmd, stdin=theirs, stdout=theirs,
                             stderr=subprocess.PIPE, env=sp_env())
        theirs.close()
        try:
            ours.sendall(msgs)
            ours.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before reading input: what it wrote follows
        out, late = b"", ""
        ours.settimeout(10)  # a session that never ends fails, not hangs
        while True:
            try:
                data = ours.recv(65536)
            except ConnectionResetError:  # refused before reading input
                data = b""
            except socket.timeout:
                late = "test: no end of output within 10 s\n"
                p.kill()
                data = b""
            if not data:
                break
            out += data
        ours.close()
        _, err = reap(p, timeout=10)
        err = late + err.decode("utf-8", "replace")
    else:
        p = subprocess.run(cmd, input=msgs, capture_output=True,
                           env=sp_env(), timeout=10)
        out, err = p.stdout, p.stderr.decode()
    lines = out.splitlines()
    last_lines = [json.loads(l) for l in lines]
    names = []
    if len(lines) >= 2:
        names = [t["name"] for t in json.loads(lines[1])["result"]["tools"]]
    return names, p.returncode, err


def start_record(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        recs = [json.loads(l) for l in f]
    return [r for r in recs if r["kind"] == "session-start"][-1]


def main():
    tmp = tmpdir()
    uid, gid = os.getuid(), os.getgid()
    cfg = shared_target_policy(tmp, tools=TOOLS, profiles={
        "default": {"scopes": ["read"]},
        "ops": {"scopes": ["read", "write"], "match": {"uid": [uid]}},
        "other": {"scopes": ["write"], "match": {"uid": [uid + 4242]}},
    })
    names, status, err = session(cfg, over_socket=True)
    check("peer uid matches 'ops' over a unix socket: both tools",
          status == 0 and names == ["get_item", "put_item"], (names, err))
    rec = start_record(tmp)
    check("session-start names the profile and the peer",
          rec.get("profile") == "ops" and
          rec.get("peer") == "uid %d gid %d" % (uid, gid), rec)
    check("and the peer's pid (the socket's creator: this process)",
          rec.get("peer_pid") == os.getpid(), rec)
    names, status, err = session(cfg, over_socket=False)
    check("a pipe has no peer credentials: 'default'",
          status == 0 and names == ["get_item"], (names, err))
    names, status, err = session(cfg, over_socket=True,
                                 args=("--profile", "default"))
    check("--profile of a profile without a match is honoured",
          status == 0 and names == ["get_item"], (names, err))
    names, status, err = session(cfg, over_socket=True, config_eq=True,
                                 args=("--profile=default",))
    check("sp mcp takes --config=FILE and --profile=NAME too, as sp check "
          "and sp catalog do", status == 0 and names == ["get_item"],
          (names, err))
    names, status, err = session(cfg, over_socket=True,
                                 args=("--profile=other",))
    check("--profile=NAME is checked against the peer like --profile NAME",
          status == 64 and names == [] and "does not match uid %d" % uid
          in err, (status, names, err))
    names, status, err = session(cfg, over_socket=True,
                                 args=("--profile", "other"))
    check("--profile of a profile whose match excludes the peer is refused",
          status == 64 and names == [] and "does not match uid %d" % uid
          in err, (status, names, err))
    names, status, err = session(cfg, over_socket=False,
                                 args=("--profile", "nope \"$(x)\""))
    check("an unknown --profile is refused (64), not guessed",
          status == 64 and "no profile named" in err, (status, err))
    cfg = shared_target_policy(tmp, tools=TOOLS, profiles={
        "default": {"scopes": ["read"]},
        "other": {"scopes": ["write"], "match": {"uid": [uid + 4242]}}})
    names, status, err = session(cfg, over_socket=True)
    # The socketpair's peer is this process's own uid: the local user, who
    # could have started sp itself (Node's stdio is a socketpair), gets the
    # local rule.  A socket peer of ANOTHER uid that nobody matches gets no
    # tools: sp_connect_relays_unchanged.py connects as uid 65534 for that.
    check("a socket peer of our own uid nobody matches is the local user: "
          "'default'", status == 0 and names == ["get_item"], (names, err))
    cfg = shared_target_policy(tmp, tools=TOOLS, profiles={
        "default": {"scopes": ["read", "write"],
                    "match": {"uid": [uid + 4242]}}})
    for over_socket in (True, False):
        names, status, err = session(cfg, over_socket=over_socket)
        check("a 'default' whose match excludes the client is not given "
              "(socket: %s)" % over_socket,
              status == 0 and names == [] and "no tools" in err,
              (names, err))
        seen = ("socket peer uid %d gid %d" if over_socket else
                "the running user, uid %d gid %d") % (uid, gid)
        check("... and the warning says which uid and gid it compared "
              "(socket: %s)" % over_socket,
              "no profile matches this client (%s)" % seen in err, err)
    cfg = shared_target_policy(tmp, tools=TOOLS, profiles={
        "ops": {"scopes": ["read"], "match": {"uid": [uid + 4242]}}})
    names, status, err = session(cfg, over_socket=True)
    check("no match and no default: no tools at all",
          status == 0 and names == [] and "no tools" in err, (names, err))
    call = request(2, "tools/call", {"name": "get_item",
                                     "arguments": {"id": "7 \"$(id)\""}})
    names, status, err = session(cfg, over_socket=False, extra=call)
    answer = last_lines[-1] if last_lines else {}
    sc = answer.get("result", {}).get("structuredContent", {})
    check("a tools/call without a profile is answered: denied, no profile",
          status == 0 and answer.get("id") == 2 and
          sc.get("outcome") == "denied" and
          "has no profile" in sc.get("message", ""), (status, answer, err))
    # The session has ended: what the executor could have sent is queued
    # at the target, which is up (a refused call and one that ran into a
    # closed port would both answer "failed").
    conns, reqs = shared_target().seen()
    check("... nothing reached the target: %d connections, %d requests" %
          (len(conns), len(reqs)), conns == [] and reqs == [], (conns, reqs))
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        recs = [json.loads(l) for l in f]
    last = max(i for i, r in enumerate(recs)
               if r["kind"] == "session-start")
    ran = [r for r in recs[last:] if r["kind"] in ("intent", "execution")]
    check("... and the audit holds no intent or execution for it",
          ran == [] and recs[-1]["kind"] == "session-end", recs[last:])
    done()


main()

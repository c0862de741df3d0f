#!/usr/bin/env python3
"""The audit trail as a security reviewer reads it (docs/sp-audit.5),
through one real `sp mcp` session over a socket (so the peer is known):

- session-start names the peer's uid, gid and pid, the SHA-256 of the
  policy file (what sha256sum prints) and the catalog fingerprint (what
  sp catalog prints), each under its own name; a client record carries
  the sanitized clientInfo;
- a refused call of a known tool, of an unknown tool and a malformed
  frame: each rejection names what it can (method, tool, argument
  shapes), and no argument value is in the file;
- the log is renamed between two calls of the running session: the new
  file links to the old (prev, seq, rotated_from); both verify together;
  removing, editing, reordering or cutting the first file is named;
- only the two accepted calls reach the target (counted there);
- every jq recipe of docs/sp-audit.5 runs on these files and answers."""
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402
from sptest.mcp import request  # noqa: E402
from sptest.policy import get_and_put_item_policy  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

SRCDIR = os.environ.get("srcdir", os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", ".."))
SECRET_TEXT = "PRIVATE-NOTE \"$(id)\" %2e%2e \u00e9\u20ac"
SECRET_CARD = "4111-2222-3333-9876"
BAD_FRAME = b'{"jsonrpc":"2.0","id":9, "method":"tools/call" BAD'


def review_policy(tmp, url):
    """get_and_put_item_policy plus add_note, whose scope nobody has."""
    path = get_and_put_item_policy(tmp, url)
    with open(path) as f:
        doc = json.load(f)
    doc["tools"].append({
        "name": "add_note", "description": "Add a note.", "target": "api",
        "scope": "notes", "mutating": True,
        "http": {"method": "POST", "path": "/notes",
                 "body": {"text": "{text}", "n": "{n}"}},
        "params": {"text": {"type": "string", "maxLength": 200},
                   "n": {"type": "integer", "audit": "value"}}})
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


class Session:
    """sp mcp over a socketpair: the broker sees our uid as its peer."""

    def __init__(self, cfg):
        self.ours, theirs = socket.socketpair()
        self.p = subprocess.Popen([SP, "mcp", "--config", cfg], stdin=theirs,
                                  stdout=theirs, stderr=subprocess.PIPE,
                                  env=sp_env())
        theirs.close()
        self.ours.settimeout(60)
        self.buf = b""

    def send(self, data):
        try:
            self.ours.sendall(data)
        except OSError:		# sp died: the checks on what it wrote say
            pass

    def line(self):
        while b"\n" not in self.buf:
            try:
                data = self.ours.recv(65536)
            except ConnectionResetError:	# sp died: told by the checks
                data = b""
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, rid, tool, args):
        self.send(request(rid, "tools/call", {"name": tool,
                                              "arguments": args}))
        return self.line()

    def end(self):
        try:
            self.ours.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        while self.line() is not None:
            pass
        err = self.p.stderr.read().decode("utf-8", "replace")
        self.p.wait(timeout=60)
        self.ours.close()
        return self.p.returncode, err


def run_session(tmp, cfg, log, target):
    s = Session(cfg)
    s.send(request(0, "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "review\u001b[31m-client\u00e9",
                       "version": "9.9" + "x" * 100}}))
    s.line()
    s.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    first = s.call(1, "get_item", {"id": "a", "card": SECRET_CARD, "n": 7})
    check("the first call succeeded", "result" in first, first)
    os.rename(log, log + ".1")     # logrotate's rename, mid-session
    check("the path is free after the rename", not os.path.exists(log))
    s.call(2, "add_note", {"text": SECRET_TEXT, "n": 424242,
                           "zz\"$(x)": SECRET_TEXT})
    s.call(3, "drop_table", {"table": SECRET_TEXT, "force": True})
    last = s.call(4, "put_item", {"id": "b", "card": SECRET_CARD, "n": 8})
    if last is None:
        status, err = s.end()
        check("the call after the rotation succeeded", False, (status, err))
        return err
    check("the call after the rotation succeeded", "result" in last, last)
    s.send(BAD_FRAME + b"\n")
    s.line()
    status, err = s.end()
    check("the session ends as malformed input (65)", status == 65,
          (status, err))
    check("only the two accepted calls reached the target",
          len(target.requests()) == 2,
          [r["path"] for r in target.requests()])
    return err


def check_start(cfg, recs, files):
    start = recs[0]
    with open(cfg, "rb") as f:
        file_sha = hashlib.sha256(f.read()).hexdigest()
    out = subprocess.run([SP, "catalog", "--config", cfg], capture_output=True,
                         timeout=30, env=sp_env()).stdout.decode()
    m = re.search(r"catalog_sha256: ([0-9a-f]{64})", out)
    check("session-start: policy_sha256 is the policy file's SHA-256",
          start.get("policy_sha256") == file_sha, (start, file_sha))
    check("session-start: catalog_sha256 is what sp catalog prints",
          m is not None and start.get("catalog_sha256") == m.group(1),
          (start, out[-200:]))
    check("session-start: peer uid, gid and pid as numbers",
          start.get("peer_uid") == os.getuid() and
          start.get("peer_gid") == os.getgid() and
          isinstance(start.get("peer_pid"), int) and start["peer_pid"] > 0,
          start)
    client = [r for r in recs if r["kind"] == "client"]
    check("one client record, its texts printable and cut",
          len(client) == 1 and client[0]["client_info"] ==
          {"name": "review?[31m-client??", "version": "9.9" + "x" * 61 +
           "..."} and client[0]["protocol_version"] == "2025-11-25",
          client)


def check_rejections(recs, raw):
    rej = [r for r in recs if r["kind"] == "rejection"]
    check("three rejections", len(rej) == 3, rej)
    if len(rej) != 3:
        return
    note, unknown, bad = rej
    check("a refused known tool: method, tool, target, shapes, reason",
          note.get("method") == "tools/call" and
          note.get("tool") == "add_note" and note.get("target") == "api" and
          note.get("reason") == "scope-denied" and
          note.get("args") == {"text": "string(%d)" % len(SECRET_TEXT),
                               "n": "integer"} and
          note.get("extra_args") == ["string(%d)" % len(SECRET_TEXT)], note)
    check("an unknown tool: no tool, the shapes unnamed",
          unknown.get("reason") == "unknown-tool" and
          "tool" not in unknown and unknown.get("code") == -32602 and
          unknown.get("extra_args") == ["string(%d)" % len(SECRET_TEXT),
                                        "boolean"], unknown)
    check("a malformed frame: its hash, no method, no tool",
          bad.get("reason") == "parse-error" and "method" not in bad and
          "tool" not in bad and bad.get("sha256") ==
          hashlib.sha256(BAD_FRAME).hexdigest(), bad)
    for needle in (b"PRIVATE-NOTE", b"424242", b"drop_table", b"zz",
                   b"table", SECRET_CARD.encode()):
        check("no argument value or client name %r in the files" % needle,
              needle not in raw)


def check_rotation(tmp, log):
    old, new = read_log(log + ".1")[0], read_log(log)[0]
    first = new[0] if new else {}
    with open(log + ".1", "rb") as f:
        last_line = f.read().split(b"\n")[-2]
    check("the new file goes on: seq, prev, rotated_from",
          old and first.get("seq") == old[-1]["seq"] + 1 and
          first.get("prev") == hashlib.sha256(last_line).hexdigest() and
          first.get("rotated_from") == {"seq": old[-1]["seq"],
                                        "hash": old[-1]["hash"]},
          (old[-1:], first))
    files = [log + ".1", log]
    status, out = verify(files)
    check("both files verify together", status == 0 and
          "ok: 2 files" in out, out)
    status, out = verify([log])
    check("the new file alone: says it continues a file not given",
          status == 0 and "continues from seq %d" % old[-1]["seq"] in out,
          out)
    status, out = verify([log, log + ".1"])
    check("files given out of order: named", status == 1 and
          "out of order" in out, out)
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    a1, a = os.path.join(work, "a.1"), os.path.join(work, "a")
    shutil.copy(log, a)
    lines = open(log + ".1", "rb").read().split(b"\n")[:-1]
    with open(a1, "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines[:-1]))
    status, out = verify([a1, a])
    check("the first file's last record removed: named", status == 1 and
          "a line 1" in out and "missing before it" in out, out)
    edited = list(lines)
    edited[1] = edited[1].replace(b'"kind":"', b'"kind":"x', 1)
    with open(a1, "wb") as f:
        f.write(b"".join(l + b"\n" for l in edited))
    status, out = verify([a1, a])
    check("a record of the first file edited: named", status == 1 and
          "a.1 line 2" in out and "edited" in out, out)


def recipes():
    """(title, command) of each jq recipe in docs/sp-audit.5."""
    with open(os.path.join(SRCDIR, "docs", "sp-audit.5")) as f:
        man = f.read()
    found = re.findall(r'^\.\\" recipe: ([^\n]*)\n\.EX\n(.*?)\n\.EE', man,
                       re.M | re.S)
    return [(t, c.replace("\\e", "\\").replace("\\-", "-")) for t, c in
            found]


def run_recipe(cmd, files):
    today = time.strftime("%Y-%m-%d", time.gmtime())
    argv = shlex.split(cmd.replace("\\\n", " ").replace(
        '"$(date -u +%F)"', today))
    argv = [a for a in argv if a not in ("audit.jsonl.1", "audit.jsonl")]
    argv = [a.replace("1001", str(os.getuid())) for a in argv] + files
    p = subprocess.run(argv, capture_output=True, timeout=30,
                       env=dict(os.environ, TZ="UTC"))
    return p.returncode, p.stdout.decode(), p.stderr.decode()


EXPECT = {
    "what did uid 1001 run today": lambda out:
        sorted(json.loads(l)["tool"] for l in out.splitlines()) ==
        ["get_item", "put_item"],
    "which calls were refused, and why": lambda out:
        [json.loads(l).get("reason") for l in out.splitlines()] ==
        ["scope-denied", "unknown-tool", "parse-error"],
    "which mutating calls ended unknown": lambda out: out == "",
    # tool_limits_and_duplicates_in_memory.py runs it on a session a limit refused calls of
    "which calls a limit refused": lambda out: out == "",
    "who connected, with which client": lambda out:
        json.loads(out.splitlines()[0]).get("client", {}).get("name") ==
        "review?[31m-client??",
}


def with_unknown(files, tmp):
    """A copy of the last file plus put_item's execution again, as the
    broker writes it for an executor that died: outcome unknown."""
    recs = read_log(files[-1])[0]
    ex = [r for r in recs if r["kind"] == "execution" and
          r["tool"] == "put_item"][0]
    ex = dict(ex, outcome="unknown", reason="executor-ended", seq=0)
    path = os.path.join(tmp, "with-unknown.jsonl")
    shutil.copy(files[-1], path)
    with open(path, "a") as f:
        f.write(json.dumps(ex) + "\n")
    return files[:-1] + [path], ex


def check_recipes(files, tmp):
    found = recipes()
    check("docs/sp-audit.5 has the reviewer's recipes",
          sorted(t for t, _ in found) == sorted(EXPECT), found)
    for title, cmd in found:
        code, out, err = run_recipe(cmd, files)
        want = EXPECT.get(title)
        check("recipe '%s' answers" % title, code == 0 and want is not None
              and want(out), (cmd, code, out, err))
        if title.startswith("which calls were refused"):
            print("# %s:\n# %s" % (title, out.strip().replace("\n",
                                                              "\n# ")))
        if title.startswith("which mutating calls ended unknown"):
            more, ex = with_unknown(files, tmp)
            code, out, err = run_recipe(cmd, more)
            got = [json.loads(l) for l in out.splitlines()]
            check("recipe '%s' finds the one that did" % title, code == 0
                  and [(g["session"], g["call"]) for g in got] ==
                  [(ex["session"], ex["call"])], (out, err))


def check_man():
    """sp-audit.5 renders with man, without a warning, 80 columns."""
    page = os.path.join(SRCDIR, "docs", "sp-audit.5")
    if shutil.which("man") is None:
        check("man is installed (contrib/bootstrap: man-db)", False)
        return
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MANPAGER="cat",
               PAGER="cat")
    p = subprocess.run(["man", "--warnings", "-l", page], capture_output=True,
                       env=env, timeout=30)
    out = p.stdout.decode("utf-8", "replace")
    check("man -l renders sp-audit.5 without a warning",
          p.returncode == 0 and p.stderr == b"" and "ROTATION" in out and
          "rotated_from" in out, (p.returncode, p.stderr))
    wide = [l for l in out.splitlines() if len(l) > 80]
    check("no rendered line of sp-audit.5 is wider than 80 columns",
          not wide, wide)


def main():
    check_man()
    tmp = tmpdir()
    log = os.path.join(tmp, "audit.jsonl")
    target = Target(lifetime=3600)
    cfg = review_policy(tmp, target.url)
    run_session(tmp, cfg, log, target)
    files = [log + ".1", log]
    if not check("the session's next record recreated the log at the path",
                 os.path.exists(log), os.listdir(tmp)):
        done()
    recs = read_log(files[0])[0] + read_log(files[1])[0]
    raw = b"".join(open(p, "rb").read() for p in files)
    check_start(cfg, recs, files)
    check_rejections(recs, raw)
    check_rotation(tmp, log)
    if shutil.which("jq"):
        check_recipes(files, tmp)
    else:
        check("jq is installed (contrib/bootstrap)", False)
    target.stop()
    shutil.rmtree(tmp)
    done()


if __name__ == "__main__":
    main()

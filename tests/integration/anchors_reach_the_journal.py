#!/usr/bin/env python3
"""Audit anchors off the host (docs/design.md section 6): the real `sp mcp`
runs in a private mount namespace where journald's socket
(/run/systemd/journal/socket) -- or, in a build without libsystemd,
syslog's /dev/log -- is a datagram socket bound by this test, over an
overlay so nothing changes outside.  The entries it receives are parsed
(journald's native protocol, or the syslog line) and checked against the
log; then `sp audit verify --anchors` is given them as `journalctl -o json`
would print them, and must catch a log whose tail was cut or rewritten.
A session killed (SIGKILL) before its end: anchors at each durable record
and at least every 16th, so cutting its tail back past the last one is
named, and --anchors names the session and its last anchor."""
import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import threading

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log  # noqa: E402
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import (AWKWARD_CREDENTIAL,  # noqa: E402
                           get_and_put_item_policy)
from sptest.run import BUILDDIR, SP, sp_env, tmpdir, wait_for  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

# Fixed for good (audit/audit_journal.c, docs/sp.1).
IDS = {"session-start": "6ebb132352eb4bdeb63ac8b3a673ee0d",
       "session-end": "3692b1a875904463b92a31543d6d524d",
       "rejection": "3b78c9ccd2db48ea9cf8019fa1667d72",
       "intent": "ce8c78ddab0f4576b68bee3f75aa0033",
       "execution": "2190673d152749a1acbd7915340225cb"}
# Argument values no entry may carry: quotes, a newline, $(), a leading
# dash, %2e%2e, multibyte text.
NASTY = ['-q"uo\'te', "two\nlines $(id)", "%2e%2e/%2E%2E", "\u00e9\u20ac\U0001f511"]


def journald_build():
    with open(os.path.join(BUILDDIR, "config.h")) as f:
        return "#define SP_HAVE_LIBSYSTEMD 1" in f.read()


JOURNALD = journald_build()
# Where sp sends, and the directory an overlay makes writable for it.
LOWER, REL = (("/run", "systemd/journal/socket") if JOURNALD
              else ("/dev", "log"))

NS_SCRIPT = r'''set -e
w=$1 sock=$2 lower=$3 rel=$4; shift 4
mount -t tmpfs tmpfs "$w"
mkdir "$w/up" "$w/work"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$w/up,workdir=$w/work" "$lower"
mkdir -p "$(dirname "$lower/$rel")"
: > "$lower/$rel"
mount --bind "$sock" "$lower/$rel"
exec "$@"
'''


def parse_native(data):
    """journald's native protocol: KEY=VALUE\\n, or KEY\\n, a 64-bit
    little-endian length, the value and \\n."""
    fields, i = {}, 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            v = data[nl + 9:nl + 9 + n]
            assert data[nl + 9 + n:nl + 10 + n] == b"\n"
            i = nl + 10 + n
        fields[k.decode()] = v.decode("utf-8", "replace")
    return fields


def parse_syslog(data):
    """'<PRI>Mmm dd hh:mm:ss sp[pid]: sp-audit KEY=V ...' as fields, with
    PRIORITY and MESSAGE as journald would have them."""
    text = data.decode("utf-8", "replace")
    pri, rest = text[1:].split(">", 1)
    ident, msg = rest[16:].split(": ", 1)
    fields = {"PRIORITY": str(int(pri) & 7), "MESSAGE": msg,
              "SYSLOG_IDENTIFIER": ident.split("[")[0], "_FACILITY":
              str(int(pri) >> 3)}
    if msg.startswith("sp-audit "):
        for word in msg.split(" ")[1:]:
            k, v = word.split("=", 1)
            fields[k] = v
    return fields


class Receiver:
    """The test's journald (or syslogd): a datagram socket, drained by a
    thread so sp never blocks on a full queue."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.raw, self.lock = [], threading.Lock()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except OSError:
                return
            if not data:
                return		# shut down (sp never sends an empty one)
            with self.lock:
                self.raw.append(data)

    def entries(self):
        with self.lock:
            raw = list(self.raw)
        return [parse_native(d) if JOURNALD else parse_syslog(d)
                for d in raw], raw

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(10)


def start_ns(tmp, cfg):
    """sp mcp in a private mount namespace sending to this test."""
    w = os.path.join(tmp, "ns")
    os.mkdir(w)
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c",
            NS_SCRIPT, "sh", w, os.path.join(tmp, "sock"), LOWER, REL,
            SP, "mcp", "--config", cfg]
    return subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=sp_env())


def session(journal, n=3, bad=0, restart_after=None):
    """One session of n calls (get_item and put_item alternating, nasty
    argument values) and bad calls with a wrong argument type; returns (status,
    stderr, log records, entries, raw datagrams, log path)."""
    tmp = tmpdir()
    target = Target(lifetime=3600)
    cfg = get_and_put_item_policy(tmp, target.url)
    with open(cfg) as f:
        doc = json.load(f)
    if journal is not None:
        doc["audit"]["journal"] = journal
    with open(cfg, "w") as f:
        json.dump(doc, f)
    rx = Receiver(os.path.join(tmp, "sock"))
    p = start_ns(tmp, cfg)

    def args(i):
        return {"id": NASTY[i % len(NASTY)], "card": "4111-0000-%04d" % i,
                "n": i}
    drive_in(p, n, args, bad, rx if restart_after is not None else None,
             restart_after)
    try:
        status = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        status = None
    err = p.stderr.read().decode("utf-8", "replace")
    wait_for(lambda: any(e.get("SP_KIND") == "session-end"
                         for e in rx.entries()[0]), 5)
    entries, raw = rx.entries()
    opening = [e for e in entries if "SP_HASH" not in e]
    entries = [e for e in entries if "SP_HASH" in e]
    if restart_after is None:
        rx.close()
    target.stop()
    log = os.path.join(tmp, "audit.jsonl")
    recs = read_log(log)[0] if os.path.exists(log) else []
    return status, err, recs, entries, raw, log, opening


def drive_in(p, n, args, bad, rx, restart_after):
    """Calls in order; bad ones after them; the receiver
    closed (a restarted journald) after restart_after calls."""
    data = INITIALIZE
    p.stdin.write(data)
    p.stdin.flush()
    p.stdout.readline()
    for i in range(1, n + 1 + bad):
        if i <= n:
            call = {"name": "get_item" if i % 2 else "put_item",
                    "arguments": args(i)}
        else:
            # refused by the frontend: n is not an integer
            call = {"name": "get_item", "arguments": {
                "id": NASTY[i % len(NASTY)], "card": "x", "n": "-1$(id)"}}
        try:
            p.stdin.write(request(i, "tools/call", call))
            p.stdin.flush()
        except BrokenPipeError:
            break		# sp is gone: its status says why
        p.stdout.readline()
        if rx is not None and i == restart_after:
            rx.close()
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass


def no_secrets(raw):
    """No datagram holds the credential or any argument value."""
    blob = b"".join(raw)
    needles = ([AWKWARD_CREDENTIAL, "s3cr3t", "4111-0000"] + NASTY +
               ["$(id)", "%2e"])
    return [s for s in needles if s.encode() in blob]


def check_entry(name, e, rec, log):
    want = {"SP_KIND": rec["kind"], "SP_SESSION": rec["session"],
            "SP_SEQ": str(rec["seq"]), "SP_HASH": rec["hash"],
            "SP_PREV": rec["prev"], "SP_LOG": log, "SP_PROFILE": "default",
            "SYSLOG_IDENTIFIER": "sp"}
    if JOURNALD:
        want["MESSAGE_ID"] = IDS[rec["kind"]]
    want["PRIORITY"] = "5" if rec["kind"] == "rejection" else "6"
    for k in ("tool", "target", "outcome", "reason"):
        if isinstance(rec.get(k), str):
            want["SP_" + k.upper()] = rec[k]
    if "call" in rec:
        want["SP_CALL"] = str(rec["call"])
    got = {k: e.get(k) for k in want}
    check(name, got == want, "got %r\nwant %r" % (got, want))


def check_opening(opening, recs, log):
    """journald: one opening entry, sent before the broker's filter (the
    socket is made then), naming the session; no anchor.  syslog: none
    (openlog connects instead)."""
    if not JOURNALD:
        check("syslog: no opening entry", opening == [], opening)
        return
    want = {"MESSAGE_ID": "b819a138c673419ca1b3138660b16b64",
            "SP_SESSION": recs[0]["session"] if recs else None,
            "SP_LOG": log, "SP_PROFILE": "default", "PRIORITY": "6",
            "SYSLOG_IDENTIFIER": "sp"}
    got = [{k: e.get(k) for k in want} for e in opening]
    check("journald: one opening entry naming the session, no anchor",
          got == [want], (got, want))


OPENING = []


def anchors_default():
    status, err, recs, entries, raw, log, opening = session(None)
    check("journal default: the session ends with 0", status == 0, err)
    check_opening(opening, recs, log)
    OPENING[:] = opening
    got = [(e.get("SP_KIND"), e.get("SP_TOOL")) for e in entries]
    check("journal default: session-start, put_item's intent and "
          "execution (durable), session-end; get_item's are not sent",
          got == [("session-start", None), ("intent", "put_item"),
                  ("execution", "put_item"), ("session-end", None)],
          (got, err))
    by_seq = {str(r["seq"]): r for r in recs}
    for e in entries:
        if e.get("SP_SEQ") in by_seq:
            check_entry("journal default: %s entry matches its record" %
                        e["SP_KIND"], e, by_seq[e["SP_SEQ"]], log)
    check("journal default: no credential and no argument value sent",
          no_secrets(raw) == [], no_secrets(raw))
    return recs, entries, log


def anchors_all():
    status, err, recs, entries, raw, log, opening = session("all", n=4,
                                                            bad=2)
    check("journal all: the session ends with 0", status == 0, err)
    check("journal all: one entry per record (%d)" % len(recs),
          len(entries) == len(recs) and len(recs) >= 2 + 8 + 1,
          (len(entries), len(recs), [r["kind"] for r in recs]))
    by_seq = {e.get("SP_SEQ"): e for e in entries}
    for r in recs:
        e = by_seq.get(str(r["seq"]), {})
        check("journal all: seq %d (%s) entry matches" % (r["seq"],
              r["kind"]), e.get("SP_HASH") == r["hash"], (e, r))
    for kind in ("intent", "execution", "rejection"):
        r = next((r for r in recs if r["kind"] == kind), None)
        if check("journal all: the log has a %s" % kind, r is not None,
                 [x["kind"] for x in recs]):
            check_entry("journal all: its %s entry's fields" % kind,
                        by_seq.get(str(r["seq"]), {}), r, log)
    check("journal all: no credential and no argument value sent",
          no_secrets(raw) == [], no_secrets(raw))
    return recs, entries, log


def anchors_off():
    status, err, recs, entries, raw, log, opening = session(False)
    check("journal false: the session ends with 0 and sends nothing",
          status == 0 and entries == [] and opening == [] and
          len(recs) >= 2, (entries, opening, err))


def journald_gone():
    """The receiver goes away mid-session (journald or syslogd
    restarted): the broker, confined, neither dies nor stops auditing."""
    status, err, recs, entries, raw, log, _ = session("all", n=4,
                                                      restart_after=2)
    check("receiver gone mid-session: the session still ends with 0",
          status == 0, (status, err))
    check("... every record still in the log, session-end last",
          recs and recs[-1]["kind"] == "session-end" and
          sum(r["kind"] == "execution" for r in recs) == 4,
          [r["kind"] for r in recs])
    check("... the entries sent before it are there",
          len(entries) >= 3, len(entries))
    if JOURNALD:
        check("... and the lost sends are said on stderr, once",
              err.count("audit anchor not sent") == 1 and
              "audit anchors were not sent" in err, err)


def held_start_then_rejection():
    """A refused frame before any request: the held session-start and the
    rejection are written in one locked turn; both reach the journal."""
    tmp = tmpdir()
    target = Target(lifetime=3600)
    cfg = get_and_put_item_policy(tmp, target.url)
    with open(cfg) as f:
        doc = json.load(f)
    doc["audit"]["journal"] = "all"
    with open(cfg, "w") as f:
        json.dump(doc, f)
    rx = Receiver(os.path.join(tmp, "sock"))
    p = start_ns(tmp, cfg)
    try:
        p.communicate(b'{"jsonrpc":"2.0","id":1,"method":\n', timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    wait_for(lambda: any(e.get("SP_KIND") == "session-end"
                         for e in rx.entries()[0]), 10)
    entries = [e for e in rx.entries()[0] if "SP_HASH" in e]
    rx.close()
    target.stop()
    recs = read_log(os.path.join(tmp, "audit.jsonl"))[0]
    want = [(r["kind"], str(r["seq"]), r["hash"]) for r in recs]
    got = [(e.get("SP_KIND"), e.get("SP_SEQ"), e.get("SP_HASH"))
           for e in entries]
    check("held session-start written with a rejection: both sent, in "
          "order", want[:2] == [("session-start", "1", recs[0]["hash"]),
                                ("rejection", "2", recs[1]["hash"])] and
          got == want, (got, want))


def journal_json(entries, uid="0"):
    """The entries as `journalctl -o json` prints them."""
    lines = []
    for e in entries:
        d = dict(e)
        d.update({"_UID": uid, "_PID": "4242",
                  "__REALTIME_TIMESTAMP": "1764600000000000"})
        lines.append(json.dumps(d))
    lines.insert(0, json.dumps({"MESSAGE": "another program",
                                "SYSLOG_IDENTIFIER": "cron", "_UID": "0"}))
    return "\n".join(lines) + "\n"


def verify_anchors(journal_text, *logs, stdin=False):
    tmp = tmpdir()
    path = os.path.join(tmp, "journal.json")
    with open(path, "w") as f:
        f.write(journal_text)
    argv = [SP, "audit", "verify", "--anchors", "-" if stdin else path]
    p = subprocess.run(argv + list(logs), capture_output=True, timeout=30,
                       input=journal_text.encode() if stdin else None)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def reseal(line):
    """The record line with its hash made right again (what a file's owner
    who rewrites it can do; without the key an HMAC would not follow)."""
    body = line[:line.rindex(',"hash":')] + "}"
    digest = hashlib.sha256(body.encode()).hexdigest()
    return body[:-1] + ',"hash":"%s"}' % digest, digest


def anchors_verify(recs, entries, log, other):
    jtext = journal_json(entries + OPENING)
    st, out, err = verify_anchors(jtext, log)
    check("--anchors on the intact log: exit 0, 4 held, no gap",
          st == 0 and "anchors: 4 checked, 4 held, 0 not held" in out and
          "without a session-end anchor" not in out, (st, out, err))
    st, out, err = verify_anchors(jtext, log, stdin=True)
    check("--anchors - reads stdin", st == 0 and "4 held" in out,
          (st, out, err))
    with open(log) as f:
        lines = f.read().split("\n")[:-1]
    end = recs[-1]
    cut = log + ".cut"
    with open(cut, "w") as f:
        f.write("\n".join(lines[:-1]) + "\n")
    p = subprocess.run([SP, "audit", "verify", cut], capture_output=True,
                       timeout=30)
    check("the log cut before session-end still verifies alone (exit 0)",
          p.returncode == 0, p.stderr)
    st, out, err = verify_anchors(jtext, cut)
    want = "anchor missing: session %s seq %d hash %s" % (
        end["session"], end["seq"], end["hash"])
    check("--anchors on the cut log: exit 1, the session-end anchor named",
          st == 1 and want in out and "uid 0, pid 4242" in out and
          out.count("anchor ") == 1, (st, out, err))
    # Rolled back and written again: same seq, another hash.
    forged, digest = reseal(lines[-1].replace('"why":', '"why":"x","y":'))
    rolled = log + ".rolled"
    with open(rolled, "w") as f:
        f.write("\n".join(lines[:-1] + [forged]) + "\n")
    p = subprocess.run([SP, "audit", "verify", rolled], capture_output=True,
                       timeout=30)
    check("the rewritten log verifies alone (exit 0)", p.returncode == 0,
          p.stderr)
    st, out, err = verify_anchors(jtext, rolled)
    check("--anchors on the rewritten log: contradicted, names the hash",
          st == 1 and "anchor contradicted: session %s seq %d" %
          (end["session"], end["seq"]) in out and digest in out,
          (st, out, err))
    # Two logs (another path's session in "all" mode): each anchor is
    # held by one of them; without the second, its anchors are missing.
    both = journal_json(entries + other[1])
    st, out, err = verify_anchors(both, other[2], log)
    n = len(entries) + len(other[1])
    # two logs are not one chain: the chain check says so (exit 1)
    check("--anchors over two logs: all %d anchors held" % n,
          st == 1 and "anchors: %d checked, %d held, 0 not held" % (n, n)
          in out and "not linked to the file before it" in out,
          (st, out, err))
    st, out, err = verify_anchors(both, log)
    check("--anchors without the second log: its %d anchors missing" %
          len(other[1]), st == 1 and out.count("anchor missing: ") ==
          len(other[1]) and other[0][0]["session"] in out, (st, out, err))
    anchors_malformed(jtext, log, end)


def anchors_malformed(jtext, log, end):
    st, out, err = verify_anchors(jtext + "not json\n", log)
    check("--anchors on a journal line that is not JSON: exit 65",
          st == 65 and "line" in err, (st, out, err))
    bad = json.dumps({"SP_HASH": "zz", "SP_SEQ": "1", "SP_SESSION": "s",
                      "_UID": "1001"})
    st, out, err = verify_anchors(jtext + bad + "\n", log)
    check("--anchors on an sp entry with a bad hash: malformed, exit 1",
          st == 1 and "anchor malformed" in out and "uid 1001" in out,
          (st, out, err))
    # The syslog form, as journald stores a syslog(3) line.
    msg = "sp-audit SP_KIND=session-end SP_SESSION=%s SP_SEQ=%d SP_HASH=%s" % (
        end["session"], end["seq"] + 7, end["hash"])
    line = json.dumps({"SYSLOG_IDENTIFIER": "sp", "MESSAGE": msg})
    st, out, err = verify_anchors(line + "\n", log)
    check("--anchors reads the syslog form: a wrong seq is contradicted",
          st == 1 and "anchor contradicted: session %s seq %d" %
          (end["session"], end["seq"] + 7) in out, (st, out, err))
    st, out, err = verify_anchors(jtext, log + ".absent")
    check("--anchors with a log that cannot be read: exit 66", st == 66,
          (st, out, err))


def anchored_by_rule(recs):
    """The seqs journal true anchors (audit/audit_journal.h): the
    session's ends, put_item's intent and execution (durable), and at
    least every 16th record."""
    out, since = [], 0
    for r in recs:
        since += 1
        if (r["kind"] in ("session-start", "session-end") or
                r.get("tool") == "put_item" or since >= 16):
            out.append(r["seq"])
            since = 0
    return out


def killed_session():
    """A session killed (SIGKILL to the broker) after some calls leaves no
    session-end anchor; the periodic anchors bound what can be cut from
    its tail unseen, and --anchors names the gap."""
    tmp = tmpdir()
    target = Target(lifetime=3600)
    cfg = get_and_put_item_policy(tmp, target.url)
    rx = Receiver(os.path.join(tmp, "sock"))
    p = start_ns(tmp, cfg)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    p.stdout.readline()
    tools = ["put_item", "get_item", "put_item"] + ["get_item"] * 11
    for i, tool in enumerate(tools, 1):
        p.stdin.write(request(i, "tools/call", {"name": tool, "arguments": {
            "id": NASTY[i % len(NASTY)], "card": "4111-0000-%04d" % i,
            "n": -i}}))
        p.stdin.flush()
        p.stdout.readline()
    log = os.path.join(tmp, "audit.jsonl")
    n_exec = len(tools)
    wait_for(lambda: sum(r["kind"] == "execution"
                         for r in read_log(log)[0]) == n_exec, 10)
    p.kill()
    p.wait(30)
    recs = read_log(log)[0]
    want = anchored_by_rule(recs)
    wait_for(lambda: len([e for e in rx.entries()[0] if "SP_HASH" in e])
             >= len(want), 5)
    entries = [e for e in rx.entries()[0] if "SP_HASH" in e]
    rx.close()
    target.stop()
    got = [int(e["SP_SEQ"]) for e in entries]
    check("killed session: anchors at its start, at each durable record "
          "and every 16th (%d of %d records)" % (len(want), len(recs)),
          got == want and recs[-1]["kind"] == "execution" and
          want[-1] < recs[-1]["seq"], (got, want, len(recs)))
    if not got:
        return
    jtext = journal_json(entries)
    last = next(r for r in recs if r["seq"] == got[-1])
    st, out, err = verify_anchors(jtext, log)
    gap = ("session %s ended without a session-end anchor (killed, or still "
           "running): its last anchor is seq %d (%s, hash %s)" %
           (last["session"], last["seq"], last["kind"], last["hash"]))
    check("--anchors on the killed session's log: exit 0, the gap named "
          "by its last anchor", st == 0 and gap in out, (st, out, err))
    with open(log) as f:
        lines = f.read().split("\n")[:-1]
    cut = log + ".cut"
    with open(cut, "w") as f:
        f.write("\n".join(lines[:last["seq"] - 1]) + "\n")
    p = subprocess.run([SP, "audit", "verify", cut], capture_output=True,
                       timeout=30)
    st, out, err = verify_anchors(jtext, cut)
    check("its tail cut from the last anchor on: the chain alone still "
          "verifies, --anchors exits 1 naming that anchor",
          p.returncode == 0 and st == 1 and
          "anchor missing: session %s seq %d hash %s" % (
              last["session"], last["seq"], last["hash"]) in out,
          (p.returncode, st, out, err))
    put = [r for r in recs if r.get("tool") == "put_item"][-1]
    with open(cut, "w") as f:
        f.write("\n".join(lines[:put["seq"] - 1]) + "\n")
    st, out, err = verify_anchors(jtext, cut)
    check("cut back before the last mutating execution: named missing",
          st == 1 and "anchor missing: session %s seq %d" % (
              put["session"], put["seq"]) in out, (st, out, err))


def policy_key():
    """audit.journal takes true, false or "all", nothing else."""
    tmp = tmpdir()
    for value, ok in ((True, True), ("all", True), (False, True),
                      ("yes", False), (1, False), ("ALL", False)):
        cfg = get_and_put_item_policy(tmp, "http://127.0.0.1:9")
        with open(cfg) as f:
            doc = json.load(f)
        doc["audit"]["journal"] = value
        with open(cfg, "w") as f:
            json.dump(doc, f)
        p = subprocess.run([SP, "check", "--config", cfg],
                           capture_output=True, timeout=30)
        err = p.stderr.decode()
        check("audit.journal %r: %s" % (value, "accepted" if ok else
              "refused"), (p.returncode == 0) == ok and
              (ok or 'must be true, false or "all"' in err), err)


def main():
    policy_key()
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True,
                           timeout=10)
    if os.geteuid() != 0 or probe.returncode != 0:
        check("journal tests # SKIP need root and unshare -m", True)
        done()
    recs, entries, log = anchors_default()
    other = anchors_all()
    anchors_off()
    journald_gone()
    held_start_then_rejection()
    if len(entries) == 4 and len(recs) >= 2:
        anchors_verify(recs, entries, log, other)
    else:
        check("--anchors tests need the four default entries", False,
              entries)
    killed_session()
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the real `sp audit verify` on logs written here from the format
documented in common/audit_chain.h (an independent implementation of it),
then on tampered copies: checks exit codes and the named record."""
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile

SP = os.environ.get("SP_BIN", "./sp")
failures = 0
count = 0

TEXTS = ["plain", 'say "hi"', "two\nlines", "$(rm -rf /)", "%2e%2e/%2E%2E",
         "h\u00e9llo \u20ac \U0001f511"]


def record_line(seq, session, kind, prev, members, key):
    body = {"seq": seq, "ts": "2026-11-30T21:00:00.%03dZ" % seq,
            "session": session, "kind": kind, "prev": prev}
    body.update(members)
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()
    line = text[:-1] + ',"hash":"%s"' % digest
    if key is not None:
        mac = hmac.new(key, bytes.fromhex(digest), hashlib.sha256).hexdigest()
        line += ',"hmac":"%s"' % mac
    return (line + "}").encode(), digest


def make_log(n, key=None):
    lines, prev, last = [], "0" * 64, None
    for i in range(1, n + 1):
        members = {"tool": "t%d" % i, "note": TEXTS[i % len(TEXTS)],
                   "args": {"id": "string(36)", "hash": "nested"}}
        line, last = record_line(i, "sess-%d" % (i % 3), "execution", prev,
                                 members, key)
        lines.append(line)
        prev = hashlib.sha256(line).hexdigest()
    return lines, last


def write(path, lines, tail=b""):
    with open(path, "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines) + tail)


def verify(*args):
    p = subprocess.run([SP, "audit"] + list(args), capture_output=True,
                       timeout=20)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def check(name, cond, detail=""):
    global failures, count
    count += 1
    print("%s %d - %s%s" % ("ok" if cond else "not ok", count, name,
                            "" if cond else " # " + detail.replace("\n", " | ")))
    if not cond:
        failures += 1


def expect(name, args, code, *needles):
    rc, out, err = verify(*args)
    check(name, rc == code and out == b"" and all(n in err for n in needles),
          "rc=%d out=%r err=%r" % (rc, out, err))


def main():
    d = tempfile.mkdtemp(prefix="sp-audit-it.")
    log = os.path.join(d, "audit.jsonl")
    lines, last = make_log(10)

    write(log, lines)
    expect("intact log: exit 0 with a summary", ["verify", log], 0,
           "ok: 10 records, 3 sessions, last hash " + last)

    edited = list(lines)
    edited[3] = edited[3].replace(b'"tool":"t4"', b'"tool":"t5"')
    write(log, edited)
    expect("one byte edited: named", ["verify", log], 1,
           "line 4 (seq 4, expected seq 4)", "edited")

    write(log, lines[:5] + lines[6:])
    expect("line deleted: named", ["verify", log], 1,
           "line 6 (seq 7, expected seq 6)", "removed")

    write(log, lines[:1] + [lines[2], lines[1]] + lines[3:])
    expect("two lines swapped: named", ["verify", log], 1,
           "line 2 (seq 3, expected seq 2)", "reordered")

    write(log, lines, tail=lines[0][:37])
    expect("torn tail: exit 0 with a warning", ["verify", log], 0,
           "ok: 10 records", "warning: line 11: torn tail (37 bytes")

    write(log, lines[:4] + [lines[4][:20]] + lines[5:])
    expect("torn line in the middle: a break", ["verify", log], 1,
           "line 5 (seq unknown", "malformed")

    key = b'k"ey\n'
    keyfile, wrong = os.path.join(d, "key"), os.path.join(d, "wrong")
    with open(keyfile, "wb") as f:
        f.write(key)
    with open(wrong, "wb") as f:
        f.write(b'k"ey')
    klines, klast = make_log(6, key)
    write(log, klines)
    expect("keyed log with its key", ["verify", "--key", keyfile, log], 0,
           "ok: 6 records", klast)
    expect("keyed log with a wrong key", ["verify", "--key", wrong, log], 1,
           "line 1 (seq 1", "bad HMAC")
    write(log, lines)
    expect("plain log with a key", ["verify", "--key", keyfile, log], 1,
           "line 1 (seq 1", "missing HMAC")

    write(log, [])
    expect("empty log", ["verify", log], 0, "ok: 0 records")
    expect("missing file: 66", ["verify", os.path.join(d, "none")], 66,
           "No such file")
    expect("missing key file: 66",
           ["verify", "--key", os.path.join(d, "none"), log], 66)
    expect("no subcommand: 64", [], 64, "usage")
    expect("unknown subcommand: 64", ["rewrite", log], 64, "usage")
    expect("extra argument: 64", ["verify", log, log], 64, "usage")

    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    os.rmdir(d)
    print("1..%d" % count)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

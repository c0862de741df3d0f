#!/usr/bin/env python3
"""Runs the real `sp audit verify` on logs written here from the format
documented in common/audit_chain.h and docs/sp-audit.5 (an independent
implementation of it, rotation included), then on tampered copies: checks
exit codes, the verdict on stdout (a line, or --json), the named record."""
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.tap import check, done  # noqa: E402

SP = os.environ.get("SP_BIN", "./sp")

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


def make_log(n, key=None, first=1, prev="0" * 64, rotated=None):
    """n records from seq first; rotated = (seq, hash) of the file before."""
    lines, last = [], None
    for i in range(first, first + n):
        members = {}
        if rotated is not None and i == first:
            members["rotated_from"] = {"seq": rotated[0], "hash": rotated[1]}
        members.update({"tool": "t%d" % i, "note": TEXTS[i % len(TEXTS)],
                        "args": {"id": "string(36)", "hash": "nested"}})
        line, last = record_line(i, "sess-%d" % (i % 3), "execution", prev,
                                 members, key)
        lines.append(line)
        prev = hashlib.sha256(line).hexdigest()
    return lines, last


def make_rotated(sizes, key=None):
    """One chain cut into files of these sizes, oldest first."""
    files, seq, prev, rotated = [], 1, "0" * 64, None
    for n in sizes:
        lines, last = make_log(n, key, seq, prev, rotated)
        files.append(lines)
        seq += n
        prev = hashlib.sha256(lines[-1]).hexdigest()
        rotated = (seq - 1, last)
    return files


def write(path, lines, tail=b""):
    with open(path, "wb") as f:
        f.write(b"".join(l + b"\n" for l in lines) + tail)


def verify(*args):
    p = subprocess.run([SP, "audit"] + list(args), capture_output=True,
                       timeout=20)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def expect(name, args, code, *needles, err_has=()):
    """The verdict is one line on stdout; diagnostics only on stderr."""
    rc, out, err = verify(*args)
    text = out.decode("utf-8", "replace")
    one_line = text.count("\n") == 1 and text.endswith("\n")
    check(name, rc == code and one_line and all(n in text for n in needles)
          and all(n in err for n in err_has),
          "rc=%d out=%r err=%r" % (rc, out, err))


def expect_usage(name, args):
    rc, out, err = verify(*args)
    check(name, rc == 64 and out == b"" and "usage" in err,
          "rc=%d out=%r err=%r" % (rc, out, err))


def expect_json(name, args, code, **want):
    rc, out, err = verify(*(args[:1] + ["--json"] + args[1:]))
    try:
        got = json.loads(out)
        same = all(got.get(k) == v for k, v in want.items())
    except ValueError:
        got, same = None, False
    check(name, rc == code and same and out.count(b"\n") == 1,
          "rc=%d got=%r want=%r err=%r" % (rc, got, want, err))


def rotation_cases(d):
    """Files a.2 a.1 a of one chain: together intact; each tampering named."""
    files = make_rotated([4, 3, 5])
    paths = [os.path.join(d, n) for n in ("a.2", "a.1", "a")]
    for p, lines in zip(paths, files):
        write(p, lines)
    expect("three rotated files verify together", ["verify"] + paths, 0,
           "ok: 3 files, 12 records", "last seq 12")
    expect("a rotated file alone says what it continues", ["verify",
           paths[2]], 0, "continues from seq 7", "of a file not given")
    expect("middle file missing: named", ["verify", paths[0], paths[2]], 1,
           paths[2] + " line 1", "a rotated file is missing before it")
    expect("files out of order: named", ["verify", paths[1], paths[0],
           paths[2]], 1, "out of order")
    # in the order given, a.1 is missing before a: the first file out of
    # place is the one named
    expect("two files swapped at the end: named", ["verify", paths[0],
           paths[2], paths[1]], 1, paths[2] + " line 1 (seq 8",
           "missing before it")
    edited = list(files[1])
    edited[2] = edited[2].replace(b'"tool":"t7"', b'"tool":"t8"')
    write(paths[1], edited)
    expect("record edited in the middle file: named",
           ["verify"] + paths, 1, paths[1] + " line 3 (seq 7", "edited")
    # the middle file's last line resealed: its own hash holds, the link not
    body = json.loads(files[1][2])
    body["tool"] = "forged"
    del body["hash"]
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    forged = (text[:-1] + ',"hash":"%s"}' % hashlib.sha256(
        text.encode()).hexdigest()).encode()
    write(paths[1], files[1][:2] + [forged])
    expect("middle file's last record resealed: next file names it",
           ["verify"] + paths, 1, paths[2] + " line 1",
           "edited or replaced")
    write(paths[1], files[1])
    write(paths[0], files[0][:3])
    expect("first file cut short: named", ["verify"] + paths, 1,
           paths[1] + " line 1", "missing before it")
    # a later file that starts over: nothing shows it followed the file
    # before, so the files are not one chain
    fresh, _ = make_log(2)
    write(paths[0], files[0])
    write(paths[2], fresh)
    expect("a later file that starts a new chain: named, not ok",
           ["verify"] + paths, 1, paths[2] + " line 1 (seq 1",
           "not linked to the file before it")
    for p in paths:
        os.unlink(p)


def main():
    d = tempfile.mkdtemp(prefix="sp-audit-it.")
    log = os.path.join(d, "audit.jsonl")
    lines, last = make_log(10)

    write(log, lines)
    expect("intact log: exit 0 with a summary", ["verify", log], 0,
           "ok: 1 file, 10 records, 3 sessions, last seq 10, last hash " +
           last, "; HMACs not checked (no --key)")
    expect_json("intact log: --json", ["verify", log], 0, verdict="ok",
                records=10, sessions=3, last_hash=last, hmac_checked=False,
                files=[log])

    edited = list(lines)
    edited[3] = edited[3].replace(b'"tool":"t4"', b'"tool":"t5"')
    write(log, edited)
    expect("one byte edited: named", ["verify", log], 1,
           "broken: %s line 4 (seq 4, expected seq 4)" % log, "edited")
    expect_json("one byte edited: --json", ["verify", log], 1,
                verdict="broken", records=3,
                **{"break": {"file": log, "line": 4, "seq": 4,
                             "expected_seq": 4,
                             "reason": "edited (hash mismatch)"}})

    write(log, lines[:5] + lines[6:])
    expect("line deleted: named", ["verify", log], 1,
           "line 6 (seq 7, expected seq 6)", "removed")

    write(log, lines[:1] + [lines[2], lines[1]] + lines[3:])
    expect("two lines swapped: named", ["verify", log], 1,
           "line 2 (seq 3, expected seq 2)", "reordered")

    write(log, lines, tail=lines[0][:37])
    expect("torn tail: exit 0 with a warning", ["verify", log], 0,
           "ok: 1 file, 10 records", "torn tail at %s line 11 (37 bytes)" %
           log, err_has=["line 11: torn tail (37 bytes"])

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
           "ok: 1 file, 6 records", klast, "; HMACs checked")
    expect_json("keyed log with its key: --json", ["verify", "--key",
                keyfile, log], 0, verdict="ok", hmac_checked=True)
    expect("keyed log without the key: said", ["verify", log], 0,
           "ok: 1 file, 6 records", "; HMACs not checked (no --key)")
    expect("keyed log with a wrong key", ["verify", "--key", wrong, log], 1,
           "line 1 (seq 1", "bad HMAC", "; HMACs checked")
    expect_json("keyed log with a wrong key: --json", ["verify", "--key",
                wrong, log], 1, verdict="broken", hmac_checked=True)
    # record 4 forged and resealed, hash and HMAC, in the middle of one
    # file: every record holds on its own, only line 5's prev is wrong
    forged, _ = record_line(4, "sess-1", "execution",
                            hashlib.sha256(klines[2]).hexdigest(),
                            {"tool": "forged", "note": TEXTS[5],
                             "args": {"id": "string(36)", "hash": "nested"}},
                            key)
    write(log, klines[:3] + [forged] + klines[4:])
    expect("a record resealed inside one file: the next one's prev names "
           "it", ["verify", "--key", keyfile, log], 1,
           "broken: %s line 5 (seq 5, expected seq 5)" % log,
           "prev mismatch", "; HMACs checked")
    write(log, lines)
    expect("plain log with a key", ["verify", "--key", keyfile, log], 1,
           "line 1 (seq 1", "missing HMAC")

    write(log, [])
    expect("empty log", ["verify", log], 0, "ok: 1 file, 0 records")
    rc, out, err = verify("verify", os.path.join(d, "none"))
    check("missing file: 66", rc == 66 and out == b"" and
          "No such file" in err, "rc=%d out=%r err=%r" % (rc, out, err))
    expect_json("missing file: 66 with --json", ["verify",
                os.path.join(d, "none")], 66, verdict="unreadable")
    rc, out, err = verify("verify", "--key", os.path.join(d, "none"), log)
    check("missing key file: 66", rc == 66 and out == b"",
          "rc=%d out=%r err=%r" % (rc, out, err))
    expect_usage("no subcommand: 64", [])
    expect_usage("unknown subcommand: 64", ["rewrite", log])
    expect_usage("unknown option: 64", ["verify", "--keys", keyfile, log])
    expect_usage("no file: 64", ["verify", "--json"])
    expect_usage("--key without its file: 64", ["verify", "--key"])
    rotation_cases(d)

    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    os.rmdir(d)
    done()


if __name__ == "__main__":
    main()

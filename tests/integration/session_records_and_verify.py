#!/usr/bin/env python3
"""The records of a real `sp mcp` session, and `sp audit verify` on them
(docs/design.md section 6):

- editing one byte, deleting a line, swapping two lines of the log: verify
  fails and names the record (line and why) each time;
- a refused frame is a rejection record with its frame number, code and
  the SHA-256 of its bytes, never the bytes; session-end counts it apart
  from executions;
- session-start names profile, peer, policy fingerprint and version;
- the last hash is printed on stderr as the anchor; with audit.key_file
  every record carries an HMAC that verify --key checks;
- without an audit path, stderr says nothing is audited."""
import hashlib
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402
from sptest.mcp import item_calls, outcome, responses  # noqa: E402
from sptest.policy import get_and_put_item_policy  # noqa: E402
from sptest.run import finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

BAD_FRAME = b'{"jsonrpc":"2.0", bad "$(SECRET-FRAME)" \xc3\xa9'


def session(tmp, target, key_file=None, extra=b""):
    cfg = get_and_put_item_policy(tmp, target.url, key_file=key_file)
    return finish(start(cfg), item_calls(3, "put_item") + extra)


def tampered(tmp, lines, name, change):
    path = os.path.join(tmp, name)
    new = change(list(lines))
    with open(path, "wb") as f:
        f.write(b"".join(l + b"\n" for l in new))
    return verify(path)


def tamper_tests(tmp, log):
    lines = open(log, "rb").read().split(b"\n")[:-1]
    k = 4		# a record in the middle: 1-based line number

    def edit(ls):
        # one byte of the time stamp's milliseconds; still valid JSON
        i = ls[k - 1].index(b'Z","session"') - 1
        digit = b"1" if ls[k - 1][i:i + 1] != b"1" else b"2"
        ls[k - 1] = ls[k - 1][:i] + digit + ls[k - 1][i + 1:]
        return ls

    def delete(ls):
        del ls[k - 1]
        return ls

    def swap(ls):
        ls[k - 1], ls[k] = ls[k], ls[k - 1]
        return ls

    for name, change, why in (("edit", edit, "edited"),
                              ("delete", delete, "removed"),
                              ("swap", swap, "reordered")):
        status, err = tampered(tmp, lines, name, change)
        check("%s: verify fails" % name, status != 0, err)
        seq = k + 1 if name in ("delete", "swap") else k
        check("%s: it names line %d (seq %d, expected %d) as %s" %
              (name, k, seq, k, why),
              re.search(r"broken: \S+ line %d \(seq %d, expected seq %d\): %s"
                        % (k, seq, k, why), err) is not None, err)
        check("%s: the %d records before it are intact" % (name, k - 1),
              "%d records intact before it" % (k - 1) in err, err)


def main():
    tmp = tmpdir()
    target = Target(lifetime=3600)
    log = os.path.join(tmp, "audit.jsonl")
    status, out, err = session(tmp, target, extra=BAD_FRAME + b"\n")
    check("the session ends as malformed input (65)", status == 65, err)
    recs, _ = read_log(log)
    raw = open(log, "rb").read()
    start_rec = recs[0]
    check("session-start: profile, peer, policy fingerprint, version",
          start_rec["kind"] == "session-start" and
          start_rec["profile"] == "default" and start_rec["peer"] and
          re.fullmatch("[0-9a-f]{64}", start_rec["policy_sha256"]) and
          start_rec["version"], start_rec)
    rej = [r for r in recs if r["kind"] == "rejection"]
    check("one rejection: frame 5, code -32700, SHA-256 of the frame",
          len(rej) == 1 and rej[0]["frame"] == 5 and
          rej[0]["code"] == -32700 and rej[0]["sha256"] ==
          hashlib.sha256(BAD_FRAME).hexdigest(), rej)
    check("the refused bytes are not in the file",
          b"SECRET-FRAME" not in raw, raw[-600:])
    end = recs[-1]
    check("session-end counts 1 rejection and 3 executions apart",
          end["kind"] == "session-end" and end["rejections"] == 1 and
          end["executions"] == 3 and end["why"] == "malformed input", end)
    m = re.search(r"last hash ([0-9a-f]{64})", err)
    check("the last hash is on stderr as the anchor",
          m is not None and m.group(1) == end["hash"], err)
    check("without a key, records carry no hmac",
          not any("hmac" in r for r in recs))
    status, err = verify(log)
    check("verify passes on the untouched log", status == 0, err)
    tamper_tests(tmp, log)

    ktmp = tmpdir()
    key = os.path.join(ktmp, "audit.key")
    with open(key, "wb") as f:
        f.write(os.urandom(32))
    os.chmod(key, 0o600)
    status, out, err = session(ktmp, target, key_file=key)
    klog = os.path.join(ktmp, "audit.jsonl")
    recs, _ = read_log(klog)
    check("with audit.key_file every record carries an hmac",
          status == 0 and recs and
          all(re.fullmatch("[0-9a-f]{64}", r.get("hmac", "")) for r in recs),
          recs[:1])
    status, err = verify(klog, key)
    check("verify --key with the key passes", status == 0, err)
    other = os.path.join(ktmp, "other.key")
    with open(other, "wb") as f:
        f.write(b"not the key\n")
    status, err = verify(klog, other)
    check("verify --key with another key names line 1", status != 0 and
          "line 1 " in err, err)

    ntmp = tmpdir()
    cfg = get_and_put_item_policy(ntmp, target.url, audit=False)
    status, out, err = finish(start(cfg), item_calls(1, "put_item"))
    check("without an audit path the call still runs",
          outcome(responses(out).get(1)) == "ok", out)
    check("and one stderr line says nothing is audited",
          len(re.findall("nothing is audited", err)) == 1, err)
    check("and no log file appears", not any(
        f.endswith(".jsonl") for f in os.listdir(ntmp)), os.listdir(ntmp))
    target.stop()
    done()


main()

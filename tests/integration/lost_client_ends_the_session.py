#!/usr/bin/env python3
"""Issue 14 finding 6 through the real sp mcp: a client that closes its
read end of sp's stdout and goes on sending calls.  The session must stop
reading, cancel the call in flight (its execution record "unknown", a
cancellation saying it had started), start nothing more, and exit 74 --
whether it sees a hang-up or only a refused write (EPIPE).
What reached the target is counted in its request log."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, call  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import SP, read_line, sp_env, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

# Valid ids (maxLength 64): quotes, $(), a newline, %2e%2e, multibyte, '-'.
IDS = ["-x", "it's \"$(id)\"\n", "%2e%2e/\u00e9t\u00e9 \u2603", "7"]


def audit(tmp):
    with open(os.path.join(tmp, "audit.jsonl"), encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def send(p, data):
    """False once sp no longer reads its input."""
    try:
        p.stdin.write(data)
        p.stdin.flush()
        return True
    except BrokenPipeError:
        return False


def wait_exit(p, timeout=20):
    end = time.monotonic() + timeout
    while p.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    return p.poll()


def kill(p):
    """Ends sp if it is still there; its pipes may be closed already."""
    if p.poll() is None:
        p.kill()
    p.wait(10)
    for f in (p.stdin, p.stdout, p.stderr):
        if f is None:
            continue
        try:
            f.close()
        except (BrokenPipeError, ValueError):
            pass


def requests_after(target, n):
    return [r for r in target.requests()[n:] if r.get("event") == "request"]


def test_close_with_a_call_in_flight(tmp, target, burst):
    """A slow call runs; the client closes sp's stdout, then sends calls
    (burst: 20 in one write at once, else one every 50 ms)."""
    p = start(get_item_and_fetch_policy(tmp, target.port))
    try:
        send(p, INITIALIZE)
        first = read_line(p, 10)
        send(p, call(1, "fetch", {"a": "slow", "b": "30000"}))
        target.wait_requests(1, 10)
        seen = len(target.requests())
        p.stdout.close()
        t0 = time.monotonic()
        calls = [call(10 + i, arguments={"id": IDS[i % len(IDS)] + str(i)})
                 for i in range(20)]
        sent = 0
        if burst:
            sent = 20 if send(p, b"".join(calls)) else 0
        else:
            for c in calls:
                if not send(p, c):
                    break
                sent += 1
                time.sleep(0.05)
        status = wait_exit(p)
        took = time.monotonic() - t0
        err = p.stderr.read().decode("utf-8", "replace") \
            if status is not None else ""
    finally:
        kill(p)
    how = "a burst" if burst else "one by one"
    check("%s: stdout closed with a call in flight: exit 74 in %.2f s"
          % (how, took), b'"id":0' in first and seen == 1 and status == 74,
          (first[:80], seen, status, err[-400:]))
    time.sleep(0.5)
    after = requests_after(target, seen)
    check("... %d calls sent after the close, none reached the target"
          % sent, after == [], after)
    aborted = [r for r in target.requests() if r.get("event") == "aborted"]
    check("... the slow request was cut off", len(aborted) == 1,
          target.requests())
    records = audit(tmp)
    kinds = [r["kind"] for r in records]
    end = records[-1]
    check("... the audit: one intent, its execution unknown, its "
          "cancellation started",
          kinds.count("intent") == 1 and
          [r.get("outcome") for r in records
           if r["kind"] == "execution"] == ["unknown"] and
          [r.get("started") for r in records
           if r["kind"] == "cancellation"] == [True], kinds)
    check("... session-end says why, status 74, one line on stderr",
          end["kind"] == "session-end" and end["status"] == 74 and
          end["why"] == "the client stopped reading" and
          err.count("the client stopped reading") == 1, (end, err[-400:]))


def test_close_when_idle(tmp, target):
    """No call in flight: the close alone ends the session, at once,
    though the client keeps stdin open and sends nothing."""
    p = start(get_item_and_fetch_policy(tmp, target.port))
    try:
        send(p, INITIALIZE)
        read_line(p, 10)
        p.stdout.close()
        t0 = time.monotonic()
        status = wait_exit(p)
        took = time.monotonic() - t0
    finally:
        kill(p)
    check("idle session, stdout closed, stdin open: exit 74 in %.2f s"
          % took, status == 74, status)
    check("... nothing reached the target", target.requests() == [],
          target.requests())


def test_write_refused(tmp, target):
    """stdin and stdout one Unix socket whose client shuts down its read
    side (shutdown SHUT_RD): sp's side sees no error and no hang-up, only
    its next write fails (EPIPE).  That write alone must end the session:
    the answer to a call that reached the target cannot be delivered."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    p = subprocess.Popen([SP, "mcp", "--config",
                          get_item_and_fetch_policy(tmp, target.port)],
                         stdin=theirs, stdout=theirs, stderr=subprocess.PIPE,
                         env=sp_env())
    theirs.close()
    try:
        ours.sendall(INITIALIZE)
        ours.settimeout(60)
        first = ours.recv(65536)
        ours.shutdown(socket.SHUT_RD)
        ours.sendall(call(1, arguments={"id": IDS[1]}))
        status = wait_exit(p, 60)
        err = p.stderr.read().decode("utf-8", "replace") \
            if status is not None else ""
    finally:
        kill(p)
        ours.close()
    records = audit(tmp)
    end = records[-1]
    check("socket read side shut: the answer's write fails (EPIPE), exit 74",
          b'"id":0' in first and status == 74, (first[:80], status,
                                                err[-400:]))
    check("... session-end says why, one line on stderr",
          end["kind"] == "session-end" and end["status"] == 74 and
          end["why"] == "the client stopped reading" and
          err.count("the client stopped reading") == 1, (end, err[-400:]))
    reqs = requests_after(target, 0)
    check("... the one call reached the target once",
          len(reqs) == 1, reqs)


def test_closed_before_start(tmp, target):
    """Input is a file of calls and stdout a pipe whose read end is gone
    before sp starts: the first read and the hang-up come in the same
    wake-up, and the read comes first, so only asking the writer before
    acting keeps those calls from being announced (intents) at all."""
    path = os.path.join(tmp, "input")
    with open(path, "wb") as f:
        f.write(INITIALIZE + b"".join(
            call(i, arguments={"id": IDS[i % len(IDS)]}) for i in range(20)))
    r, w = os.pipe()
    os.close(r)
    with open(path, "rb") as stdin:
        p = subprocess.Popen([SP, "mcp", "--config",
                              get_item_and_fetch_policy(tmp, target.port)],
                             stdin=stdin,
                             stdout=w, stderr=subprocess.PIPE,
                             env=sp_env())
    os.close(w)
    try:
        _, err = p.communicate(timeout=20)
        status = p.returncode
    except subprocess.TimeoutExpired:
        status, err = None, b""
    finally:
        kill(p)
    time.sleep(0.3)
    kinds = [r["kind"] for r in audit(tmp)]
    check("stdout gone before start, 20 calls in a file: exit 74",
          status == 74, (status, err[-300:]))
    check("... no intent, nothing reached the target",
          "intent" not in kinds and target.requests() == [],
          (kinds, target.requests()))


def main():
    for test, args in ((test_close_with_a_call_in_flight, (True,)),
                       (test_close_with_a_call_in_flight, (False,)),
                       (test_close_when_idle, ()),
                       (test_write_refused, ()),
                       (test_closed_before_start, ())):
        tmp = tmpdir()
        target = Target(tmp, "recorder", events=True)
        try:
            test(tmp, target, *args)
        finally:
            target.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A client that never reads stdout while sending many pings: Sallyport
stops reading instead of growing memory.  The frontend's VmRSS stays
bounded, the client's writes block, and once the client reads again
every ping is answered, in order."""
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, first_bad_line, request  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import sanitized_build, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

PAD = "p" * 200		# long ids: each answer is ~240 bytes
PINGS = 250000		# ~60 MB of input, ~60 MB of answers
RSS_BOUND_KB = 48 * 1024


def ping(i):
    return request("%s-%d" % (PAD, i), "ping")


def writer(p, sent):
    try:
        p.stdin.write(INITIALIZE)
        for i in range(PINGS):
            p.stdin.write(ping(i))
            sent[0] = i + 1
        p.stdin.close()
    except (BrokenPipeError, ValueError, OSError):
        pass


def rss_kb(pid):
    v = status_field(pid, "VmRSS")
    return int(v.split()[0]) if v else 0


def main():
    if sanitized_build():
        check("frontend memory bound # SKIP ASan's quarantine keeps "
              "freed memory", True)
        done()
    tmp = tmpdir()
    p = start(get_item_and_fetch_policy(tmp, 9))
    kids = confined_children(p.pid)
    sent = [0]
    t = threading.Thread(target=writer, args=(p, sent), daemon=True)
    t.start()
    peak, last = 0, -1
    end = time.monotonic() + 20
    # Until the client's writes stop making progress: Sallyport is full.
    while time.monotonic() < end:
        time.sleep(0.5)
        peak = max(peak, rss_kb(kids.get("frontend", 0)))
        if sent[0] == last:
            break
        last = sent[0]
    stalled = sent[0]
    check("the client's writes block while it does not read",
          0 < stalled < PINGS, "sent %d of %d" % (stalled, PINGS))
    check("the frontend's VmRSS stays bounded (%d kB)" % peak,
          0 < peak < RSS_BOUND_KB, "peak %d kB" % peak)
    out = bytearray()
    reader_end = time.monotonic() + 60
    while time.monotonic() < reader_end:
        chunk = p.stdout.read1(1 << 20)
        if not chunk:
            break
        out += chunk
    t.join(10)
    p.wait(10)
    bad = first_bad_line(bytes(out), expect_lines=PINGS + 1)
    check("reading again: every ping answered, pure protocol", bad is None,
          bad)
    ordered = bytes(out).split(b"\n")[-2].find(
        ('"%s-%d"' % (PAD, PINGS - 1)).encode()) >= 0
    check("... and the last answer is the last ping's", ordered)
    check("... and the session ends with 0", p.returncode == 0,
          p.returncode)
    p.stderr.close()
    done()


if __name__ == "__main__":
    main()

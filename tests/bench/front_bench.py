#!/usr/bin/env python3
"""make bench-front: cold start of sp mcp, from process start to the
initialize answer, median of 20, against a baseline measured in the same
run (`sp catalog` on the same policy: the same binary loading the same
policy, without children or sandbox); the cold start to a server/discover
answer (2026-07-28) beside it, runs interleaved, since the v2 SDK pays a
whole start for its probe before the session's own; and the VmRSS and Pss of the broker,
the frontend and the executor while idle, and their sums (VmRSS counts
a shared page in each process; Pss divides it among every process on the
machine that maps it, so it moves with whatever else runs), and, where
/proc/PID/pagemap shows frame numbers (root), their resident memory
together with each physical page counted once.  Printed, not asserted."""
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.environ.get("SP_SRCDIR", "."), "tests",
                                "integration"))
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import SP, finish, sp_env, start, tmpdir  # noqa: E402

RUNS = 20
DISCOVER = request(0, "server/discover", {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}})


def cold_start(config, first=INITIALIZE):
    t0 = time.perf_counter()
    p = start(config)
    p.stdin.write(first)
    p.stdin.flush()
    line = p.stdout.readline()
    t1 = time.perf_counter()
    finish(p)
    if not line.startswith(b'{"jsonrpc":"2.0","id":0,"result"'):
        sys.exit("bench-front: no answer to the first request: %r" % line)
    return t1 - t0


def baseline(config):
    t0 = time.perf_counter()
    subprocess.run([SP, "catalog", "--config", config], env=sp_env(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - t0


def rollup_kib(pid, field):
    """A field of /proc/PID/smaps_rollup in kB.  Pss: shared pages divided
    among the processes mapping them, so the three roles add up honestly.
    Private_Dirty: pages no other process can share (heap, stacks, written
    data), what one more session costs a host where the libraries are
    already in the page cache."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def resident_frames(pid):
    """The physical frames of pid's resident pages, from /proc/PID/pagemap
    (bit 63: present; bits 0-54: frame number).  Frame numbers read as 0
    without CAP_SYS_ADMIN: then None."""
    frames = set()
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        with open("/proc/%d/maps" % pid) as maps, \
                open("/proc/%d/pagemap" % pid, "rb") as pagemap:
            for line in maps:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo >= 1 << 47:  # [vsyscall]: not in pagemap
                    continue
                pagemap.seek(lo // page * 8)
                data = pagemap.read((hi - lo) // page * 8)
                for i in range(0, len(data), 8):
                    entry = int.from_bytes(data[i:i + 8], "little")
                    if entry >> 63:
                        frames.add(entry & ((1 << 55) - 1))
    except OSError:
        return None
    return None if frames == {0} else frames


def together_kib(pids):
    """Resident memory of pids together, each physical page counted once
    however many of them map it, or None where /proc does not tell."""
    union = set()
    for pid in pids:
        frames = resident_frames(pid)
        if frames is None:
            return None
        union |= frames
    return len(union) * os.sysconf("SC_PAGE_SIZE") // 1024


def idle_memory(config):
    """{role: (VmRSS kB, Pss kB, Private_Dirty kB)} of the three processes while idle, and
    their resident memory together (each page once)."""
    p = start(config)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    p.stdout.readline()
    kids = confined_children(p.pid)
    time.sleep(0.3)
    pids = dict(kids, broker=p.pid)
    mem = {}
    for role, pid in sorted(pids.items()):
        rss = status_field(pid, "VmRSS")
        mem[role] = (int(rss.split()[0]) if rss else None,
                     rollup_kib(pid, "Pss"), rollup_kib(pid, "Private_Dirty"))
    together = together_kib(pids.values())
    finish(p)
    return mem, together


def main():
    config = get_item_and_fetch_policy(tmpdir(), 9)
    base = statistics.median(baseline(config) for _ in range(RUNS))
    cold = statistics.median(cold_start(config) for _ in range(RUNS))
    print("bench-front: cold start to the initialize answer, median of %d: "
          "%.1f ms; baseline (sp catalog, same policy): %.1f ms; ratio %.1fx"
          % (RUNS, cold * 1000, base * 1000, cold / base))
    pairs = [(cold_start(config, DISCOVER), cold_start(config))
             for _ in range(RUNS)]
    disc = statistics.median(d for d, _ in pairs)
    init = statistics.median(i for _, i in pairs)
    print("bench-front: cold start to the server/discover answer, median of "
          "%d: %.1f ms; to the initialize answer (interleaved): %.1f ms; "
          "ratio %.2f (the v2 SDK's probe adds one such start before "
          "the session's own)" % (RUNS, disc * 1000, init * 1000, disc / init))
    mem, together = idle_memory(config)
    for role, (rss, pss, dirty) in mem.items():
        print("bench-front: idle %-8s VmRSS %s kB, Pss %s kB, "
              "Private_Dirty %s kB" % (role, rss, pss, dirty))
    if all(None not in v for v in mem.values()):
        print("bench-front: idle sum of %d: VmRSS %d kB, Pss %d kB, "
              "Private_Dirty %d kB"
              % (len(mem), sum(v[0] for v in mem.values()),
                 sum(v[1] for v in mem.values()),
                 sum(v[2] for v in mem.values())))
    if together is not None:
        print("bench-front: idle resident together (each page once, "
              "/proc/PID/pagemap): %d kB" % together)

if __name__ == "__main__":
    main()

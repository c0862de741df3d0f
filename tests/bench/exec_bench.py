#!/usr/bin/env python3
"""`make bench-exec`: figures printed, not asserted.

HTTP: tools/call through `sp mcp` (client, frontend, executor, libcurl)
against a small C server (exec_bench_peer serve), at 1 and 16 in flight,
beside a plain libcurl loop issuing the same GETs in one process
(exec_bench_peer curl).  SSH: an `echo` tool through `sp mcp` beside
OpenSSH's ssh with a control master running the same command.  The HTTP
sp figures come from a C client (exec_bench_peer mcp), so both sides pay
for C only; the row "sp mcp via Python client" is the same through this
script's own client, to show what an interpreter adds.  The SSH sp
figures include this Python client's own JSON work."""
import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import SP, sp_env  # noqa: E402

BUILDDIR = os.environ.get("SP_BUILDDIR", ".")
PEER = os.path.join(BUILDDIR, "tests", "bench", "exec_bench_peer")
FIXTURE = os.path.join(HERE, "..", "integration", "sshd_fixture.sh")
HTTP_N1, HTTP_N16, SSH_N = 2000, 4000, 200


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def summary(lat_us, wall_us):
    return {"p50": pct(lat_us, 50), "p95": pct(lat_us, 95),
            "rps": len(lat_us) / (wall_us / 1e6)}


def sp_calls(cfg, tool, args, n, k):
    """n tools/call with k in flight: per-call µs and wall µs."""
    p = subprocess.Popen([SP, "mcp", "--config", cfg], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=sp_env())
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    p.stdout.readline()
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    started, lat, sent = {}, [], 0

    def send(i):
        started[i] = time.monotonic()
        p.stdin.write(request(i, "tools/call",
                              {"name": tool, "arguments": args}))

    t0 = time.monotonic()
    for sent in range(min(k, n)):
        send(sent + 1)
    sent = min(k, n)
    p.stdin.flush()
    bad = 0
    while len(lat) < n:
        msg = json.loads(p.stdout.readline())
        lat.append((time.monotonic() - started[msg["id"]]) * 1e6)
        sc = msg.get("result", {}).get("structuredContent", {})
        bad += sc.get("outcome") != "ok"
        if sent < n:
            sent += 1
            send(sent)
            p.stdin.flush()
    wall = (time.monotonic() - t0) * 1e6
    p.stdin.close()
    p.wait()
    if bad:
        print("  (%d of %d calls were not ok)" % (bad, n))
    return lat, wall


def peer_figures(argv, env=None):
    """Runs the C peer: latencies, one per line, then "wall" (and for
    mcp "notok")."""
    out = subprocess.run(argv, stdout=subprocess.PIPE, text=True, env=env,
                         check=True).stdout.split("\n")
    lat = [int(l) for l in out if l and l[0].isdigit()]
    tagged = dict(l.split() for l in out if l and not l[0].isdigit())
    bad = int(tagged.get("notok", 0))
    if bad:
        print("  (%d of %d calls were not ok)" % (bad, len(lat)))
    return lat, int(tagged["wall"])


def curl_calls(url, n, k):
    return peer_figures([PEER, "curl", url, str(n), str(k)])


def sp_calls_c(cfg, tool, args, n, k):
    """n tools/call with k in flight through the C client."""
    return peer_figures([PEER, "mcp", str(n), str(k), tool, json.dumps(args),
                         "--", SP, "mcp", "--config", cfg], env=sp_env())


def show(name, sp, base, py=None):
    if py is not None:
        print("%-22s sp mcp via Python client p50 %7.0f µs  p95 %7.0f µs  "
              "%7.0f calls/s" % (name, py["p50"], py["p95"], py["rps"]))
    print("%-22s sp mcp p50 %7.0f µs  p95 %7.0f µs  %7.0f calls/s" %
          (name, sp["p50"], sp["p95"], sp["rps"]))
    print("%-22s direct p50 %7.0f µs  p95 %7.0f µs  %7.0f calls/s" %
          ("", base["p50"], base["p95"], base["rps"]))
    print("%-22s added at p50 %+.0f µs; p50 x%.2f, p95 x%.2f, "
          "throughput x%.2f of direct" %
          ("", sp["p50"] - base["p50"], sp["p50"] / base["p50"],
           sp["p95"] / base["p95"], sp["rps"] / base["rps"]))


def round_trip():
    """The machine's price of one round trip between two processes that
    wait in epoll, as sp's loops do.  The direct loop pays one per call
    (client and server); sp mcp pays three more (client and frontend,
    frontend and executor, executor and the broker's intent ack).  The
    same pair bound to one CPU shows how much of that price is waking an
    idle CPU: on a VM whose idle vCPUs halt, that wake-up, not sp's own
    work, sets how close the p50 can come."""
    p50 = []
    for mode in ([], ["one-cpu"]):
        out = subprocess.run([PEER, "pingpong", "5000"] + mode,
                             stdout=subprocess.PIPE, text=True,
                             check=True).stdout.split()
        lat = [int(v) for v in out]
        p50.append(pct(lat, 50))
        print("round trip between two processes (socketpair, epoll%s): "
              "p50 %d µs, p95 %d µs" % (", one CPU" if mode else "",
                                        pct(lat, 50), pct(lat, 95)))
    print("  sp mcp adds 3 round trips per call: about %d µs at p50 when "
          "each wakes an idle CPU, %d µs if none did" %
          (3 * p50[0], 3 * p50[1]))
    idle_poll()


def idle_poll():
    """How long an idle CPU polls before it halts, when the kernel says:
    with 0 (as on a VM that disables guest halt-polling) every wake-up of
    an idle vCPU pays a halt exit, which is what the unbound round trip
    above measures."""
    driver = "/sys/devices/system/cpu/cpuidle/current_driver"
    poll = "/sys/module/haltpoll/parameters/guest_halt_poll_ns"
    try:
        with open(driver) as f:
            name = f.read().strip()
    except OSError:
        return
    line = "  cpuidle driver %s" % name
    if os.path.exists(poll):
        with open(poll) as f:
            line += ", guest_halt_poll_ns %s" % f.read().strip()
    print(line)


def bench_http(tmp):
    server = subprocess.Popen([PEER, "serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    port = int(server.stdout.readline())
    cfg = os.path.join(tmp, "http.json")
    with open(cfg, "w") as f:
        json.dump(run_as_root({
            "sallyport": 1, "server": {"name": "bench"},
            "limits": {"calls_per_session": 100000},
            "targets": {"api": {"type": "http",
                                "base_url": "http://127.0.0.1:%d" % port}},
            "tools": [{"name": "get_item", "description": "Bench.",
                       "target": "api", "scope": "read",
                       "http": {"method": "GET", "path": "/items/{id}"},
                       "params": {"id": {"type": "string"}}}],
            "profiles": {"default": {"scopes": ["read"]}}}), f)
    url = "http://127.0.0.1:%d/items/abc" % port
    try:
        sp_calls_c(cfg, "get_item", {"id": "abc"}, 100, 1)   # warm up
        for n, k in ((HTTP_N1, 1), (HTTP_N16, 16)):
            py = summary(*sp_calls(cfg, "get_item", {"id": "abc"}, n, k))
            sp = summary(*sp_calls_c(cfg, "get_item", {"id": "abc"}, n, k))
            base = summary(*curl_calls(url, n, k))
            show("HTTP, %d in flight" % k, sp, base, py)
    finally:
        server.stdin.close()
        server.wait()


def ssh_control_master(tmp, port):
    ctl = os.path.join(tmp, "ctl")
    cmd = ["ssh", "-q", "-F", "/dev/null", "-p", str(port),
           "-i", os.path.join(tmp, "user_ed25519"),
           "-o", "UserKnownHostsFile=" + os.path.join(tmp, "known_hosts"),
           "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
           "-o", "ControlMaster=auto", "-o", "ControlPath=" + ctl,
           "-o", "ControlPersist=60", getpass.getuser() + "@127.0.0.1",
           "echo", "bench"]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # the master
    lat = []
    t0 = time.monotonic()
    for _ in range(SSH_N):
        t = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        lat.append((time.monotonic() - t) * 1e6)
    wall = (time.monotonic() - t0) * 1e6
    subprocess.run(cmd[:-2] + ["-O", "exit"], stderr=subprocess.DEVNULL)
    return lat, wall


def bench_ssh(tmp):
    if shutil.which("ssh") is None or not os.path.exists("/usr/sbin/sshd"):
        print("SSH: skipped (no ssh or sshd)")
        return
    port = int(subprocess.run(["sh", FIXTURE, "start", tmp], check=True,
                              stdout=subprocess.PIPE).stdout)
    try:
        cfg = os.path.join(tmp, "ssh.json")
        with open(cfg, "w") as f:
            json.dump(run_as_root({
                "sallyport": 1, "server": {"name": "bench"},
                "limits": {"calls_per_session": 100000},
                "credentials": {"key": {
                    "type": "ssh-key",
                    "private_key": os.path.join(tmp, "user_ed25519")}},
                "targets": {"host": {
                    "type": "ssh", "host": "127.0.0.1", "port": port,
                    "user": getpass.getuser(), "credential": "key",
                    "known_hosts": os.path.join(tmp, "known_hosts")}},
                "tools": [{"name": "echo", "description": "Bench.",
                           "target": "host", "scope": "run",
                           "ssh": {"argv": ["echo", "bench"]}}],
                "profiles": {"default": {"scopes": ["run"]}}}), f)
        sp_calls(cfg, "echo", {}, 20, 1)   # warm up
        sp = summary(*sp_calls(cfg, "echo", {}, SSH_N, 1))
        base = summary(*ssh_control_master(tmp, port))
        show("SSH echo, 1 in flight", sp, base)
    finally:
        subprocess.run(["sh", FIXTURE, "stop", tmp])


def main():
    tmp = tempfile.mkdtemp(prefix="sp-bench-exec-")
    try:
        round_trip()
        bench_http(tmp)
        round_trip()
        bench_ssh(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()

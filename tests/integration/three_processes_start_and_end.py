#!/usr/bin/env python3
"""sp mcp as three processes: what each child holds (fds, seccomp,
no-new-privs), how a session ends (end of input, SIGTERM, SIGINT to the
process group), a bad config refused before any child starts, and a
protocol stream that noisy broker and executor cannot touch."""
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import (INITIALIZE, only_protocol, request,  # noqa: E402
                        start_refusal)
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.procfs import (confined_children, gone_within,  # noqa: E402
                           status_field)
from sptest.run import (SP, SP_TEST, finish, read_line,  # noqa: E402
                        read_stdout, sanitized_build, sp_env, start, stop,
                        tmpdir)
from sptest.tap import check, done, skip  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36


def links(pid):
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            out[int(fd)] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    return out


def pipe_of(fileobj):
    return "pipe:[%d]" % os.fstat(fileobj.fileno()).st_ino


# child_fds()'s checks, each a counted skip where it cannot look
CHILD_FD_CHECKS = [
    "frontend fd 0/1 are the client's stdin and stdout, fd 2 its pipe",
    "executor fd 0 is /dev/null, fd 1 and 2 its own pipe to the broker"] + [
    "%s %s" % (role, what) for role in ("frontend", "executor")
    for what in ("holds exactly its fds", "fd 3 is its event loop, 4 and 5 "
                 "its channels", "fds 6-7 are only libevent's signal pipe",
                 "did not inherit the broker's other fds")] + [
    "frontend fd 8 is the writer's hang-up watch",
    "executor fds 8-9 are two more sockets (curl's wakeup pair)",
    "the channels of the two children are distinct sockets"]


def child_fds(p, kids, leak_path):
    """What each child holds, read in /proc/PID/fd: False when the kernel
    refuses (the children are not dumpable; only root reads them)."""
    try:
        fe, ex = links(kids["frontend"]), links(kids["executor"])
    except PermissionError:
        return False
    stdin, stdout, stderr = pipe_of(p.stdin), pipe_of(p.stdout), \
        pipe_of(p.stderr)
    # Each child's stderr is a pipe of its own that the broker reads
    # (broker/child_stderr.h), never the client's stderr itself.
    broker = set(links(p.pid).values())
    check("frontend fd 0/1 are the client's stdin and stdout, fd 2 a "
          "pipe of its own to the broker",
          (fe.get(0), fe.get(1)) == (stdin, stdout) and
          fe.get(2, "").startswith("pipe:") and
          fe.get(2) not in (stdin, stdout, stderr) and fe.get(2) in broker,
          (fe, broker))
    check("executor fd 0 is /dev/null, fd 1 and 2 its own pipe to the "
          "broker", ex.get(0) == "/dev/null" and ex.get(1) == ex.get(2) and
          ex.get(2, "").startswith("pipe:") and
          ex.get(2) not in (fe.get(2), stderr) and ex.get(2) in broker,
          (ex, broker))
    # The executor also holds libcurl's multi handle wakeup socketpair.
    for role, fds, nfds in (("frontend", fe, 9), ("executor", ex, 10)):
        extra = {fd: t for fd, t in fds.items() if 5 < fd < 8}
        pipes = set(extra.values())
        check("%s holds exactly fds 0-%d" % (role, nfds - 1), sorted(fds) ==
              list(range(nfds)), fds)
        check("%s fd 3 is its event loop, 4 and 5 its channels" % role,
              fds.get(3) == "anon_inode:[eventpoll]" and
              fds.get(4, "").startswith("socket:") and
              fds.get(5, "").startswith("socket:"), fds)
        check("%s fds 6-7 are only libevent's own signal pipe" % role,
              len(pipes) == 1 and pipes.pop().startswith("pipe:") and
              not set(extra.values()) & {stdin, stdout, stderr}, fds)
        check("%s did not inherit the broker's other fds" % role,
              leak_path not in fds.values() and
              not any("audit" in t or "policy" in t for t in fds.values()),
              fds)
    # The frontend's writer watches fd 1 for a hang-up with an epoll set
    # holding fd 1 alone (frontend/writer.h, writer_watch_client).
    check("frontend fd 8 is the writer's hang-up watch",
          fe.get(8) == "anon_inode:[eventpoll]", fe)
    check("executor fds 8-9 are two more sockets (curl's wakeup pair)",
          ex.get(8, "").startswith("socket:") and
          ex.get(9, "").startswith("socket:") and ex[8] != ex[9], ex)
    check("the channels of the two children are distinct sockets",
          len({fe[4], fe[5], ex[4], ex[5]}) == 4, (fe, ex))
    return True


def test_fds_and_confinement(tmp):
    cfg = shared_target_policy(tmp)
    leak_path = os.path.join(tmp, "inherited-by-broker")
    leak = os.open(leak_path, os.O_CREAT | os.O_RDWR, 0o600)
    p = start(cfg, pass_fds=(leak,))
    os.close(leak)
    kids = confined_children(p.pid)
    if not check("both children started", set(kids) ==
                 {"frontend", "executor"}, kids):
        stop(p)
        return
    if not child_fds(p, kids, leak_path):
        for c in CHILD_FD_CHECKS:
            skip(c, "the children are not dumpable: only root reads "
                 "their /proc/PID/fd")
    for role in ("frontend", "executor"):
        pid = kids[role]
        check("%s: Seccomp 2 and NoNewPrivs 1" % role,
              (status_field(pid, "Seccomp"), status_field(pid, "NoNewPrivs"))
              == ("2", "1"))
    br = links(p.pid)
    check("the broker holds neither the client's stdin nor stdout",
          pipe_of(p.stdin) not in br.values() and
          pipe_of(p.stdout) not in br.values(), br)
    check("the broker is under its own filter",
          status_field(p.pid, "Seccomp") == "2")
    if os.geteuid() == 0:
        check("as root, both children run as an unprivileged uid",
              all(status_field(k, "Uid").split()[0] != "0"
                  for k in kids.values()))
        check("as root, the frontend is chrooted to the empty directory",
              os.readlink("/proc/%d/root" % kids["frontend"]) ==
              "/run/sallyport-empty")
    else:
        skip("as root, both children run as an unprivileged uid",
             "needs root")
        skip("as root, the frontend is chrooted to the empty directory",
             "needs root")
    status, out, err = finish(p, INITIALIZE)
    check("end of input: exit 0", status == 0, err)


def test_end_of_input_no_zombie(tmp):
    cfg = shared_target_policy(tmp)
    p = start(cfg)
    kids = confined_children(p.pid)
    status, out, err = finish(p, INITIALIZE + request(1, "ping"))
    lines = out.splitlines()
    check("end of input: both answers, exit 0", status == 0 and
          len(lines) == 2 and json.loads(lines[1]).get("id") == 1, err)
    # This process is a subreaper: a child the broker left unreaped
    # would show up here as a zombie.
    leftovers = [k for k in kids.values() if os.path.exists("/proc/%d" % k)]
    check("no zombie and no orphan after the session", not leftovers,
          [status_field(k, "State") for k in leftovers])
    log = open(os.path.join(tmp, "audit.jsonl")).read().splitlines()
    kinds = [json.loads(l)["kind"] for l in log]
    # initialize names its client, which a `client` record keeps
    # (sp-audit(5)); no call was made, so nothing else is there
    check("the audit log holds session-start, client, session-end",
          kinds == ["session-start", "client", "session-end"], kinds)
    check("session-end says why: end of input",
          json.loads(log[-1]).get("why") == "end of input", log[-1])


def test_signal_ends_in_order(tmp, sig, group):
    cfg = shared_target_policy(tmp, audit=True)
    p = start(cfg, start_new_session=group)
    kids = confined_children(p.pid)
    p.stdin.write(INITIALIZE)
    p.stdin.flush()
    first = read_line(p)
    if group:
        os.killpg(p.pid, sig)
    else:
        os.kill(p.pid, sig)
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    name = signal.Signals(sig).name
    status, rest, err = finish(p)
    check("%s%s: the session ends in order, exit 0" %
          (name, " to the group" if group else ""), status == 0, err)
    check("%s: the initialize answer came before the end" % name,
          b'"protocolVersion"' in first and only_protocol(first + rest)
          is None, first + rest)
    check("%s: both children are gone" % name,
          gone_within(kids.values(), 30))
    last = open(os.path.join(tmp, "audit.jsonl")).read().splitlines()[-1]
    check("%s: session-end says why" % name,
          json.loads(last).get("why") == "signal " + name[3:], last)


def test_bad_config(tmp):
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"sallyport": 1, "tools": [{"name": "Bad Name"}],'
                ' "audit": {"path": "%s/never.jsonl"}}' % tmp)
    p = start(bad, binary=SP_TEST, hook="frontend:noise")
    status, out, err = finish(p, INITIALIZE)
    check("a bad config exits 78", status == 78, err)
    check("... with the problem located on stderr", "bad.json:1:" in err,
          err)
    check("... before any child started or the audit log was opened",
          "frontend" not in err and "executor" not in err and
          not os.path.exists(os.path.join(tmp, "never.jsonl")), err)
    why = start_refusal(out)
    check("... and the client's first request gets one error saying why, "
          "without the path", why is not None and "line 1" in why and
          "bad.json" not in why and tmp not in why, out)


def test_embedded_default(tmp):
    if os.path.exists("/etc/sallyport/policy.json"):
        skip("no policy anywhere: the embedded default",
             "/etc/sallyport/policy.json exists on this host")
        return
    env = sp_env()
    env.pop("SP_CONFIG", None)
    kw = {}
    if os.geteuid() == 0:
        # It names no server.run_as, which root needs (the children must
        # not share a uid): refused; then as an unprivileged user.
        p = subprocess.Popen([SP, "mcp"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd="/")
        status, out, err = finish(p, INITIALIZE)
        check("no policy anywhere, as root: refused with 78 naming "
              "server.run_as", status == 78 and "server.run_as" in err and
              "server.run_as" in (start_refusal(out) or ""),
              (status, out, err))
        kw = {"user": 65534, "group": 65534, "extra_groups": []}
    p = subprocess.Popen([SP, "mcp"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd="/", **kw)
    status, out, err = finish(p, INITIALIZE + request(1, "tools/list"))
    lines = out.splitlines()
    check("no policy anywhere: the embedded default, said on stderr",
          status == 0 and "embedded default" in err, err)
    check("... which declares no tools", len(lines) == 2 and
          json.loads(lines[1])["result"]["tools"] == [], out)
    check("... and says nothing is audited", "nothing is audited" in err,
          err)


def test_files_as_stdio(tmp):
    """epoll cannot watch a regular file or /dev/null: read and write
    them directly instead of hanging."""
    cfg = shared_target_policy(tmp)
    src, dst = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.jsonl")
    with open(src, "wb") as f:
        f.write(INITIALIZE + request("two", "ping"))
    with open(src, "rb") as i, open(dst, "wb") as o:
        p = subprocess.run([SP, "mcp", "--config", cfg], stdin=i, stdout=o,
                           stderr=subprocess.PIPE, env=sp_env(), timeout=10)
    out = open(dst, "rb").read()
    check("stdin and stdout regular files: both answers, exit 0",
          p.returncode == 0 and len(out.splitlines()) == 2 and
          only_protocol(out) is None, (p.returncode, out, p.stderr))
    with open(src, "rb") as i:
        p = subprocess.run([SP, "mcp", "--config", cfg], stdin=i,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=sp_env(), timeout=10)
    check("stdout /dev/null: exit 0", p.returncode == 0, p.stderr)
    p = subprocess.run([SP, "mcp", "--config", cfg],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=sp_env(), timeout=10)
    check("stdin /dev/null: nothing to answer, exit 0",
          p.returncode == 0 and p.stdout == b"", p.stderr)


def test_backpressure(tmp):
    """A client that stops reading: the frontend stops reading requests
    once its bounded output queue is full, instead of growing."""
    cfg = shared_target_policy(tmp)
    p = start(cfg)
    chunk = b"".join(request(i, "ping") for i in range(1000))
    limit, written = 64 << 20, 0
    os.write(p.stdin.fileno(), INITIALIZE)
    os.set_blocking(p.stdin.fileno(), False)
    stalled_since, pending = None, chunk
    while written < limit:
        try:
            n = os.write(p.stdin.fileno(), pending)
            written += n
            pending = pending[n:] or chunk
            stalled_since = None
        except BlockingIOError:
            stalled_since = stalled_since or time.monotonic()
            if time.monotonic() - stalled_since > 0.5:
                break
            time.sleep(0.01)
    kids = confined_children(p.pid)
    rss = int(status_field(kids.get("frontend", p.pid), "VmRSS").split()[0])
    check("a client that does not read: input stalls after %d KiB" %
          (written >> 10), written < limit)
    if sanitized_build():
        skip("... and the frontend stays small (%d KiB resident)" % rss,
             "ASan's quarantine keeps freed memory resident by design")
    else:
        check("... and the frontend stays small (%d KiB resident)" % rss,
              rss < 32 * 1024, rss)
    os.set_blocking(p.stdin.fileno(), True)
    # Stdin stays open, so no EOF ends the read: it ends at 1 MiB, or
    # once answers stop for 1 s (a slow build may have stalled on less
    # input than 1 MiB of answers), or after 10 s at most.
    t0 = time.monotonic()
    out = read_stdout(p, 1 << 20, 10.0, idle=1.0)
    took = time.monotonic() - t0
    stop(p)
    check("... and answers again once the client reads "
          "(%d lines in %.1f s)" % (out.count(b"\n"), took),
          only_protocol(out[:out.rfind(b"\n") + 1]) is None and
          out.count(b"\n") > 1000, out[:200])


def test_noise(tmp, role):
    cfg = shared_target_policy(tmp)
    p = start(cfg, binary=SP_TEST, hook=role + ":noise")
    status, out, err = finish(p, INITIALIZE + request(1, "ping"))
    check("noisy %s: stdout holds only protocol" % role,
          status == 0 and only_protocol(out) is None and
          len(out.splitlines()) == 2, out)
    check("noisy %s: its noise went to stderr" % role,
          "NOISE from a test hook" in err, err)


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    test_fds_and_confinement(tmpdir())
    test_end_of_input_no_zombie(tmpdir())
    test_signal_ends_in_order(tmpdir(), signal.SIGTERM, False)
    test_signal_ends_in_order(tmpdir(), signal.SIGHUP, False)
    test_signal_ends_in_order(tmpdir(), signal.SIGINT, True)
    test_bad_config(tmpdir())
    test_embedded_default(tmpdir())
    test_files_as_stdio(tmpdir())
    test_backpressure(tmpdir())
    test_noise(tmpdir(), "executor")
    test_noise(tmpdir(), "broker")
    done()


main()

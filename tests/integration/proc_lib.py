"""Helpers for the process tests: start the real `sp mcp` (or the test
build tests/sp-test, which has the test hooks), find its children through
/proc, read what the kernel says about them, and report TAP."""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

SP = os.environ.get("SP_BIN", "./sp")
BUILDDIR = os.environ.get("SP_BUILDDIR", ".")
SP_TEST = os.path.join(BUILDDIR, "tests", "sp-test")

_count = 0
_failures = 0


def check(name, cond, detail=""):
    """One TAP line; a failure shows its detail as a comment."""
    global _count, _failures
    _count += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", _count, name))
    if not cond:
        _failures += 1
        for line in str(detail).splitlines() or [""]:
            print("# " + line)
    sys.stdout.flush()
    return cond


def done():
    print("1..%d" % _count)
    sys.exit(1 if _failures else 0)


_sanitized = None


def sanitized_build():
    """True when sp was built with AddressSanitizer.  The binary itself
    is asked, not the Makefile: it names __asan_init whether libasan is
    linked dynamically (gcc) or statically (clang), and CFLAGS given on
    the make command line would not show in the Makefile.  Under ASan
    the sandboxed children cannot exit cleanly (its exit path calls
    sigaltstack, which their filter kills), so a few checks accept that
    documented outcome -- only when this says so."""
    global _sanitized
    if _sanitized is None:
        try:
            with open(SP, "rb") as f:
                _sanitized = b"__asan_init" in f.read()
        except OSError:
            _sanitized = False
    return _sanitized


def sp_env(hook=None, extra=None):
    """The environment for sp.  LeakSanitizer stops the world with
    ptrace and clone, which no sandboxed process may do, so a sanitizer
    build runs with leak detection off (ASan itself still checks)."""
    e = dict(os.environ)
    e.pop("SP_TEST_HOOK", None)
    if hook is not None:
        e["SP_TEST_HOOK"] = hook
    if sanitized_build():
        e["ASAN_OPTIONS"] = ":".join(
            x for x in (e.get("ASAN_OPTIONS"), "detect_leaks=0") if x)
    if extra:
        e.update(extra)
    return e


# As root, sp mcp drops the executor to server.run_as, which must be a
# user of its own (the frontend is nobody): the tests' policies name this
# one then (broker/child_role.h).
ROOT_RUN_AS = "daemon"


def run_as_root(doc):
    """doc with server.run_as set to ROOT_RUN_AS when the tests run as
    root and the policy names none; returns doc."""
    if os.geteuid() == 0:
        doc.setdefault("server", {}).setdefault("run_as", ROOT_RUN_AS)
    return doc


def policy(tmp, audit=True, **extra):
    """A small valid policy with one HTTP tool; returns its path."""
    doc = {
        "sallyport": 1,
        "server": {"name": "proc-test"},
        "limits": {"call_timeout_ms": 2000},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:9"}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["read"]}},
    }
    if audit:
        doc["audit"] = {"path": os.path.join(tmp, "audit.jsonl")}
    doc.update(extra)
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def request(rid, method, params=None):
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return (json.dumps(msg) + "\n").encode()


INITIALIZE = request(0, "initialize", {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "proc-test", "version": "1"}})


def start(config, binary=None, hook=None, env=None, **kw):
    """sp mcp with pipes on 0, 1 and 2."""
    return subprocess.Popen([binary or SP, "mcp", "--config", config],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=sp_env(hook, env),
                            **kw)


def children(pid):
    """The broker's children as {role: pid}, read from /proc."""
    kids = {}
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return kids
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                pids = [int(x) for x in f.read().split()]
        except OSError:
            continue
        for c in pids:
            role = cmdline_role(c)
            if role:
                kids[role] = c
    return kids


def cmdline_role(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    for role in ("frontend", "executor"):
        if len(argv) > 1 and argv[1] == ("." + role).encode():
            return role
    return None


def status_field(pid, name):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def confined_children(pid, timeout=5.0):
    """Waits until both children run under their seccomp filter."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = children(pid)
        if len(kids) == 2 and all(status_field(p, "Seccomp") == "2"
                                  for p in kids.values()):
            return kids
        time.sleep(0.01)
    return children(pid)


def alive(pid):
    """True while pid exists and is not a zombie."""
    state = status_field(pid, "State")
    return state is not None and not state.startswith("Z")


def gone_within(pids, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.005)
    return not any(alive(p) for p in pids)


def finish(p, data=b"", timeout=10):
    """Writes data, closes stdin, returns (status, stdout, stderr); the
    status is None when sp did not end within timeout."""
    try:
        out, err = p.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = reap(p)
        return None, out, err.decode("utf-8", "replace")
    return p.returncode, out, err.decode("utf-8", "replace")


def reap(p, timeout=5):
    """The rest of sp's output after it was killed; a child that outlived
    it still holding a pipe cannot make the test hang."""
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
        p.wait(timeout=timeout)
        return b"", b"(output not read: a child still held the pipe)"


def stop(p):
    if p.poll() is None:
        p.kill()
    reap(p)


def read_line(p, timeout=5.0):
    """One line of stdout, or what came before timeout (no newline at
    the end then) -- never blocks past it."""
    return read_stdout(p, 1 << 20, timeout, b"\n")


def read_stdout(p, limit, timeout, stop_at=None, idle=None):
    """Up to limit bytes of stdout, fewer at EOF, after stop_at was read,
    after idle seconds without output once some came, or when timeout
    passed; the caller checks what it got."""
    fd = p.stdout.fileno()
    end, data = time.monotonic() + timeout, b""
    while len(data) < limit:
        left = end - time.monotonic()
        if data and idle is not None:
            left = min(left, idle)
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, min(65536, limit - len(data)))
        if not chunk:
            break
        data += chunk
        if stop_at is not None and stop_at in data:
            break
    return data


def only_protocol(out):
    """Each line of out is one JSON-RPC 2.0 object; returns the bad one."""
    for line in out.split(b"\n")[:-1]:
        try:
            msg = json.loads(line)
        except ValueError:
            return line
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return line
    if not out.endswith(b"\n") and out:
        return out.split(b"\n")[-1]
    return None


def tmpdir():
    return tempfile.mkdtemp(prefix="sp-proc-")

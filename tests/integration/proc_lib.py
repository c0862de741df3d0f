"""Helpers for the process tests: start the real `sp mcp` (or the test
build tests/sp-test, which has the test hooks), find its children through
/proc, read what the kernel says about them, and report TAP."""
import atexit
import ctypes
import http.client
import json
import os
import select
import shutil
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


def skip(name, reason):
    """A check that did not run: counted, and said as TAP's # SKIP with
    its reason -- never a plain ok, never a comment TAP does not count."""
    global _count
    _count += 1
    print("ok %d - %s # SKIP %s" % (_count, name, reason))
    sys.stdout.flush()


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
# one then (child/child.h).
ROOT_RUN_AS = "daemon"


def run_as_root(doc):
    """doc with server.run_as set to ROOT_RUN_AS when the tests run as
    root and the policy names none; returns doc."""
    if os.geteuid() == 0:
        doc.setdefault("server", {}).setdefault("run_as", ROOT_RUN_AS)
    return doc


HTTP_TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "http_target.py")
FLUSH_PATH = "/__recorder_flush/"


def _die_with_parent():
    """A recorder the harness leaves behind (a test killed by its
    timeout) dies with the test instead of lingering."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)		# PR_SET_PDEATHSIG


class Recorder:
    """A live HTTP target (http_target.py) that logs every accepted
    connection and every request: what "nothing ran" is counted at.  A
    refused call and a call that ran against a closed port both end
    "failed"; only a target that is up tells them apart."""

    def __init__(self, tmp=None, lifetime=3600, script=HTTP_TARGET):
        """script: http_target.py, or another target taking --log,
        --accepts and --lifetime (front_target.py)."""
        self._own_dir = tmp is None
        self.dir = tmp or tempfile.mkdtemp(prefix="sp-recorder-")
        self.log = os.path.join(self.dir, "recorder-requests.jsonl")
        self.accepts = os.path.join(self.dir, "recorder-accepts.jsonl")
        for path in (self.log, self.accepts):
            open(path, "w").close()
        self.proc = subprocess.Popen(
            [sys.executable, script, "--log", self.log,
             "--accepts", self.accepts, "--lifetime", str(lifetime)],
            stdout=subprocess.PIPE, preexec_fn=_die_with_parent)
        self.port = int(self.proc.stdout.readline())
        self.url = "http://127.0.0.1:%d" % self.port
        self._flush_ports = set()
        self._flushes = 0

    def _lines(self, path):
        with open(path, encoding="utf-8") as f:
            return [json.loads(l) for l in f if l.strip()]

    def flush(self, timeout=60):
        """Returns once every connection queued before this call is in
        the logs: a request of our own goes through the same accept
        queue, and the target logs each connection as it accepts it and
        each request before it answers.  Call it after the session has
        answered (or ended), never instead of waiting for that."""
        self._flushes += 1
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        try:
            c.connect()
            self._flush_ports.add(c.sock.getsockname()[1])
            c.request("GET", FLUSH_PATH + str(self._flushes))
            c.getresponse().read()
        finally:
            c.close()

    def seen(self):
        """(connections, requests) that reached the target, ours left
        out; flushed first."""
        self.flush()
        conns = [c for c in self._lines(self.accepts)
                 if c.get("peer_port") not in self._flush_ports]
        reqs = [r for r in self._lines(self.log)
                if not r.get("path", "").startswith(FLUSH_PATH)]
        return conns, reqs

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


_recorder = None


def recorder():
    """The recorder the shared policy points at, started on first use and
    stopped when the test ends."""
    global _recorder
    if _recorder is None:
        _recorder = Recorder()
        atexit.register(_recorder.stop)
    return _recorder


def policy(tmp, audit=True, **extra):
    """A small valid policy with one HTTP tool; returns its path.  Unless
    extra names its own targets, the tool reaches recorder(), which is up:
    a test counts there what ran."""
    doc = {
        "sallyport": 1,
        "server": {"name": "proc-test"},
        "limits": {"call_timeout_ms": 2000},
        "targets": extra.pop("targets", None) or
        {"api": {"type": "http", "base_url": recorder().url}},
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


def confined_children(pid, timeout=60.0):
    """Waits until both children run under their seccomp filter (the
    budget is far above need: it returns as soon as they do)."""
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


def start_refusal(out, rid=0):
    """The message of the one JSON-RPC error a session that cannot start
    answers its client's first request with (broker/start_refusal.h), or
    None when out is anything else."""
    lines = out.split(b"\n")
    if len(lines) != 2 or lines[1] != b"":
        return None
    try:
        msg = json.loads(lines[0])
    except ValueError:
        return None
    err = msg.get("error") if isinstance(msg, dict) else None
    if (msg.get("jsonrpc") != "2.0" or msg.get("id") != rid or
            set(msg) != {"jsonrpc", "id", "error"} or
            not isinstance(err, dict) or err.get("code") != -32000 or
            set(err) != {"code", "message"}):
        return None
    text = err.get("message")
    if not isinstance(text, str) or not text.startswith(
            "Sallyport cannot start: "):
        return None
    return text


def tmpdir():
    return tempfile.mkdtemp(prefix="sp-proc-")

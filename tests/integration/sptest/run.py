"""The real sp binary (or tests/sp-test, which has the test hooks) with
pipes on 0, 1 and 2: its environment, a start, a finish that cannot
hang, reads bounded by time, and a Session that keeps every byte."""
import json
import os
import queue
import select
import subprocess
import tempfile
import threading
import time

from sptest.mcp import INITIALIZE, INITIALIZED, call, item_calls, structured
from sptest.procfs import confined_children

SP = os.environ.get("SP_BIN", "./sp")
BUILDDIR = os.environ.get("SP_BUILDDIR", ".")
SRCDIR = os.environ.get("SP_SRCDIR", ".")
SP_TEST = os.path.join(BUILDDIR, "tests", "sp-test")

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


def tmpdir(prefix="sp-proc-"):
    return tempfile.mkdtemp(prefix=prefix)


def start(config, binary=None, hook=None, env=None, **kw):
    """sp mcp with pipes on 0, 1 and 2; env: variables added."""
    return subprocess.Popen([binary or SP, "mcp", "--config", config],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=sp_env(hook, env),
                            **kw)


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


def drive(p, reqs, window=8):
    """Sends reqs[0] (initialize) and reads its answer, then the other
    lines of reqs with at most window in flight, then closes p's input.
    Returns {id: result or error} of what came back."""
    n = len(reqs) - 1
    p.stdin.write(reqs[0])
    p.stdin.flush()
    got, sent = {}, 1
    p.stdout.readline()
    while sent <= n and sent <= window:
        p.stdin.write(reqs[sent])
        sent += 1
    p.stdin.flush()
    while len(got) < n:
        line = p.stdout.readline()
        if not line:
            break
        msg = json.loads(line)
        got[msg.get("id")] = msg.get("result", msg.get("error"))
        if sent <= n:
            p.stdin.write(reqs[sent])
            p.stdin.flush()
            sent += 1
    p.stdin.close()
    return got


def drive_item_calls(p, n, tool="get_item", window=8, first_id=1,
                     args=None):
    """drive with item_calls(n, tool, first_id, args) on the running
    session p, at most window in flight (under limits.max_inflight).
    Returns {id: result or error} of what came back."""
    return drive(p, item_calls(n, tool, first_id, args).splitlines(True),
                 window)


class Session:
    """sp mcp driven line by line after initialize; every byte of fd 1
    and fd 2 kept, answers collected as they come."""

    def __init__(self, config, binary=None, hook=None, env=None):
        """env: variables added to sp's environment."""
        self.p = start(config, binary, hook, env)
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.answers = queue.Queue()
        self.order = []
        self._t_out = threading.Thread(target=self._read_out, daemon=True)
        self._t_err = threading.Thread(target=self._read_err, daemon=True)
        self._t_out.start()
        self._t_err.start()
        self.send(INITIALIZE)
        self.wait([0])
        self.send(INITIALIZED)

    def _read_out(self):
        for line in iter(self.p.stdout.readline, b""):
            self.stdout += line
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                self.on_message(msg)

    def on_message(self, msg):
        """One JSON object sp wrote: an answer is queued for wait()."""
        if "id" in msg:
            self.answers.put((msg["id"], msg, time.monotonic()))

    def _read_err(self):
        for chunk in iter(lambda: self.p.stderr.read1(4096), b""):
            self.stderr += chunk

    def send(self, data):
        """A session that ended early shows in the answers, not here."""
        try:
            self.p.stdin.write(data)
            self.p.stdin.flush()
        except BrokenPipeError:
            pass

    def call(self, rid, name, arguments):
        self.send(call(rid, name, arguments))
        return time.monotonic()

    def wait(self, ids, timeout=120):
        """{id: (message, arrival time)} for each id; missing ones absent.
        It returns once every id is answered: the timeout is far above
        need so that a loaded machine slows a test but does not fail it."""
        got = {}
        end = time.monotonic() + timeout
        while set(ids) - set(got) and time.monotonic() < end:
            try:
                rid, msg, when = self.answers.get(
                    timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            got[rid] = (msg, when)
            self.order.append(rid)
        return got

    def executor_pid(self):
        """The executor once it runs confined: the frontend answers
        initialize without waiting for it, so before that it may still
        be loading libcurl, and a VmHWM read then is not its idle one."""
        return confined_children(self.p.pid).get("executor")

    def close(self, timeout=60):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self._t_out.join(5)
        self._t_err.join(5)
        return self.p.returncode


class Caller:
    """A Session whose calls each pass one param, id: numbered from 101,
    answered as their structured result (outcome, message, ...)."""

    def __init__(self, config, binary=None, hook=None, env=None):
        self.s = Session(config, binary, hook, env)
        self.next = 100

    def send(self, tool, value):
        self.next += 1
        self.s.call(self.next, tool, {"id": value})
        return self.next

    def wait(self, rid, timeout=120):
        return structured(self.s.wait([rid], timeout).get(rid))

    def call(self, tool, value):
        return self.wait(self.send(tool, value))


def wait_for(pred, timeout=60):
    """True once pred() is, polled until timeout (far above need)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()

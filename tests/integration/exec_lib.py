"""Helpers for the executor's end-to-end tests: an MCP session with the
real `sp mcp` (many calls in flight, answers collected as they come, raw
stdout and stderr kept), and the local HTTP target started by the test."""
import contextlib
import http.client
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_lib import (INITIALIZE, SP, check, confined_children, done,  # noqa
                      request, sp_env)
from proc_lib import policy as proc_policy  # noqa: E402
from proc_lib import run_as_root  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SSHD_FIXTURE = os.path.join(HERE, "sshd_fixture.sh")


@contextlib.contextmanager
def sshd_fixture(tmp):
    """A throwaway sshd (sshd_fixture.sh) in tmp for the with block; yields
    its port.  A fixture that does not start is a failed check, and the
    test ends there."""
    start = subprocess.run(["sh", SSHD_FIXTURE, "start", tmp],
                           stdout=subprocess.PIPE, text=True)
    if start.returncode != 0:
        check("sshd fixture started", False, start.returncode)
        done()
    try:
        yield int(start.stdout.strip())
    finally:
        subprocess.run(["sh", SSHD_FIXTURE, "stop", tmp])


class Session:
    """sp mcp driven line by line; every byte of fd 1 and fd 2 kept."""

    def __init__(self, config, binary=None, hook=None, env=None):
        """env: variables added to sp's environment."""
        self.p = subprocess.Popen([binary or SP, "mcp", "--config", config],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE,
                                  env=sp_env(hook, env))
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
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def _read_out(self):
        for line in iter(self.p.stdout.readline, b""):
            self.stdout += line
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and "id" in msg:
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
        self.send(request(rid, "tools/call",
                          {"name": name, "arguments": arguments}))
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


def structured(answer):
    """structuredContent of a tools/call answer, {} when absent."""
    if answer is None:
        return {}
    return answer[0].get("result", {}).get("structuredContent", {})


class HttpTarget:
    """tests/integration/http_target.py on 127.0.0.1, its request log."""

    def __init__(self, tmp, name="target", tls=False, lifetime=60):
        """With tls, HTTPS; its certificate is left in tmp/cert.pem.
        It stops by itself after lifetime seconds (stop() ends it before):
        a test whose session may outlast a minute on a loaded machine
        says so."""
        self.log_path = os.path.join(tmp, name + ".log")
        self.p = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "http_target.py"),
             "--log", self.log_path, "--lifetime", str(lifetime)] +
            (["--tls", tmp] if tls else []),
            stdout=subprocess.PIPE)
        self.port = int(self.p.stdout.readline())

    def requests(self):
        try:
            with open(self.log_path) as f:
                return [json.loads(l) for l in f if l.strip()]
        except OSError:
            return []

    def release(self, name):
        """Lets the requests held on /hold/NAME go (http_target.py)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            c.request("GET", "/release/" + name)
            c.getresponse().read()
        finally:
            c.close()

    def stop(self):
        self.p.kill()
        self.p.wait()


def free_port():
    """A loopback port nothing listens on (bound, then released), for a
    target whose connection must be refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def write_secret(tmp, name, data):
    path = os.path.join(tmp, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, data)
    os.close(fd)
    return path


def write_policy(tmp, doc):
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def get_item_policy(tmp, name, base_url, timeout_ms, audit=False):
    """One read tool, get_item (GET /items/{id}, id a string of at most 64
    characters), on an http target without credential; written to
    tmp/policy.json, whose path is returned.  audit adds
    tmp/audit.jsonl.  proc_lib.policy's document, with this server name,
    budget and target."""
    return proc_policy(tmp, audit=audit, server={"name": name},
                       limits={"call_timeout_ms": timeout_ms},
                       targets={"api": {"type": "http",
                                        "base_url": base_url}})


def vm_hwm_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, TypeError):
        return None
    return None

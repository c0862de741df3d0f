"""Helpers for the frontend's end-to-end tests: a local HTTP target with
a request log (tests/integration/http_target.py), a policy whose tool
reaches it, and checks on raw stdout bytes that show the first offending
line exactly."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proc_lib import FLUSH_PATH, Recorder, request, run_as_root, tmpdir  # noqa: E402

SRCDIR = os.environ.get("SP_SRCDIR", ".")
TARGET = os.path.join(SRCDIR, "tests", "integration", "http_target.py")
FRONT_TARGET = os.path.join(SRCDIR, "tests", "integration", "front_target.py")


class Target:
    """script (http_target.py unless said) on 127.0.0.1, a free port; its
    log in tmp."""

    def __init__(self, tmp, lifetime=60, script=TARGET):
        # proc_lib's recorder: it also logs connections, and seen()
        # waits for the log by an event
        self.recorder = Recorder(tmp, lifetime, script)
        self.log, self.proc = self.recorder.log, self.recorder.proc
        self.port = self.recorder.port

    def requests(self):
        """What the target logged, the recorder's own flushes left out."""
        with open(self.log, encoding="utf-8") as f:
            return [e for e in (json.loads(l) for l in f if l.strip())
                    if not e.get("path", "").startswith(FLUSH_PATH)]

    def seen(self):
        """(connections, requests) once every connection queued so far is
        logged (proc_lib.Recorder.seen)."""
        return self.recorder.seen()

    def wait_requests(self, n, seconds=3.0):
        end = time.monotonic() + seconds
        while time.monotonic() < end and len(self.requests()) < n:
            time.sleep(0.02)
        return self.requests()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def policy(tmp, port, limits=None, server=None):
    """One tool, get_item, reaching the target at /items/{id}."""
    token = os.path.join(tmp, "api.token")
    fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b"front-test-secret-7f3a\n")
    os.close(fd)
    doc = {
        "sallyport": 1,
        "server": dict({"name": "front-test"}, **(server or {})),
        "limits": dict({"call_timeout_ms": 5000}, **(limits or {})),
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
        "credentials": {"api-token": {"type": "bearer", "file": token}},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port,
                            "credential": "api-token"}},
        "tools": [
            {"name": "get_item", "description": "Read one item.",
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/items/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}}},
            {"name": "fetch", "description": "Fetch a path of the target.",
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/{a}/{b}"},
             "params": {"a": {"type": "string", "maxLength": 32},
                        "b": {"type": "string", "maxLength": 32}}},
        ],
        "profiles": {"default": {"scopes": ["read"]}},
    }
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def call(rid, name="get_item", arguments=None):
    return request(rid, "tools/call", {
        "name": name,
        "arguments": {"id": "42"} if arguments is None else arguments})


def first_bad_line(out, expect_lines=None):
    """None when out is only JSON-RPC 2.0 lines (and, if given, exactly
    expect_lines of them); else a description quoting the first offending
    line as raw bytes."""
    lines = out.split(b"\n")
    if out and not out.endswith(b"\n"):
        return "unterminated last line: %r" % lines[-1]
    lines = lines[:-1]
    for i, line in enumerate(lines, 1):
        try:
            msg = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return "line %d is not JSON: %r" % (i, line)
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return "line %d is not JSON-RPC 2.0: %r" % (i, line)
    if expect_lines is not None and len(lines) != expect_lines:
        return "%d lines, expected %d: %r" % (len(lines), expect_lines,
                                             lines[expect_lines:] or lines)
    return None


def messages(out):
    return [json.loads(l) for l in out.split(b"\n") if l]


__all__ = ["Target", "FRONT_TARGET", "policy", "call", "first_bad_line", "messages",
           "tmpdir"]

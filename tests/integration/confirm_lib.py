"""Helpers for the confirmation tests (docs/design.md section 8): a
policy whose confirm tool reaches a local HTTP target that logs every
request, and an MCP session that declares form elicitation and answers
each elicitation/create as the test says."""
import json
import os
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exec_lib import Session  # noqa: E402
from proc_lib import INITIALIZE, request, run_as_root  # noqa: E402


def write_policy(tmp, port, timeout_s=60, retype="qty"):
    """create_item (confirm, retype qty) and get_item (read, no confirm)
    on the target at port; returns the policy's path."""
    token = os.path.join(tmp, "api.token")
    fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, b"confirm-test-secret-51c2\n")
    os.close(fd)
    confirm = {"message": "Create {qty} x {name} in the shop",
               "timeout_s": timeout_s}
    if retype is not None:
        confirm["retype"] = retype
    doc = {
        "sallyport": 1,
        "server": {"name": "confirm-test"},
        "limits": {"call_timeout_ms": 10000},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
        "credentials": {"api-token": {"type": "bearer", "file": token}},
        "targets": {"api": {"type": "http",
                            "base_url": "http://127.0.0.1:%d" % port,
                            "credential": "api-token"}},
        "tools": [
            {"name": "create_item", "description": "Create an item.",
             "target": "api", "scope": "write", "mutating": True,
             "confirm": confirm,
             "http": {"method": "POST", "path": "/items",
                      "body": {"name": "{name}", "qty": "{qty}"}},
             "params": {"name": {"type": "string", "maxLength": 80},
                        "qty": {"type": "integer", "minimum": 1,
                                "maximum": 100}}},
            {"name": "get_item", "description": "Read one item.",
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/items/{id}"},
             "params": {"id": {"type": "string", "maxLength": 64}}},
        ],
        "profiles": {"default": {"scopes": ["read", "write"]}},
    }
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def initialize(elicitation=True):
    caps = {"elicitation": {}} if elicitation else {}
    return request(0, "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": caps,
        "clientInfo": {"name": "confirm-test", "version": "1"}})


class ConfirmSession(Session):
    """A Session whose client declares elicitation (unless told not to)
    and answers each elicitation/create with answer(request) -- a result
    dict, or None to leave it unanswered.  The requests are kept in
    asked, the notifications in notes."""

    def __init__(self, config, answer, binary=None, hook=None,
                 elicitation=True, env=None):
        self.answer = answer
        self.asked = []
        self.notes = []
        self.lock = threading.Lock()
        self._init = initialize(elicitation)
        super().__init__(config, binary=binary, hook=hook, env=env)

    def send(self, data):
        # Session.__init__ sends proc_lib's INITIALIZE first: ours instead
        if data == INITIALIZE:
            data = self._init
        super().send(data)

    def _read_out(self):
        for line in iter(self.p.stdout.readline, b""):
            self.stdout += line
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            if msg.get("method") == "elicitation/create":
                with self.lock:
                    self.asked.append(msg)
                result = self.answer(msg)
                if result is not None:
                    self.send((json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                           "result": result}) +
                               "\n").encode())
            elif "method" in msg:
                with self.lock:
                    self.notes.append(msg)
            elif "id" in msg:
                self.answers.put((msg["id"], msg, time.monotonic()))


def accept(value):
    """An answer that accepts, retyping value as a string."""
    return lambda req: {"action": "accept", "content": {"qty": str(value)}}


def audit_records(tmp):
    path = os.path.join(tmp, "audit.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def decisions(tmp):
    return [r.get("decision") for r in audit_records(tmp)
            if r.get("kind") == "confirmation"]

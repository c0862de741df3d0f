"""The client side of a confirmation (docs/design.md section 8): an MCP
session that declares form elicitation and answers each
elicitation/create as the test says, and the decisions the audit log
kept."""
import json
import threading

from sptest.audit import audit_records
from sptest.mcp import INITIALIZE, request
from sptest.run import Session


def initialize(elicitation=True):
    """An initialize request from a client that declares form
    elicitation, or (elicitation False) no capability at all."""
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
        # Session.__init__ sends sptest.mcp's INITIALIZE first: ours instead
        if data == INITIALIZE:
            data = self._init
        super().send(data)

    def on_message(self, msg):
        """A question is answered by self.answer; other requests and
        notifications are kept in notes; answers go to wait()."""
        if msg.get("method") == "elicitation/create":
            with self.lock:
                self.asked.append(msg)
            result = self.answer(msg)
            if result is not None:
                self.send((json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                       "result": result}) + "\n").encode())
        elif "method" in msg:
            with self.lock:
                self.notes.append(msg)
        else:
            super().on_message(msg)


def accept(value):
    """An answer that accepts, retyping value as a string."""
    return lambda req: {"action": "accept", "content": {"qty": str(value)}}


def decisions(tmp):
    """The decision of each confirmation record in tmp/audit.jsonl, in
    order."""
    return [r.get("decision") for r in audit_records(tmp)
            if r.get("kind") == "confirmation"]

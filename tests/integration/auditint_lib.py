"""The audit tests' names for the shared harness (sptest): a policy whose
tools reach a local HTTP target, sessions of many calls, the log read
back, and `sp audit verify`.  New tests import sptest directly."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402,F401
from sptest.mcp import INITIALIZE, outcome, request, responses  # noqa: E402,F401
from sptest.policy import (document, http_target, http_tool,  # noqa: E402
                           write_policy, write_secret)
from sptest.run import drive as _drive  # noqa: E402
from sptest.target import Target as _Target  # noqa: E402

CREDENTIAL = "tok-\"s3cr3t\"-$(id)-%2e%2e-\u00e9\u20ac-0123456789"


def policy(tmp, base_url, audit=True, key_file=None):
    """Two tools on one HTTP target with a bearer credential: get_item
    (read-only) and put_item (mutating), each with a shape-audited id, a
    mask4 card and a value-audited count."""
    cred = write_secret(tmp, "token", CREDENTIAL.encode())
    params = {"id": {"type": "string", "maxLength": 200},
              "card": {"type": "string", "maxLength": 40, "audit": "mask4"},
              "n": {"type": "integer", "audit": "value"}}
    path = "/items/{id}/{card}/{n}"
    doc = document(
        "audit-test",
        {"api": http_target(base_url, "tok", allow_loopback=True)},
        [http_tool("get_item", path, params),
         http_tool("put_item", path, params, "PUT", scope="write",
                   description="Replace one item.", mutating=True)],
        limits={"call_timeout_ms": 5000, "calls_per_session": 100000},
        audit_path=os.path.join(tmp, "audit.jsonl") if audit else None,
        credentials={"tok": {"type": "bearer", "file": cred}},
        scopes=("read", "write"))
    if audit and key_file:
        doc["audit"]["key_file"] = key_file
    return write_policy(tmp, doc)


def calls(n, tool="get_item", first_id=1, args=None):
    """INITIALIZE then n tools/call requests, ids first_id.."""
    data = INITIALIZE
    for i in range(first_id, first_id + n):
        a = args(i) if args else {"id": "item-%d" % i,
                                  "card": "4111-0000-%04d" % i, "n": i}
        data += request(i, "tools/call", {"name": tool, "arguments": a})
    return data


def drive(p, n, tool="get_item", window=8, first_id=1, args=None):
    """Runs n calls on the running session p, at most window in flight
    (under limits.max_inflight), then closes its input.  Returns
    {id: result} of what came back."""
    return _drive(p, calls(n, tool, first_id, args).splitlines(True), window)


class Target(_Target):
    """sptest.target.Target with its requests as this module's tests
    read them: headers a dict of latin-1 text (as http.server gives
    them), body bytes; with audit_path, "audit" the records present when
    each request arrived."""

    def __init__(self, audit_path=None):
        super().__init__(lifetime=3600, audit_path=audit_path)

    @property
    def requests(self):
        return [dict(r, headers={k: v.encode().decode("latin-1")
                                 for k, v in r["headers"]},
                     body=r["body"].encode())
                for r in _Target.requests(self)]

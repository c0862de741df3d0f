"""The frontend tests' names for the shared harness (sptest): the local
HTTP target with a request log, a policy whose tools reach it, checks on
raw stdout bytes that show the first offending line exactly.  New tests
import sptest directly."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import call as _call  # noqa: E402
from sptest.mcp import first_bad_line, messages, request  # noqa: E402,F401
from sptest.policy import (document, get_item, http_target,  # noqa: E402
                           http_tool, run_as_root, write_policy,
                           write_secret)
from sptest.run import SRCDIR, tmpdir  # noqa: E402,F401
from sptest.target import Target as _Target  # noqa: E402

TARGET = os.path.join(SRCDIR, "tests", "integration", "http_target.py")
FRONT_TARGET = os.path.join(SRCDIR, "tests", "integration", "front_target.py")


class Target(_Target):
    """sptest.target.Target; script FRONT_TARGET is the one with
    events."""

    def __init__(self, tmp, lifetime=60, script=TARGET):
        super().__init__(tmp, "recorder", lifetime,
                         events=script == FRONT_TARGET,
                         script=None if script in (TARGET, FRONT_TARGET)
                         else script)
        self.recorder = self


def policy(tmp, port, limits=None, server=None):
    """get_item (/items/{id}) and fetch (/{a}/{b}) on the target at port,
    with a bearer credential."""
    token = write_secret(tmp, "api.token", b"front-test-secret-7f3a\n")
    doc = document(
        "front-test",
        {"api": http_target("http://127.0.0.1:%d" % port, "api-token")},
        [get_item(),
         http_tool("fetch", "/{a}/{b}",
                   {"a": {"type": "string", "maxLength": 32},
                    "b": {"type": "string", "maxLength": 32}},
                   description="Fetch a path of the target.")],
        limits=dict({"call_timeout_ms": 5000}, **(limits or {})),
        audit_path=os.path.join(tmp, "audit.jsonl"),
        credentials={"api-token": {"type": "bearer", "file": token}})
    doc["server"].update(server or {})
    return write_policy(tmp, doc)


def call(rid, name="get_item", arguments=None):
    return _call(rid, name, {"id": "42"} if arguments is None else arguments)


__all__ = ["Target", "FRONT_TARGET", "policy", "call", "first_bad_line", "messages",
           "tmpdir"]

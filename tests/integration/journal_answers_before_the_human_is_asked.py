#!/usr/bin/env python3
"""A tool with both confirm and idempotency (docs/design.md sections 8
and 9): the journal answers an identical call before anyone is asked.
With the real sp, a real HTTP target that logs every request, a client
that counts each elicitation/create, and one state_dir:

- the first call is asked once and sent once; the identical call, in the
  same session and in a second one, is a replay: zero more questions,
  zero more requests; a call with other values is still asked and sent;
- while an identical call is held at the target by another session, the
  call is refused as in flight, and once that session's executor is
  killed (the journal says unknown) refused as unknown: zero questions,
  no second request;
- a 2026-07-28 client gets the replay as a complete result, not
  input_required, while other values still get the question;
- via "operator": the identical call is a replay at once, never listed
  for sp approve;
- a call cancelled while the journal's answer is late (test hook
  broker:late-intent-ack) is withdrawn: nobody asked, nothing sent;
- the log: a replay is an intent with replay and no confirmation
  record, a refusal a limit record (idempotency)."""
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import audit_records  # noqa: E402
from sptest.confirm import ConfirmSession  # noqa: E402
from sptest.mcp import cancel, request, structured  # noqa: E402
from sptest.policy import document, http_target, http_tool  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import SP, SP_TEST, Session, finish, read_line  # noqa: E402
from sptest.run import start  # noqa: E402
from sptest.run import tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

CONFIRM = {"message": "Store {id}?", "timeout_s": 120}
IDEM = {"window_s": 3600, "header": "Idempotency-Key"}
SAME = "-n 'a'\n$(id) %2e%2e \u00e9\u4e2d"
OTHER = "\"b\" \u00e9"
HELD = "h\u00e9ld $(x)"


def policy(tmp, port):
    params = {"id": {"type": "string", "maxLength": 64}}
    doc = document(
        "journal-first",
        {"api": http_target("http://127.0.0.1:%d" % port)},
        [http_tool("put_item", "/items/{id}", params, method="PUT",
                   scope="rw", description="Store an item.", mutating=True,
                   confirm=CONFIRM, idempotency=IDEM),
         http_tool("hold_item", "/hold/f/{id}", params, method="POST",
                   scope="rw", description="Store, slowly.", mutating=True,
                   confirm=CONFIRM, idempotency=IDEM)],
        limits={"call_timeout_ms": 120000, "dedupe_ms": 0},
        audit_path=os.path.join(tmp, "audit.jsonl"), scopes=("rw",),
        state_dir=os.path.join(tmp, "state"))
    os.mkdir(os.path.join(tmp, "state"), 0o700)
    return write_policy(tmp, doc)


def yes(req):
    return {"action": "accept", "content": {"confirm": True}}


class Client:
    def __init__(self, config, binary=None, hook=None):
        self.s = ConfirmSession(config, yes, binary=binary, hook=hook)
        self.rid = 100

    def call(self, tool, value, answered=True):
        """Its answer's structuredContent; answered False: its id, not
        waited for."""
        self.rid += 1
        self.s.call(self.rid, tool, {"id": value})
        if not answered:
            return self.rid
        return structured(self.s.wait([self.rid]).get(self.rid))

    def asked(self):
        with self.s.lock:
            return len(self.s.asked)


def sent(target, prefix):
    return [r for r in target.requests() if r["path"].startswith(prefix)]


def modern_call(p, rid, value):
    """One 2026-07-28 tools/call on p, read line by line."""
    p.stdin.write(request(rid, "tools/call", {
        "name": "put_item", "arguments": {"id": value},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities":
                  {"elicitation": {}}}}))
    p.stdin.flush()
    line = read_line(p, 60) or b"{}"
    return json.loads(line).get("result", {})


def replays(tmp, target, config):
    a = Client(config)
    first = a.call("put_item", SAME)
    check("the first call is asked once and sent once",
          first.get("outcome") == "ok" and a.asked() == 1 and
          len(sent(target, "/items/")) == 1,
          (first, a.asked(), sent(target, "/items/")))
    again = a.call("put_item", SAME)
    check("the identical call in the same session: a replay, nobody "
          "asked, nothing sent", again.get("outcome") == "ok" and
          again.get("replay") is True and
          "replayed from the idempotency journal" in again.get("message",
                                                               "") and
          a.asked() == 1 and len(sent(target, "/items/")) == 1,
          (again, a.asked(), sent(target, "/items/")))
    other = a.call("put_item", OTHER)
    check("a call with other values is still asked and sent",
          other.get("outcome") == "ok" and "replay" not in other and
          a.asked() == 2 and len(sent(target, "/items/")) == 2,
          (other, a.asked()))
    a.s.close()

    b = Client(config)
    again = b.call("put_item", SAME)
    check("the identical call in a second session on the state_dir: a "
          "replay, nobody asked, nothing sent",
          again.get("outcome") == "ok" and again.get("replay") is True and
          b.asked() == 0 and len(sent(target, "/items/")) == 2,
          (again, b.asked(), sent(target, "/items/")))
    b.s.close()


def refusals(tmp, target, config):
    holder, c = Client(config), Client(config)
    executor = holder.s.executor_pid()
    before = len(target.requests())
    holder.call("hold_item", HELD, answered=False)
    target.wait_requests(before + 1, 60)
    r = c.call("hold_item", HELD)
    check("an identical call in flight in another session: refused, "
          "nobody asked", r.get("outcome") == "denied" and
          "in flight" in r.get("message", "") and c.asked() == 0 and
          holder.asked() == 1, (r, c.asked(), holder.asked()))
    os.kill(executor, signal.SIGKILL)
    holder.s.close()
    target.release("f")
    r = c.call("hold_item", HELD)
    check("after its executor was killed (unknown): refused saying what "
          "to check, nobody asked", r.get("outcome") == "denied" and
          "outcome is unknown" in r.get("message", "") and
          c.asked() == 0, (r, c.asked()))
    c.s.close()
    check("one request reached the target for the held value",
          len(sent(target, "/hold/f/")) == 1, sent(target, "/hold/f/"))


def modern(tmp, target, config):
    p = start(config)
    again = modern_call(p, 1, SAME)
    fresh = modern_call(p, 2, "m\u00e9 $(y)")
    finish(p, b"", 30)
    sc = again.get("structuredContent", {})
    check("2026-07-28: the identical call is a complete replay, not "
          "input_required", again.get("resultType") == "complete" and
          sc.get("outcome") == "ok" and sc.get("replay") is True and
          "inputRequests" not in again, again)
    check("2026-07-28: other values still get the question",
          fresh.get("resultType") == "input_required", fresh)
    check("2026-07-28: nothing more reached the target",
          len(sent(target, "/items/")) == 2, sent(target, "/items/"))


def approvals(state, want=0):
    """The calls sp approve --list shows (this uid is the approver), once
    want of them show or after 60 s."""
    end = time.monotonic() + 60
    while True:
        p = subprocess.run([SP, "approve", "--state-dir", state, "--list"],
                           capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        if len(lines) >= want or time.monotonic() > end:
            return lines
        time.sleep(0.1)


def operator(target):
    """confirm via "operator", this uid the approver, its own state_dir
    and log: the replay waits for nobody and is never listed."""
    tmp = tmpdir()
    state = os.path.join(tmp, "state")
    op = dict(CONFIRM, via="operator", approvers={"uid": [os.getuid()]})
    doc = document(
        "journal-first-operator",
        {"api": http_target("http://127.0.0.1:%d" % target.port)},
        [http_tool("put_op", "/op/{id}", {"id": {"type": "string",
                                                  "maxLength": 64}},
                   method="PUT", scope="rw", description="Store.",
                   mutating=True, confirm=op, idempotency=IDEM)],
        limits={"call_timeout_ms": 120000, "dedupe_ms": 0},
        audit_path=os.path.join(tmp, "audit.jsonl"), scopes=("rw",),
        state_dir=state)
    os.mkdir(state, 0o711)
    os.chmod(tmp, 0o711)
    s = Session(write_policy(tmp, doc))
    s.call(1, "put_op", {"id": SAME})
    lines = approvals(state, want=1)
    ident = lines[0].split("\t")[0] if lines else "none"
    p = subprocess.run([SP, "approve", "--state-dir", state, ident],
                       capture_output=True, text=True, timeout=60)
    first = structured(s.wait([1], 60).get(1))
    check("via operator: the first call is listed, approved, sent once",
          len(lines) == 1 and p.returncode == 0 and
          first.get("outcome") == "ok" and
          len(sent(target, "/op/")) == 1, (lines, p.stderr, first))
    s.call(2, "put_op", {"id": SAME})
    got = s.wait([2], 60)
    again = structured(got.get(2))
    listed = approvals(state)
    s.close()
    check("via operator: the identical call is a replay at once, never "
          "listed, nothing sent", again.get("replay") is True and
          listed == [] and len(sent(target, "/op/")) == 1,
          (again, listed, sent(target, "/op/")))
    asked = [r.get("call") for r in audit_records(tmp)
             if r.get("decision") == "asked"]
    check("via operator: asked once", asked == [1], asked)


def cancelled(target):
    """The broker acks 3 s late: a cancel meanwhile withdraws the call,
    the late ack finds nothing waiting, and the session goes on."""
    tmp = tmpdir()
    c = Client(policy(tmp, target.port), binary=SP_TEST,
               hook="broker:late-intent-ack")
    c.call("put_item", "late\u00e9", answered=False)
    c.s.send(cancel(c.rid))
    time.sleep(4)
    after = c.call("put_item", "after")
    status = c.s.close()
    d = [(r.get("call"), r.get("decision")) for r in audit_records(tmp)
         if r.get("kind") == "confirmation"]
    check("cancelled while the journal answers: withdrawn, nobody asked, "
          "nothing sent; the next call runs", d[:2] ==
          [(1, "asked"), (1, "withdrawn")] and c.asked() == 1 and
          after.get("outcome") == "ok" and status == 0 and
          [r["path"] for r in sent(target, "/items/")
           if "late" in r["path"]] == [], (d, c.asked(), after, status))


def logged(tmp):
    recs = audit_records(tmp)
    asked = [r for r in recs if r.get("kind") == "confirmation" and
             r.get("decision") == "asked"]
    replayed = [r for r in recs if r.get("kind") == "intent" and
                r.get("replay")]
    limits = [r for r in recs if r.get("kind") == "limit"]
    check("audited: asked only for the four calls a human was asked about",
          len(asked) == 4 and all("args" not in r for r in asked),
          [(r.get("tool"), r.get("call")) for r in asked])
    check("audited: three replays, intents with replay, args and key",
          len(replayed) == 3 and
          all(r.get("tool") == "put_item" and "id" in r.get("args", {}) and
              len(r.get("journal", "")) == 64 for r in replayed), replayed)
    check("audited: two refusals, limit idempotency",
          [(r.get("tool"), r.get("limit")) for r in limits] ==
          [("hold_item", "idempotency")] * 2, limits)


def main():
    tmp = tmpdir()
    target = Target(tmp, lifetime=600)
    try:
        config = policy(tmp, target.port)
        replays(tmp, target, config)
        refusals(tmp, target, config)
        modern(tmp, target, config)
        operator(target)
        cancelled(target)
        logged(tmp)
    finally:
        target.stop()
    done()


main()

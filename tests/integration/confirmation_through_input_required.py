#!/usr/bin/env python3
"""Confirmation in a 2026-07-28 (modern) session (docs/design.md section
8.2), driven line by line so each round can be tampered with: the first
tools/call of a confirm tool returns resultType "input_required" with the
question as an input request and the challenge as requestState, and
nothing reaches the HTTP target; the retry with the human's accept and the
requestState reaches it once.  A requestState replayed, changed, sent with
other arguments or after its timeout_s, a decline, a wrong retyped value:
each denied, saying why, zero requests; a read call runs between the
rounds.  A client whose _meta declares no elicitation gets the
revision's error -32021 naming the capability, and a requestState kept
across a restart of sp is refused as expired with the session that
issued it: zero requests both."""
import base64
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import audit_records  # noqa: E402
from sptest.confirm import decisions  # noqa: E402
from sptest.mcp import request  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import finish, read_line, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

KEY = "sallyport-confirm"
NAME = "w \u00e9 \"$(id)\""


def meta(elicitation=True):
    return {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}} if elicitation else {}}


class Modern:
    def __init__(self, timeout_s=60):
        self.tmp = tmpdir()
        self.target = Target(self.tmp, "recorder")
        self.config = confirmed_create_item_policy(
            self.tmp, self.target.port, timeout_s=timeout_s)
        self.p = start(self.config)
        self.pending = b""
        self.rid = 0
        self.last = {}

    def restart(self):
        """The session ends and sp starts again on the same policy."""
        finish(self.p, b"", 30)
        self.p = start(self.config)
        self.pending = b""

    def call(self, args, tool="create_item", extra=None, elicitation=True):
        self.rid += 1
        params = {"name": tool, "arguments": args,
                  "_meta": meta(elicitation)}
        params.update(extra or {})
        self.p.stdin.write(request(self.rid, "tools/call", params))
        self.p.stdin.flush()
        end = time.monotonic() + 60
        while b"\n" not in self.pending and time.monotonic() < end:
            self.pending += read_line(self.p, 60) or b""
        line, self.pending = self.pending.split(b"\n", 1)
        self.last = json.loads(line)
        return self.last.get("result", {})

    def posts(self):
        return [r for r in self.target.requests() if r["method"] == "POST"]

    def close(self):
        finish(self.p, b"", 30)
        self.target.stop()


def answer(state, action="accept", qty="5"):
    return {"requestState": state, "inputResponses": {
        KEY: {"action": action, "content": {"qty": qty}}}}


def outcome(r):
    return r.get("structuredContent", {}).get("outcome"), \
        r.get("structuredContent", {}).get("message", "")


def test_rounds():
    m = Modern()
    first = m.call({"name": NAME, "qty": 5})
    question = first.get("inputRequests", {}).get(KEY, {})
    check("first round: input_required, the question as an input request, "
          "the challenge as requestState",
          first.get("resultType") == "input_required" and
          question.get("method") == "elicitation/create" and
          question.get("params", {}).get("message") ==
          "Create 5 x %s in the shop" % NAME and
          isinstance(first.get("requestState"), str), first)
    check("... nothing reached the target", m.posts() == [], m.posts())
    read = m.call({"id": "between"}, tool="get_item")
    check("a read call between the rounds runs",
          outcome(read)[0] == "ok", read)
    state = first.get("requestState", "")
    second = m.call({"name": NAME, "qty": 5}, extra=answer(state))
    check("the retry with the human's accept and the requestState: ok, one "
          "request", outcome(second)[0] == "ok" and len(m.posts()) == 1 and
          second.get("resultType") == "complete", (second, m.posts()))
    third = m.call({"name": NAME, "qty": 5}, extra=answer(state))
    check("the same requestState again: denied as already used, still one "
          "request", outcome(third)[0] == "denied" and
          "already used" in outcome(third)[1] and len(m.posts()) == 1, third)

    state = m.call({"name": NAME, "qty": 5}).get("requestState", "")
    other = m.call({"name": NAME, "qty": 6}, extra=answer(state, qty="6"))
    check("a requestState sent with other arguments (retyped right for "
          "them): denied, nothing sent", outcome(other)[0] == "denied" and
          "does not match" in outcome(other)[1] and len(m.posts()) == 1,
          other)
    raw = bytearray(base64.b64decode(state))
    raw[-1] ^= 0x01
    changed = m.call({"name": NAME, "qty": 5},
                     extra=answer(base64.b64encode(bytes(raw)).decode()))
    check("a changed requestState: denied, nothing sent",
          outcome(changed)[0] == "denied" and
          "does not match" in outcome(changed)[1] and len(m.posts()) == 1,
          changed)
    garbage = m.call({"name": NAME, "qty": 5}, extra=answer("not base64 $"))
    check("a requestState that is not one: denied, nothing sent",
          outcome(garbage)[0] == "denied" and len(m.posts()) == 1, garbage)

    state = m.call({"name": NAME, "qty": 5}).get("requestState", "")
    wrong = m.call({"name": NAME, "qty": 5}, extra=answer(state, qty="50"))
    declined = m.call({"name": NAME, "qty": 5},
                      extra=answer(state, action="decline"))
    check("a wrong retyped value, a decline: denied saying why, nothing "
          "sent", outcome(wrong)[0] == "denied" and
          "not this call's" in outcome(wrong)[1] and
          outcome(declined)[0] == "denied" and
          "declined" in outcome(declined)[1] and len(m.posts()) == 1,
          (wrong, declined))
    m.close()
    d = decisions(m.tmp)
    check("audited: relayed, accepted once, then replayed, forged, "
          "wrong-value, declined",
          d.count("accepted") == 1 and d.count("relayed") == 3 and
          d.count("forged") == 3 and "replayed" in d and
          "wrong-value" in d and "declined" in d, d)


def test_no_elicitation():
    """-32021 (MissingRequiredClientCapability) with the capability in
    ClientCapabilities' shape, for the first round and for a retry alike;
    a rejection in the log, nothing sent, nothing asked."""
    m = Modern()
    state = m.call({"name": NAME, "qty": 5}).get("requestState", "")
    for name, extra in (("a first call", None),
                        ("a retry with an accepted requestState",
                         answer(state))):
        m.call({"name": NAME, "qty": 5}, extra=extra, elicitation=False)
        err = m.last.get("error", {})
        check("%s from a client whose _meta declares no elicitation: "
              "-32021 naming it, nothing sent" % name,
              "result" not in m.last and err.get("code") == -32021 and
              err.get("data", {}).get("requiredCapabilities") ==
              {"elicitation": {"form": {}}} and
              "elicitation" in err.get("message", "") and
              m.posts() == [], m.last)
    read = m.call({"id": "after"}, tool="get_item")
    check("... and the session goes on", outcome(read)[0] == "ok", read)
    m.close()
    recs = audit_records(m.tmp)
    rej = [r for r in recs if r["kind"] == "rejection"]
    check("audited as rejections, code -32021, reason missing-capability "
          "(the second folded as repeated); no decision but the first "
          "round's", [(r.get("code"), r.get("reason"), r.get("tool"),
                       r.get("repeated")) for r in rej] ==
          [(-32021, "missing-capability", "create_item", None),
           (-32021, "missing-capability", "create_item", 1)] and
          decisions(m.tmp) == ["asked", "relayed"], (rej, decisions(m.tmp)))


def test_restart():
    """The executor's key is its process's: a requestState from before a
    restart cannot verify, and says it expired with its session."""
    m = Modern()
    state = m.call({"name": NAME, "qty": 5}).get("requestState", "")
    m.restart()
    late = m.call({"name": NAME, "qty": 5}, extra=answer(state))
    check("a requestState from before a restart: denied as expired with "
          "the session that issued it, nothing sent",
          outcome(late)[0] == "denied" and
          "expired with the session that issued it" in outcome(late)[1]
          and m.posts() == [], late)
    state = m.call({"name": NAME, "qty": 5}).get("requestState", "")
    again = m.call({"name": NAME, "qty": 5}, extra=answer(state))
    check("... asked anew, the new session's requestState runs it once",
          outcome(again)[0] == "ok" and len(m.posts()) == 1, again)
    m.close()
    d = decisions(m.tmp)
    check("audited: relayed, then expired (not forged), relayed, accepted",
          d == ["asked", "relayed", "asked", "expired", "asked", "relayed",
                "asked", "accepted"], d)


def test_expired():
    m = Modern(timeout_s=1)
    state = m.call({"name": NAME, "qty": 5}).get("requestState", "")
    time.sleep(1.5)
    late = m.call({"name": NAME, "qty": 5}, extra=answer(state))
    check("a requestState past its timeout_s: denied as expired, nothing "
          "sent", outcome(late)[0] == "denied" and
          "expired" in outcome(late)[1] and m.posts() == [], late)
    m.close()


def main():
    test_rounds()
    test_expired()
    test_no_elicitation()
    test_restart()
    return done()


if __name__ == "__main__":
    sys.exit(main())

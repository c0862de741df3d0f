#!/usr/bin/env python3
"""Hostile answers to the human's question (docs/design.md section 8.2),
each on its own call of one session, then the real answer: accepts for
ids never asked (another number, a leading zero, an integer id, a
trailing space), a response with both result and error, a second answer
after a decline, an accept after the client cancelled the call, an
action of the wrong type, a retyped value of the wrong type, a retyped
value of 600 KB, and extra fields beside the right value.  Only the last
may act: the target's request log must show exactly one request.  Then,
for a tool asking no retyped value (which would mask it), a decline that
must not act.  The
session has on_invalid "reject", so that the malformed response is
refused and the session goes on (with "close" it would end there)."""
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.confirm import ConfirmSession, decisions  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

ACCEPT = {"action": "accept", "content": {"qty": "3"}}
DECLINE = {"action": "decline"}


def line(member, rid):
    return (json.dumps(dict({"jsonrpc": "2.0", "id": rid}, **member)) +
            "\n").encode()


class Run:
    def __init__(self, retype="qty"):
        self.tmp = tmpdir()
        self.target = Target(self.tmp, "recorder")
        path = confirmed_create_item_policy(self.tmp, self.target.port,
                                            retype=retype)
        with open(path) as f:
            doc = json.load(f)
        # a malformed response is refused and the session goes on
        doc["server"]["on_invalid"] = "reject"
        with open(path, "w") as f:
            json.dump(doc, f)
        self.s = ConfirmSession(path, lambda req: None)
        self.rid = 0

    def ask(self):
        """A call whose question is out; its elicitation id."""
        self.rid += 1
        seen = len(self.s.asked)
        self.s.call(self.rid, "create_item", {"name": "n \"%d\"\n" % self.rid,
                                              "qty": 3})
        end = time.monotonic() + 30
        while len(self.s.asked) == seen and time.monotonic() < end:
            time.sleep(0.01)
        return self.s.asked[-1]["id"]

    def outcome(self):
        got = self.s.wait([self.rid], 60)
        return got.get(self.rid, ({},))[0].get("result", {}).get(
            "structuredContent", {}).get("outcome")

    def posts(self):
        return len([r for r in self.target.requests()
                    if r["method"] == "POST"])


def main():
    r = Run()
    eid = r.ask()
    n = eid.rsplit("-", 1)[1]
    for bogus in ("sallyport-confirm-999", "sallyport-confirm-0" + n,
                  int(n), eid + " ", "sallyport-confirm-+" + n):
        r.s.send(line({"result": ACCEPT}, bogus))
    r.s.send(line({"result": DECLINE}, eid))
    check("accepts for ids never asked are ignored: the real decline "
          "decides", r.outcome() == "denied" and r.posts() == 0, r.posts())

    eid = r.ask()
    r.s.send(line({"result": ACCEPT, "error": {"code": 1, "message": "x"}},
                  eid))
    r.s.send(line({"result": DECLINE}, eid))
    check("a response with result and error is no answer: the decline "
          "after it decides", r.outcome() == "denied" and r.posts() == 0,
          r.posts())

    eid = r.ask()
    r.s.send(line({"result": DECLINE}, eid))
    r.s.send(line({"result": ACCEPT}, eid))
    check("decline, then accept: the first answer stands", r.outcome() ==
          "denied" and r.posts() == 0, r.posts())

    eid = r.ask()
    r.s.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
             b'"params":{"requestId":%d}}\n' % r.rid)
    r.s.send(line({"result": ACCEPT}, eid))
    time.sleep(0.5)
    check("the call cancelled, then the human's accept: nothing runs",
          r.posts() == 0, r.posts())

    for label, result in (
            ("an action that is not a string", {"action": 1}),
            ("a retyped value that is a number",
             {"action": "accept", "content": {"qty": 3}}),
            ("a retyped value of 600 KB",
             {"action": "accept", "content": {"qty": "3" * 600000}}),
            ("content that is not an object",
             {"action": "accept", "content": "3"})):
        eid = r.ask()
        r.s.send(line({"result": result}, eid))
        check("%s: denied, nothing sent" % label,
              r.outcome() == "denied" and r.posts() == 0, r.posts())

    eid = r.ask()
    r.s.send(line({"result": {"action": "accept", "extra": [1],
                              "content": {"qty": "3", "confirm": True,
                                          "name": "other"}}}, eid))
    check("the right value with extra fields beside it: one request",
          r.outcome() == "ok" and r.posts() == 1, r.posts())
    r.s.close()
    d = decisions(r.tmp)
    check("the audit: declined three times, withdrawn, cancelled, "
          "wrong-value three times, accepted once",
          sorted(x for x in d if x != "asked") == sorted(
              ["declined"] * 3 + ["withdrawn", "cancelled"] +
              ["wrong-value"] * 3 + ["accepted"]), d)
    r.target.stop()
    decline_without_retype()
    done()


def decline_without_retype():
    """No retyped value asked, the form a checkbox: a decline taken for
    an accept would act on a ticked box, with nothing else to stop it.
    A decline (bare, then one carrying the ticked box) is denied and
    sends nothing; an accept with the box ticked sends one."""
    r = Run(retype=None)
    eid = r.ask()
    r.s.send(line({"result": DECLINE}, eid))
    bare = r.outcome()
    eid = r.ask()
    r.s.send(line({"result": {"action": "decline",
                              "content": {"confirm": True}}}, eid))
    valued = r.outcome()
    check("no retype: a decline, bare or with the box ticked, is denied and "
          "sends nothing", bare == valued == "denied" and r.posts() == 0,
          (bare, valued, r.posts()))
    eid = r.ask()
    r.s.send(line({"result": {"action": "accept",
                              "content": {"confirm": True}}}, eid))
    check("no retype: an accept, the box ticked, sends one request",
          r.outcome() == "ok" and r.posts() == 1, r.posts())
    r.s.close()
    d = decisions(r.tmp)
    check("no retype: the audit says declined twice, accepted once",
          [x for x in d if x != "asked"] == ["declined", "declined",
                                             "accepted"], d)
    r.target.stop()


if __name__ == "__main__":
    main()

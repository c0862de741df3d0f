#!/usr/bin/env python3
"""A human's "no" is final (docs/design.md section 8.1): a decline or a
cancel spends the challenge as an accept does, so the same challenge
brought back with "accept" is refused as already used and the HTTP
target, which logs every request, sees nothing.

  modern   a 2026-07-28 requestState answered "decline" (then, in a second
           round, "cancel"), re-sent with the right accept
  legacy   tests/sp-test's frontend:confirm-replay hook (a compromised
           frontend) relays the first call's challenge, declined (or
           cancelled) by the human, with the human's accept of a second,
           identical call

A control in each era shows the accept alone would have reached the
target: what stops it is the spent challenge."""
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from confirmation_through_input_required import Modern, answer, outcome  # noqa: E402,E501
from sptest.confirm import ConfirmSession, decisions  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP_TEST, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

NAME = "-w \u00e9\n\"$(id)\" %2e%2e"
QTY = 12


def test_modern(action):
    m = Modern()
    args = {"name": NAME, "qty": QTY}
    state = m.call(args).get("requestState", "")
    no = m.call(args, extra=answer(state, action=action, qty=str(QTY)))
    again = m.call(args, extra=answer(state, qty=str(QTY)))
    check("modern: a requestState answered %s, re-sent with the right "
          "accept: denied as already used, zero requests at the target"
          % action, outcome(no)[0] == "denied" and
          outcome(again)[0] == "denied" and
          "already used" in outcome(again)[1] and m.posts() == [],
          (no, again, m.posts()))
    fresh = m.call(args).get("requestState", "")
    ok = m.call(args, extra=answer(fresh, qty=str(QTY)))
    check("... control: a fresh requestState accepted reaches the target "
          "once", outcome(ok)[0] == "ok" and len(m.posts()) == 1,
          (ok, m.posts()))
    m.close()
    d = decisions(m.tmp)
    check("... audited %s, then replayed" % action,
          ("declined" if action == "decline" else "cancelled") in d and
          "replayed" in d and d.count("accepted") == 1, d)


def test_legacy(action):
    if not os.path.exists(SP_TEST):
        skip("legacy: a %sd challenge relayed with an accept" % action,
             "tests/sp-test is not built")
        return
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg = confirmed_create_item_policy(tmp, target.port)
    answers = [{"action": action},
               {"action": "accept", "content": {"qty": str(QTY)}}]
    s = ConfirmSession(cfg, lambda req: answers.pop(0) if answers else None,
                       binary=SP_TEST, hook="frontend:confirm-replay")
    s.call(1, "create_item", {"name": NAME, "qty": QTY})
    first = s.wait([1], 60)
    s.call(2, "create_item", {"name": NAME, "qty": QTY})
    second = s.wait([2], 60)
    s.close()
    posts = [r for r in target.requests() if r["method"] == "POST"]
    r1 = first.get(1, ({},))[0].get("result", {}).get("structuredContent",
                                                          {})
    r2 = second.get(2, ({},))[0].get("result", {}).get(
        "structuredContent", {})
    check("legacy: the human %ss; the frontend relays that challenge with "
          "the human's accept of an identical call: denied as already "
          "used, zero requests" % action,
          r1.get("outcome") == "denied" and r2.get("outcome") == "denied" and
          "already used" in r2.get("message", "") and posts == [],
          (r1, r2, posts, decisions(tmp)))
    target.stop()


def test_legacy_control():
    """The same hook, an accept first: the accept is what acts."""
    if not os.path.exists(SP_TEST):
        skip("legacy control", "tests/sp-test is not built")
        return
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg = confirmed_create_item_policy(tmp, target.port)
    s = ConfirmSession(cfg, lambda req: {"action": "accept",
                                         "content": {"qty": str(QTY)}},
                       binary=SP_TEST, hook="frontend:confirm-replay")
    s.call(1, "create_item", {"name": NAME, "qty": QTY})
    got = s.wait([1], 60)
    s.close()
    posts = [r for r in target.requests() if r["method"] == "POST"]
    r = got.get(1, ({},))[0].get("result", {}).get("structuredContent", {})
    check("... control: under the same hook the human's first accept "
          "reaches the target once, with the values as sent",
          r.get("outcome") == "ok" and len(posts) == 1 and
          json.loads(posts[0].get("body") or "{}").get("name") == NAME,
          (r, posts))
    target.stop()


def main():
    test_modern("decline")
    test_modern("cancel")
    test_legacy("decline")
    test_legacy("cancel")
    test_legacy_control()
    return done()


if __name__ == "__main__":
    sys.exit(main())

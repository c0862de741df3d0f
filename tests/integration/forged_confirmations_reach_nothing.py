#!/usr/bin/env python3
"""A compromised frontend cannot confirm for the human (docs/design.md
section 8.1): through tests/sp-test's frontend:confirm-* hooks
(child/test_hook.h) the frontend relays an answer whose challenge was
forged (a MAC bit flipped), replayed (spent on an earlier identical
call), issued for other values or another tool with the same values, or
expired -- each after the client's
human accepted with the right retyped value -- and the HTTP target, which
logs every request, sees nothing; the call is denied saying why and the
audit log's confirmation record names the decision.  A control run of
the same binary without a hook shows the target would have been reached."""
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.confirm import ConfirmSession, accept, decisions  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import SP_TEST, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

NAME = "widget \"$(id)\"\n-x \u00e9t\u00e9"


def result(got, rid):
    msg = got.get(rid, ({},))[0]
    return msg.get("result", {}).get("structuredContent", {})


def posts(target):
    return [r for r in target.requests() if r["method"] == "POST"]


def session(hook, timeout_s=60, value=3):
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    cfg = confirmed_create_item_policy(tmp, target.port, timeout_s=timeout_s)
    return tmp, target, ConfirmSession(cfg, accept(value), binary=SP_TEST,
                                       hook=hook)


def test_control():
    tmp, target, s = session(None)
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    got = s.wait([1], 60)
    s.close()
    check("control, no hook: the human's accept reaches the target once",
          result(got, 1).get("outcome") == "ok" and len(posts(target)) == 1,
          (result(got, 1), posts(target)))
    target.stop()


def test_integer_only_policy():
    """No string param anywhere: the channel's string bound is 0, and the
    human's retyped text of an integer must still get through."""
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    path = confirmed_create_item_policy(tmp, target.port)
    with open(path) as f:
        doc = json.load(f)
    doc["tools"] = [doc["tools"][0]]
    doc["tools"][0]["http"]["body"] = {"qty": "{qty}"}
    del doc["tools"][0]["params"]["name"]
    doc["tools"][0]["confirm"]["message"] = "Create {qty}"
    with open(path, "w") as f:
        json.dump(doc, f)
    s = ConfirmSession(path, lambda req: {"action": "accept",
                                          "content": {"qty": "-0042"[2:]}},
                       binary=SP_TEST)
    s.call(1, "create_item", {"qty": 42})
    got = s.wait([1], 60)
    s.close()
    check("a policy with no string param: the retyped \"042\" is read as "
          "the integer 42, one request", result(got, 1).get("outcome") == "ok"
          and len(posts(target)) == 1, (result(got, 1), s.stderr[-500:]))
    target.stop()


def test_mac():
    tmp, target, s = session("frontend:confirm-mac")
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    got = s.wait([1], 60)
    s.close()
    r = result(got, 1)
    check("a MAC with one bit flipped: denied, nothing reached the target",
          r.get("outcome") == "denied" and posts(target) == [],
          (r, posts(target)))
    check("... saying the confirmation does not match, audited as forged",
          "does not match this action" in r.get("message", "") and
          decisions(tmp) == ["asked", "forged"], (r, decisions(tmp)))
    target.stop()


def test_replay():
    tmp, target, s = session("frontend:confirm-replay")
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    first = s.wait([1], 60)
    s.call(2, "create_item", {"name": NAME, "qty": 3})
    second = s.wait([2], 60)
    s.close()
    check("replay: the first call, confirmed, reached the target once",
          result(first, 1).get("outcome") == "ok", result(first, 1))
    r = result(second, 2)
    check("... the same values again with the spent challenge: denied, "
          "still one request at the target",
          r.get("outcome") == "denied" and len(posts(target)) == 1,
          (r, posts(target)))
    check("... saying it was already used, audited as replayed",
          "already used" in r.get("message", "") and
          decisions(tmp)[-1] == "replayed", (r, decisions(tmp)))
    target.stop()


def test_other_values():
    tmp, target, s = session("frontend:confirm-stale")
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    # wait until call 1's answer was kept back, so call 2 gets its challenge
    end = time.monotonic() + 60
    while len(s.asked) < 1 and time.monotonic() < end:
        time.sleep(0.02)
    s.call(2, "create_item", {"name": NAME, "qty": 7})
    s.answer = accept(7)
    got = s.wait([2], 60)
    r = result(got, 2)
    # the first call still waits: the client withdraws it
    s.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
           b'"params":{"requestId":1}}\n')
    s.close()
    check("a challenge issued for qty 3 answering a call with qty 7 (the "
          "retyped 7 right): denied, nothing reached the target",
          r.get("outcome") == "denied" and posts(target) == [],
          (r, posts(target)))
    check("... audited as forged; the waiting call withdrawn, never acted",
          "forged" in decisions(tmp) and "withdrawn" in decisions(tmp) and
          "accepted" not in decisions(tmp), decisions(tmp))
    target.stop()


def test_other_tool():
    """The same values, another confirm tool: the MAC covers the tool."""
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    path = confirmed_create_item_policy(tmp, target.port)
    with open(path) as f:
        doc = json.load(f)
    other = json.loads(json.dumps(doc["tools"][0]))
    other["name"] = "create_item_b"
    other["http"]["path"] = "/items-b"
    doc["tools"].append(other)
    with open(path, "w") as f:
        json.dump(doc, f)
    s = ConfirmSession(path, accept(3), binary=SP_TEST,
                       hook="frontend:confirm-stale")
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    end = time.monotonic() + 60
    while len(s.asked) < 1 and time.monotonic() < end:
        time.sleep(0.02)
    s.call(2, "create_item_b", {"name": NAME, "qty": 3})
    got = s.wait([2], 60)
    r = result(got, 2)
    s.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled",'
           b'"params":{"requestId":1}}\n')
    s.close()
    check("create_item's unspent challenge answering create_item_b with "
          "the same values (the retyped 3 right): denied, nothing reached "
          "the target", r.get("outcome") == "denied" and
          target.requests() == [], (r, target.requests()))
    check("... audited as forged", "forged" in decisions(tmp) and
          "accepted" not in decisions(tmp), decisions(tmp))
    target.stop()


def test_expired():
    tmp, target, s = session("frontend:confirm-stale", timeout_s=1)
    s.call(1, "create_item", {"name": NAME, "qty": 3})
    first = s.wait([1], 60)
    s.call(2, "create_item", {"name": NAME, "qty": 3})
    second = s.wait([2], 60)
    s.close()
    check("expiry: the first call, left unanswered, is denied when its "
          "timeout_s passes", result(first, 1).get("outcome") == "denied" and
          "before it expired" in result(first, 1).get("message", ""),
          result(first, 1))
    r = result(second, 2)
    check("... its expired challenge, for the same values, answering a "
          "second call: denied, nothing reached the target",
          r.get("outcome") == "denied" and posts(target) == [],
          (r, posts(target)))
    check("... both audited as expired",
          decisions(tmp) == ["asked", "expired", "asked", "expired"],
          decisions(tmp))
    target.stop()


def main():
    if not os.path.exists(SP_TEST):
        skip("confirmation hooks", "tests/sp-test is not built")
        return done()
    test_control()
    test_integer_only_policy()
    test_mac()
    test_replay()
    test_other_values()
    test_other_tool()
    test_expired()
    return done()


if __name__ == "__main__":
    sys.exit(main())

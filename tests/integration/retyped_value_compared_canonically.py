#!/usr/bin/env python3
"""The retyped value is compared as the param's canonical value
(docs/design.md section 8.1): another spelling of the same integer
passes, anything that reads as another value or not as one at all is
refused -- whitespace, a sign, an exponent, other digits (Arabic-Indic,
full-width), an invisible character, an empty answer; a string must be
the same bytes (another Unicode normalization, case or a trailing space
is another value).  Each attempt is one call with the human's accept;
the target's request log counts what ran."""
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.confirm import ConfirmSession  # noqa: E402
from sptest.policy import confirmed_create_item_policy  # noqa: E402
from sptest.run import tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

# (what the human types, whether it is the value 42)
INTEGER = [("42", True), ("042", True), ("42.0", True),
           (" 42", False), ("42 ", False), ("+42", False), ("4.2e1", False),
           ("-42", False), ("43", False), ("\u0664\u0662", False),
           ("\uff14\uff12", False), ("42\u200b", False), ("", False),
           ("0x2a", False), ("42\n", False)]
NAME = "Caf\u00e9 \"$(id)\""
STRING = [(NAME, True), ("Cafe\u0301 \"$(id)\"", False),
          ("caf\u00e9 \"$(id)\"", False), (NAME + " ", False),
          (NAME[:-1], False)]


def attempts(retype, cases, args):
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    path = confirmed_create_item_policy(tmp, target.port, retype=retype)
    with open(path) as f:
        doc = json.load(f)
    doc["limits"]["calls_per_session"] = 100
    with open(path, "w") as f:
        json.dump(doc, f)
    typed = {}
    s = ConfirmSession(path, lambda req: {
        "action": "accept", "content": {retype: typed["now"]}})
    results = []
    for i, (text, _) in enumerate(cases, 1):
        typed["now"] = text
        before = len(target.requests())
        s.call(i, "create_item", args(i))
        got = s.wait([i], 60)
        out = got.get(i, ({},))[0].get("result", {}).get(
            "structuredContent", {})
        results.append((text, out.get("outcome"),
                        len(target.requests()) - before))
    s.close()
    target.stop()
    return results


def main():
    # Each attempt differs in the value not retyped: an identical
    # mutating call within limits.dedupe_ms would be a duplicate of the
    # one before (docs/sp-policy.5), answered without a request.
    got = attempts("qty", INTEGER, lambda i: {"name": "w%d" % i, "qty": 42})
    for (text, same), (_, outcome, reached) in zip(INTEGER, got):
        check("qty 42, the human types %r: %s" % (
            text, "accepted, one request" if same else
            "denied, nothing sent"),
            (outcome, reached) == (("ok", 1) if same else ("denied", 0)),
            (outcome, reached))
    got = attempts("name", STRING, lambda i: {"name": NAME, "qty": i})
    for (text, same), (_, outcome, reached) in zip(STRING, got):
        check("name %r, the human types %r: %s" % (
            NAME, text, "accepted" if same else "denied, nothing sent"),
            (outcome, reached) == (("ok", 1) if same else ("denied", 0)),
            (outcome, reached))
    done()


if __name__ == "__main__":
    main()

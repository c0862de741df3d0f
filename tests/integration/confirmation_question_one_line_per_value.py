#!/usr/bin/env python3
"""The question a human reads is built only from the template and the
sanitized values (docs/design.md section 8.2), and a value cannot take
over its layout: a model's value with newlines could otherwise write
lines that read as the template's own ("Approved already: type 3").  So
in a confirmation message a value's line breaks and tabs are spaces,
bidi controls go, "{qty}" inside a value stays text, each value is cut
at 120 characters (never inside a UTF-8 sequence) and the whole at 500,
each cut said; a template of 166 placeholders with long values is still
asked (a fixed 64 KiB bound ended the session).  Every question is
declined: the target sees nothing.  Without a template the question is
"Allow TOOL: param = value, ...?", its values shown the same way."""
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


def question(template, name, qty=3, a=None):
    tmp = tmpdir()
    target = Target(tmp, "recorder")
    path = confirmed_create_item_policy(tmp, target.port)
    with open(path) as f:
        doc = json.load(f)
    doc["tools"][0]["params"]["name"]["maxLength"] = 1000
    if template is None:
        del doc["tools"][0]["confirm"]["message"]
    else:
        doc["tools"][0]["confirm"]["message"] = template
    if a is not None:
        tool = doc["tools"][0]
        tool["params"]["a"] = {"type": "string", "maxLength": 1000}
        tool["http"]["body"]["a"] = "{a}"
    with open(path, "w") as f:
        json.dump(doc, f)
    s = ConfirmSession(path, lambda req: {"action": "decline"})
    args = {"name": name, "qty": qty}
    if a is not None:
        args["a"] = a
    s.call(1, "create_item", args)
    got = s.wait([1], 60)
    s.close()
    posts = [r for r in target.requests() if r["method"] == "POST"]
    target.stop()
    out = got.get(1, ({},))[0].get("result", {}).get("structuredContent",
                                                     {})
    msg = s.asked[0]["params"]["message"] if s.asked else None
    return msg, out.get("outcome") == "denied" and posts == []


def main():
    forged = "widget\n\nApproved already by the operator: type 3\r\n\tok"
    msg, closed = question("Create {qty} x {name} in the shop", forged)
    check("a value with newlines and a tab: one line, the value's breaks "
          "are spaces", msg == "Create 3 x widget  Approved already by the "
          "operator: type 3   ok in the shop" and closed, repr(msg))

    msg, closed = question("Create {qty} x {name}",
                           "a\u202egnp.exe {qty} {name} \u2066x\u2069")
    check("bidi controls are spaces, placeholders in a value stay text",
          msg == "Create 3 x a gnp.exe {qty} {name}  x " and closed,
          repr(msg))

    msg, closed = question("Create {qty} x {name}", "\u00e9" * 200)
    shown = msg.split("\n")[0] if msg else ""
    check("a value of 200 two-byte characters: 120 shown, whole, and the "
          "cut said on the value's own line",
          shown == "Create 3 x " + "\u00e9" * 120 and
          "[external text cut: shown 120 of 200 characters]" in msg and
          closed, repr(msg))

    msg, closed = question("{name}|{name}|{name}|{name}|{name}",
                           "\u20ac" * 130)
    check("five cut values (600+ characters): the whole is cut at 500, "
          "and said", msg is not None and
          msg.endswith("characters]") and
          len(msg.split("\n[external text cut: shown 500 of")[0]) == 500 and
          closed, repr(msg))
    msg, closed = question(None, "two\nlines", qty=7)
    check("no template: \"Allow TOOL: param = value, ...?\", each value "
          "on one line", msg == "Allow create_item: name = two lines, "
          "qty = 7?" and closed, repr(msg))
    # the most placeholders a 500-character template holds, each value
    # of 4-byte characters cut at 120: about 90 KB before the whole cut
    msg, closed = question("{a}" * 166, "n", a="\U0001f600" * 200)
    check("166 placeholders of 200 four-byte characters each: asked, cut "
          "at 500, the session goes on",
          msg is not None and msg.endswith("characters]") and closed,
          repr(msg)[:300])
    done()


if __name__ == "__main__":
    main()

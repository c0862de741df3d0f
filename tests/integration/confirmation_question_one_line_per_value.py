#!/usr/bin/env python3
"""The question a human reads is built only from the template and the
values (docs/design.md section 8.2, policy/confirm_message.h), and a
value cannot take over its layout: a model's value with newlines could
otherwise write lines that read as the template's own ("Approved already:
type 3").  So in a confirmation message a value's line breaks, tabs and
bidi controls are shown escaped (\\u{000A}, \\u{202E}: one line, nothing
hidden, nothing dropped), "{qty}" inside a value stays text, each value
is cut at 120 characters (never inside a UTF-8 sequence), fewer when
many values share the question, so that each still shows, and the whole
at 1000, each cut said with its length; a template of 166 placeholders
with long values is still asked (a fixed 64 KiB bound ended the
session).  Every question is declined: the target sees nothing.  Without
a template the question is "Allow TOOL: param = value, ...?", its values
shown the same way."""
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
          "shown escaped", msg == "Create 3 x widget\\u{000A}\\u{000A}"
          "Approved already by the operator: type 3\\u{000D}\\u{000A}"
          "\\u{0009}ok in the shop" and closed, repr(msg))

    msg, closed = question("Create {qty} x {name}",
                           "a\u202egnp.exe {qty} {name} \u2066x\u2069")
    check("bidi controls shown escaped, placeholders in a value stay text",
          msg == "Create 3 x a\\u{202E}gnp.exe {qty} {name} \\u{2066}x"
          "\\u{2069}" and closed, repr(msg))

    msg, closed = question("Create {qty} x {name}", "\u00e9" * 200)
    check("a value of 200 two-byte characters: 120 shown, whole, and the "
          "cut said with the value's length",
          msg == "Create 3 x " + "\u00e9" * 120 +
          "\u2026 (cut: shown 120 of 200 chars)" and closed, repr(msg))

    msg, closed = question("{name}|{name}|{name}|{name}|{name}",
                           "\u20ac" * 130)
    check("five cut values (600+ characters): each shown to its own cut, "
          "each cut said, the whole not cut",
          msg == "|".join(["\u20ac" * 120 +
                           "\u2026 (cut: shown 120 of 130 chars)"] * 5) and
          closed, repr(msg))
    msg, closed = question(None, "two\nlines", qty=7)
    check("no template: \"Allow TOOL: param = value, ...?\", each value "
          "on one line", msg == "Allow create_item: name = two\\u{000A}"
          "lines, qty = 7?" and closed, repr(msg))
    # the most placeholders a 500-character template holds, each value
    # of 4-byte characters: about 90 KB before the cuts
    msg, closed = question("{a}" * 166, "n", a="\U0001f600" * 200)
    head, _, tail = (msg or "").partition("\u2026 (question cut: shown ")
    said = tail.split(" ")
    check("166 placeholders of 200 four-byte characters each: asked, the "
          "whole cut at 1000 characters and said, the session goes on",
          msg is not None and len(head) <= 1000 and
          said[0] == str(len(head)) and int(said[2]) > 1000 and
          msg.endswith(" chars)") and closed, repr(msg)[-300:])
    done()


if __name__ == "__main__":
    main()

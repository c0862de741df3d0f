#!/usr/bin/env python3
"""What reaches the audit log of real calls (docs/design.md section 6): the
credential and the raw values of shape-audited params appear nowhere in
the file, although the target received them; a mask4 param keeps only
its last four characters; a value param keeps its value; intent and
execution name the tool and target and carry the HTTP status."""
import json
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.audit import read_log, verify  # noqa: E402
from sptest.mcp import item_calls, outcome, responses  # noqa: E402
from sptest.policy import (AWKWARD_CREDENTIAL,  # noqa: E402
                           get_and_put_item_policy)
from sptest.run import finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

IDS = ["quote\"d-$(rm -rf /)-%2e%2e", "line\nbreak-x",
       "\u00e9t\u00e9-\u20ac-\U0001f511", "plain-id-000042"]
CARDS = ["4111\"1111$(x)9876", "\u00e9\u00e9\u00e9\u00e9\u00e9\u20acAB12",
         "abc", "5500-0000-0000-0004"]


def args(i):
    return {"id": IDS[i - 1], "card": CARDS[i - 1], "n": 1000 + i}


def main():
    tmp = tmpdir()
    target = Target(lifetime=3600)
    cfg = get_and_put_item_policy(tmp, target.url)
    status, out, err = finish(start(cfg), item_calls(len(IDS), "put_item",
                                                     args=args))
    target.stop()
    got = responses(out)
    check("session ended with 0", status == 0, err)
    check("every call succeeded",
          all(outcome(got.get(i)) == "ok" for i in range(1, len(IDS) + 1)),
          got)
    reqs = target.requests_as_received()
    paths = [urllib.parse.unquote(r["path"]) for r in reqs]
    check("the target received the raw values",
          all(any(v in p for p in paths) for v in IDS), paths)
    check("the target received the credential",
          all(r["headers"].get("Authorization", "").encode("latin-1")
              == ("Bearer " + AWKWARD_CREDENTIAL).encode() for r in reqs) and
          len(reqs) == len(IDS), reqs[:1])

    path = os.path.join(tmp, "audit.jsonl")
    raw = open(path, "rb").read()
    text = raw.decode("utf-8")
    check("the credential appears nowhere in the file (raw or escaped)",
          AWKWARD_CREDENTIAL.encode() not in raw and "s3cr3t" not in text,
          text)
    leaked = [v for v in IDS if v.encode() in raw or
              json_escaped(v) in text]
    check("no raw value of a shape-audited param is in the file",
          not leaked, leaked)
    leaked = [c for c in CARDS if len(c) > 4 and
              (c.encode() in raw or json_escaped(c) in text)]
    check("no whole value of a mask4 param is in the file", not leaked,
          leaked)

    recs, _ = read_log(path)
    for kind in ("intent", "execution"):
        rs = sorted((r for r in recs if r["kind"] == kind),
                    key=lambda r: r["args"]["n"])
        check("%d %s records" % (len(IDS), kind), len(rs) == len(IDS), rs)
        want = [{"id": "string(%d)" % len(IDS[i]),
                 "card": "\u2026" + CARDS[i][-4:] if len(CARDS[i]) > 4
                 else "\u2026",
                 "n": 1001 + i} for i in range(len(IDS))]
        check("%s: shape of id in code points, last four of card, value "
              "of n" % kind, [r["args"] for r in rs] == want,
              [r["args"] for r in rs])
        check("%s: tool and target from the catalog" % kind,
              all(r["tool"] == "put_item" and r["target"] == "api"
                  for r in rs), rs)
    ex = [r for r in recs if r["kind"] == "execution"]
    check("executions carry outcome ok, HTTP status 200 and a duration",
          all(r["outcome"] == "ok" and r["http_status"] == 200 and
              r["duration_us"] > 0 for r in ex), ex)
    status, err = verify(path)
    check("verify passes", status == 0, err)
    done()


def json_escaped(v):
    return json.dumps(v, ensure_ascii=False)[1:-1]


main()

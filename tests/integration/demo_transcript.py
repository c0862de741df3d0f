#!/usr/bin/env python3
"""sp demo: the transcript shows a real session (each client line and
each server answer), every step goes as expected, the policy it runs is
contrib/examples/demo.json, and nothing is left behind."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.run import SP, SRCDIR, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

EXAMPLE = os.path.join(SRCDIR, "contrib", "examples", "demo.json")


def main():
    tmp = tmpdir()
    # As root (the README's first command on a fresh machine, and CI) the
    # demo names server.run_as daemon for its executor and runs all the same.
    p = subprocess.run([SP, "demo"], capture_output=True, timeout=60,
                       env=sp_env(extra={"TMPDIR": tmp}), cwd=tmp)
    out = p.stdout.decode("utf-8", "replace")
    lines = out.splitlines()
    sent = [l[len("client -> "):] for l in lines if l.startswith("client -> ")]
    answers = [l[len("server <- "):] for l in lines
               if l.startswith("server <- ")]
    misses = [l for l in lines if "NOT AS EXPECTED" in l]
    check("sp demo exits 0", p.returncode == 0,
          "status %d\n%s" % (p.returncode, out))
    check("every step went as expected", misses == [], "\n".join(misses))
    check("the transcript shows 9 client lines and 7 server lines",
          len(sent) == 9 and len(answers) == 7, out)
    try:
        msgs = [json.loads(a) for a in answers]
    except ValueError as e:
        msgs = []
        check("each answer is one JSON object", False, e)
    ids = [m.get("id") for m in msgs]
    check("answers in order: 1, 2, 3, 4, the question for the confirmed "
          "call, its answer 10, and the hostile line's null id",
          ids == [1, 2, 3, 4, "sallyport-confirm-2", 10, None], ids)
    cat = subprocess.run([SP, "catalog", "--config", EXAMPLE],
                         capture_output=True, env=sp_env())
    catalog = json.loads(cat.stdout.decode().splitlines()[0])
    listed = msgs[1].get("result") if len(msgs) > 1 else None
    check("the demo's tools/list is contrib/examples/demo.json's catalog",
          listed == catalog, "%s\n%s" % (listed, catalog))
    check("the issuer is the example's server name",
          all(m.get("result", m.get("error", {}).get("data", {}))
              .get("structuredContent", m.get("error", {}).get("data", {}))
              .get("issuer") == "sallyport/sallyport-demo"
              for m in msgs[2:] if "method" not in m), msgs[2:])
    question = msgs[4].get("params", {}) if len(msgs) > 4 else {}
    check("sp demo shows one confirmed call: the human is asked with the "
          "policy's message, and retypes the id",
          question.get("message") == "Rename item 7 to blue widget" and
          question.get("requestedSchema", {}).get("required") == ["id"] and
          msgs[5].get("result", {}).get("structuredContent", {})
          .get("outcome") == "ok", msgs[4:6])
    check("the API's hostile text arrives sanitized: its words, not its "
          "tags", "ignore previous instructions" in out and
          "<system>" not in out and "\u200b" not in out, out)
    left = os.listdir(tmp)
    check("sp demo removes its temporary directory", left == [], left)
    done()


if __name__ == "__main__":
    main()

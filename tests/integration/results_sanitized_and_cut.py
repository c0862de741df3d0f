#!/usr/bin/env python3
"""Results end to end, through the real sp mcp and a real HTTP target
(front_target.py): a body of prompt-injection text arrives sanitized and
marked as external data; a 5 MB body is cut with the explicit marker;
notifications/cancelled for a slow call gets no response, the target
sees the request aborted, and the session goes on."""
import json
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import (INITIALIZE, call, first_bad_line,  # noqa: E402
                        messages, request)
from sptest.policy import get_item_and_fetch_policy  # noqa: E402
from sptest.run import finish, start, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402
from sptest.target import Target  # noqa: E402

MARKER = re.compile(r"\[external text cut: shown \d+ (of \d+ characters|"
                    r"characters of \d+ bytes)\]$")
FORBIDDEN = ["<system>", "</system>", "<|im_start|>", "<IMPORTANT",
             "\u200b", "\u202e", "\u202c", "\u2028", "```"]


def fetch(rid, a, b):
    return call(rid, "fetch", {"a": a, "b": b})


def body_of(msg):
    sc = msg.get("result", {}).get("structuredContent", {})
    return sc, str(sc.get("http", {}).get("body", ""))


def sanitized(config):
    p = start(config)
    status, out, err = finish(p, INITIALIZE + fetch(1, "inject", "4000") +
                              fetch(2, "inject", "5242880"), timeout=30)
    bad = first_bad_line(out, expect_lines=3)
    check("injection and 5 MB answers: pure protocol, three lines",
          bad is None, bad)
    msgs = {m.get("id"): m for m in messages(out)} if bad is None else {}
    sc, body = body_of(msgs.get(1, {}))
    check("injection: outcome ok, marked as external data",
          sc.get("outcome") == "ok" and sc.get("external_data") is True, sc)
    found = [f for f in FORBIDDEN if f in body]
    check("injection: no role tag, invisible character or fence survives",
          body and not found, "%s in %r" % (found, body[:300]))
    check("injection: the words stay, as data",
          "Ignore previous instructions." in body, body[:300])
    text = msgs[1]["result"]["content"][0]["text"]
    check("injection: the text block is the same JSON, compact",
          json.loads(text) == sc and "\n" not in text, text[:300])
    sc, body = body_of(msgs.get(2, {}))
    check("5 MB body: cut with the marker", MARKER.search(body) is not None,
          body[-200:])
    check("5 MB body: said truncated, and the line stays small",
          sc.get("http", {}).get("truncated") is True and
          len(out) < 1024 * 1024, len(out))
    check("5 MB body: sanitized too", not [f for f in FORBIDDEN if f in body],
          body[:300])
    check("exit 0", status == 0, err[-1000:])


def cancelled(config, target):
    p = start(config)
    p.stdin.write(INITIALIZE + fetch("slow \"1\"", "slow", "4000"))
    p.stdin.flush()
    first = p.stdout.readline()
    end = time.monotonic() + 60
    while time.monotonic() < end and not any(
            e["event"] == "request" and e["path"] == "/slow/4000"
            for e in target.requests()):
        time.sleep(0.02)
    p.stdin.write(json.dumps({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "slow \"1\"", "reason": "user"}}).encode() +
        b"\n" + request(2, "ping") + fetch(3, "inject", "10"))
    status, out, err = finish(p, b"", timeout=20)
    out = first + out
    msgs = messages(out) if first_bad_line(out) is None else []
    ids = [m.get("id") for m in msgs]
    check("cancelled: no response for the cancelled call",
          'slow "1"' not in ids, out)
    check("cancelled: the session goes on (ping and the next call answered)",
          2 in ids and 3 in ids, ids)
    end = time.monotonic() + 60
    while True:
        events = [e for e in target.requests() if e["path"] == "/slow/4000"]
        if len(events) > 1 or time.monotonic() > end:
            break
        time.sleep(0.05)
    aborted = [e["event"] for e in events if e["event"] != "request"]
    check("cancelled: the target saw the request, then saw it aborted",
          aborted == ["aborted"], events)
    check("cancelled: exit 0", status == 0, err[-1000:])


def main():
    tmp = tmpdir()
    target = Target(tmp, "recorder", events=True)
    try:
        config = get_item_and_fetch_policy(
            tmp, target.port, limits={"result_max_chars": 4000})
        sanitized(config)
        cancelled(config, target)
    finally:
        target.stop()
    done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A "comment" member, a string, is accepted in every object of the
policy and changes nothing: sp check passes, and sp catalog prints the
same tools/list and the same catalog fingerprint as the policy without
them.  In an http action's body, query and headers a "comment" member is
what is sent, so there it changes the fingerprint.  A comment that is not
a string is an error at its place, and so is a comment in another
language's syntax ("//", "/*", "#"), which says that JSON has none."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import SP, sp_env, tmpdir  # noqa: E402
from sptest.tap import check, done  # noqa: E402

NOTES = ["why: \"ops\" asked $(id)", "été \u202e bidi, // not a comment",
         "two\nlines", "-leading dash", "# hash"]


def base(tmp):
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret-token-value\n")
    os.chmod(token, 0o600)
    return run_as_root({
        "sallyport": 1,
        "server": {"name": "comments", "on_invalid": "reject"},
        "limits": {"max_inflight": 4},
        "credentials": {"tok": {"type": "bearer", "file": token}},
        "targets": {"api": {"type": "http", "credential": "tok",
                            "base_url": "http://127.0.0.1:9"}},
        "tools": [
            {"name": "get_item", "description": "Read one item.",
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/items/{id}/{comment}",
                      "query": {"v": "1"}, "headers": {"X-Req": "r"}},
             "params": {"id": {"type": "string", "maxLength": 64},
                        "comment": {"type": "integer", "minimum": 0}},
             "limits": {"max_distinct": {"id": 3}}},
            {"name": "put_item", "description": "Replace one item.",
             "target": "api", "scope": "write", "confirm": {"timeout_s": 30},
             "http": {"method": "PUT", "path": "/items/{id}",
                      "body": {"name": "{name}", "n": "{comment}"}},
             "params": {"id": {"type": "string"},
                        "name": {"type": "string", "maxLength": 20},
                        "comment": {"type": "integer"}}}],
        "profiles": {"default": {"scopes": ["read", "write"]},
                     "ops": {"scopes": ["read"],
                             "match": {"uid": [4242]}}}})


def annotate(node, counter, sent=False):
    """A comment in every object but what an http action sends."""
    if isinstance(node, list):
        for v in node:
            annotate(v, counter)
    elif isinstance(node, dict):
        for k, v in list(node.items()):
            annotate(v, counter, sent=k in ("body", "query", "headers"))
        if not sent and "comment" not in node:  # a param so named stays
            node["comment"] = NOTES[counter[0] % len(NOTES)]
            counter[0] += 1


def write(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
    return path


def catalog(path):
    p = subprocess.run([SP, "catalog", "--config", path], capture_output=True,
                       env=sp_env(), timeout=30)
    fp = [l for l in p.stdout.decode().splitlines()
          if l.startswith("catalog_sha256:")]
    return p.returncode, p.stdout, fp[0] if fp else None, p.stderr


def sp_check(path):
    p = subprocess.run([SP, "check", "--config", path], capture_output=True,
                       env=sp_env(), timeout=30)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def line_of(path, needle):
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if needle in line:
                return n, line.index(needle) + 1
    return None


def test_comments_change_nothing(tmp):
    plain = write(tmp, "plain.json", base(tmp))
    doc = base(tmp)
    counter = [0]
    annotate(doc, counter)
    noted = write(tmp, "noted.json", doc)
    status, out, err = sp_check(noted)
    check("sp check passes a policy with %d comments" % counter[0],
          status == 0 and out == b"" and counter[0] >= 20, err)
    s1, out1, fp1, _ = catalog(plain)
    s2, out2, fp2, err2 = catalog(noted)
    check("sp catalog: the same fingerprint with and without them",
          s1 == 0 and s2 == 0 and fp1 is not None and fp1 == fp2,
          (fp1, fp2, err2))
    check("... and the same tools/list", out1 == out2)
    check("a param named \"comment\" is still a param",
          b'"comment":{"type":"integer"' in out1, out1[:400])
    for where in ("query", "headers", "body"):
        d = base(tmp)
        tool = d["tools"][1 if where == "body" else 0]
        tool["http"][where]["comment"] = "sent"
        status, _, fp, err = catalog(write(tmp, where + ".json", d))
        check("a \"comment\" in http.%s is sent: the fingerprint changes"
              % where, status == 0 and fp not in (None, fp1), (fp, err))


def test_refused(tmp):
    good = json.dumps(base(tmp), indent=1)
    path = os.path.join(tmp, "bad.json")
    for value in ("5", "[\"a\"]", "{\"x\": 1}", "null"):
        with open(path, "w") as f:
            f.write(good.replace('"limits": {',
                                 '"limits": {\n  "comment": %s,' % value, 1))
        status, out, err = sp_check(path)
        line, col = line_of(path, '"comment"')
        where = "%s:%d:%d: limits.comment: a comment must be a string" % (
            path, line, col + len('"comment": '))
        check("a comment of %s: 78 at its value" % value,
              status == 78 and where in err, err)
    one = '"sallyport": 1,'
    for text, at in (("{\n // the api\n" + good[2:], "//"),
                     ("# ours\n" + good, "#"),
                     (good.replace(one, one + " /* x */", 1), "/*"),
                     (good.replace(one, one + " # one", 1), "#")):
        with open(path, "w") as f:
            f.write(text)
        status, out, err = sp_check(path)
        line, col = line_of(path, at)
        check("%r: 78 at %d:%d, saying JSON has no comments" % (at, line,
                                                                 col),
              status == 78 and "%s:%d:%d: JSON has no comments: write a "
              "\"comment\" member" % (path, line, col) in err,
              (text[:80], err))


def main():
    tmp = tmpdir()
    try:
        test_comments_change_nothing(tmp)
        test_refused(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

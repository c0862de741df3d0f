"""One policy builder: a document from its parts, written where sp
reads it.  Parts are plain dicts, so a test changes any key before
writing."""
import json
import os

from sptest.target import shared_target

# As root, sp mcp drops the executor to server.run_as, which must be a
# user of its own (the frontend is nobody): the tests' policies name this
# one then (child/child.h).
ROOT_RUN_AS = "daemon"


def run_as_root(doc):
    """doc with server.run_as set to ROOT_RUN_AS when the tests run as
    root and the policy names none; returns doc."""
    if os.geteuid() == 0:
        doc.setdefault("server", {}).setdefault("run_as", ROOT_RUN_AS)
    return doc


def write_secret(tmp, name, data):
    """data (bytes) in tmp/name, mode 0600; returns the path."""
    path = os.path.join(tmp, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, data)
    os.close(fd)
    return path


def write_policy(tmp, doc, name="policy.json"):
    """doc (run_as_root applied) in tmp/name; returns the path."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def http_target(base_url, credential=None, **keys):
    """A targets entry of type http."""
    t = {"type": "http", "base_url": base_url}
    if credential is not None:
        t["credential"] = credential
    t.update(keys)
    return t


def http_tool(name, path, params, method="GET", target="api",
              scope="read", description="Read one item.", **keys):
    """A tools entry whose call is one HTTP request."""
    t = {"name": name, "description": description, "target": target,
         "scope": scope, "http": {"method": method, "path": path},
         "params": params}
    t.update(keys)
    return t


def get_item(target="api"):
    """get_item: GET /items/{id}, id a string of at most 64 characters."""
    return http_tool("get_item", "/items/{id}",
                     {"id": {"type": "string", "maxLength": 64}},
                     target=target)


def document(name, targets, tools, limits=None, audit_path=None,
             credentials=None, scopes=("read",), **sections):
    """A sallyport 1 document: server name, limits, audit.path, the
    credentials, targets and tools given, one default profile with
    scopes; sections are added as they are."""
    doc = {"sallyport": 1, "server": {"name": name}}
    if limits is not None:
        doc["limits"] = dict(limits)
    if audit_path is not None:
        doc["audit"] = {"path": audit_path}
    if credentials is not None:
        doc["credentials"] = credentials
    doc["targets"] = targets
    doc["tools"] = list(tools)
    doc["profiles"] = {"default": {"scopes": list(scopes)}}
    doc.update(sections)
    return doc


def get_item_policy(tmp, name, base_url, timeout_ms, audit=False,
                    **sections):
    """get_item alone on the http target api at base_url, without
    credential; limits.call_timeout_ms timeout_ms; with audit,
    tmp/audit.jsonl.  sections replace the document's own (targets,
    limits, server...).  Written to tmp/policy.json; returns its path."""
    doc = document(name, {"api": http_target(base_url)}, [get_item()],
                   limits={"call_timeout_ms": timeout_ms},
                   audit_path=os.path.join(tmp, "audit.jsonl")
                   if audit else None)
    doc.update(sections)
    return write_policy(tmp, doc)


def shared_target_policy(tmp, audit=True, **sections):
    """get_item_policy named proc-test with a 2000 ms call timeout,
    audited unless told not to.  Unless sections name their own targets,
    the tool reaches shared_target(), which is up: a test counts there
    what ran."""
    url = None if sections.get("targets") else shared_target().url
    return get_item_policy(tmp, "proc-test", url, 2000, audit, **sections)


def get_item_and_fetch_policy(tmp, port, limits=None, server=None):
    """get_item (/items/{id}) and fetch (/{a}/{b}) on the target at port,
    with a bearer credential; limits.call_timeout_ms 5000 unless limits
    says otherwise; server: keys added to the server section."""
    token = write_secret(tmp, "api.token", b"front-test-secret-7f3a\n")
    doc = document(
        "front-test",
        {"api": http_target("http://127.0.0.1:%d" % port, "api-token")},
        [get_item(),
         http_tool("fetch", "/{a}/{b}",
                   {"a": {"type": "string", "maxLength": 32},
                    "b": {"type": "string", "maxLength": 32}},
                   description="Fetch a path of the target.")],
        limits=dict({"call_timeout_ms": 5000}, **(limits or {})),
        audit_path=os.path.join(tmp, "audit.jsonl"),
        credentials={"api-token": {"type": "bearer", "file": token}})
    doc["server"].update(server or {})
    return write_policy(tmp, doc)


# The bearer credential of get_and_put_item_policy: quotes, a shell
# substitution, percent escapes, non-ASCII letters, so that a leak shows
# whichever way it was escaped.
AWKWARD_CREDENTIAL = "tok-\"s3cr3t\"-$(id)-%2e%2e-\u00e9\u20ac-0123456789"


def get_and_put_item_policy(tmp, base_url, audit=True, key_file=None):
    """Two tools on one HTTP target (loopback allowed) with the bearer
    credential AWKWARD_CREDENTIAL: get_item (read-only) and put_item
    (mutating), both /items/{id}/{card}/{n} with a shape-audited id, a
    mask4 card and a value-audited count.  With audit, tmp/audit.jsonl,
    keyed with key_file when given."""
    cred = write_secret(tmp, "token", AWKWARD_CREDENTIAL.encode())
    params = {"id": {"type": "string", "maxLength": 200},
              "card": {"type": "string", "maxLength": 40, "audit": "mask4"},
              "n": {"type": "integer", "audit": "value"}}
    path = "/items/{id}/{card}/{n}"
    doc = document(
        "audit-test",
        {"api": http_target(base_url, "tok", allow_loopback=True)},
        [http_tool("get_item", path, params),
         http_tool("put_item", path, params, "PUT", scope="write",
                   description="Replace one item.", mutating=True)],
        limits={"call_timeout_ms": 5000, "calls_per_session": 100000},
        audit_path=os.path.join(tmp, "audit.jsonl") if audit else None,
        credentials={"tok": {"type": "bearer", "file": cred}},
        scopes=("read", "write"))
    if audit and key_file:
        doc["audit"]["key_file"] = key_file
    return write_policy(tmp, doc)


def confirmed_create_item_policy(tmp, port, timeout_s=60, retype="qty"):
    """create_item (POST /items, mutating, confirmed within timeout_s,
    the user retyping retype unless it is None) and get_item (read, no
    confirmation) on the target at port, with a bearer credential and
    tmp/audit.jsonl; returns the policy's path."""
    token = write_secret(tmp, "api.token", b"confirm-test-secret-51c2\n")
    confirm = {"message": "Create {qty} x {name} in the shop",
               "timeout_s": timeout_s}
    if retype is not None:
        confirm["retype"] = retype
    doc = document(
        "confirm-test",
        {"api": http_target("http://127.0.0.1:%d" % port, "api-token")},
        [{"name": "create_item", "description": "Create an item.",
          "target": "api", "scope": "write", "mutating": True,
          "confirm": confirm,
          "http": {"method": "POST", "path": "/items",
                   "body": {"name": "{name}", "qty": "{qty}"}},
          "params": {"name": {"type": "string", "maxLength": 80},
                     "qty": {"type": "integer", "minimum": 1,
                             "maximum": 100}}},
         {"name": "get_item", "description": "Read one item.",
          "target": "api", "scope": "read",
          "http": {"method": "GET", "path": "/items/{id}"},
          "params": {"id": {"type": "string", "maxLength": 64}}}],
        limits={"call_timeout_ms": 10000},
        audit_path=os.path.join(tmp, "audit.jsonl"),
        credentials={"api-token": {"type": "bearer", "file": token}},
        scopes=("read", "write"))
    return write_policy(tmp, doc)

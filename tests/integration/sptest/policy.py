"""One policy builder: a document from its parts, written where sp
reads it.  Parts are plain dicts, so a test changes any key before
writing."""
import json
import os

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

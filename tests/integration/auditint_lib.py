"""Helpers for the audit tests of `sp mcp`: a policy whose tools reach a
local HTTP target, sessions of many calls, the log read back, and
`sp audit verify`."""
import http.server
import json
import os
import subprocess
import threading

from proc_lib import INITIALIZE, SP, request, run_as_root

CREDENTIAL = "tok-\"s3cr3t\"-$(id)-%2e%2e-\u00e9\u20ac-0123456789"


def policy(tmp, base_url, audit=True, key_file=None):
    """Two tools on one HTTP target with a bearer credential: get_item
    (read-only) and put_item (mutating), each with a shape-audited id, a
    mask4 card and a value-audited count."""
    cred = os.path.join(tmp, "token")
    with open(cred, "w") as f:
        f.write(CREDENTIAL)
    os.chmod(cred, 0o600)
    params = {"id": {"type": "string", "maxLength": 200},
              "card": {"type": "string", "maxLength": 40, "audit": "mask4"},
              "n": {"type": "integer", "audit": "value"}}
    tools = [{"name": "get_item", "description": "Read one item.",
              "target": "api", "scope": "read",
              "http": {"method": "GET", "path": "/items/{id}/{card}/{n}"},
              "params": params},
             {"name": "put_item", "description": "Replace one item.",
              "target": "api", "scope": "write", "mutating": True,
              "http": {"method": "PUT", "path": "/items/{id}/{card}/{n}"},
              "params": params}]
    doc = {"sallyport": 1, "server": {"name": "audit-test"},
           "limits": {"call_timeout_ms": 5000,
                      "calls_per_session": 100000},
           "credentials": {"tok": {"type": "bearer", "file": cred}},
           "targets": {"api": {"type": "http", "base_url": base_url,
                               "credential": "tok",
                               "allow_loopback": True}},
           "tools": tools,
           "profiles": {"default": {"scopes": ["read", "write"]}}}
    if audit:
        doc["audit"] = {"path": os.path.join(tmp, "audit.jsonl")}
        if key_file:
            doc["audit"]["key_file"] = key_file
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as f:
        json.dump(run_as_root(doc), f)
    return path


def calls(n, tool="get_item", first_id=1, args=None):
    """INITIALIZE then n tools/call requests, ids first_id.."""
    data = INITIALIZE
    for i in range(first_id, first_id + n):
        a = args(i) if args else {"id": "item-%d" % i,
                                  "card": "4111-0000-%04d" % i, "n": i}
        data += request(i, "tools/call", {"name": tool, "arguments": a})
    return data


def responses(out):
    """{id: result or error} of the JSON-RPC lines in out."""
    got = {}
    for line in out.split(b"\n"):
        if line.strip():
            msg = json.loads(line)
            got[msg.get("id")] = msg.get("result", msg.get("error"))
    return got


def outcome(result):
    return (result or {}).get("structuredContent", {}).get("outcome")


def read_log(path):
    """The complete lines as records; a torn last line is left out."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    return [json.loads(l) for l in lines[:-1]], lines[-1]


def verify(path, key=None):
    """(exit status, verdict line on stdout + diagnostics on stderr) of
    sp audit verify; path may be a list of files, oldest first."""
    paths = path if isinstance(path, list) else [path]
    argv = [SP, "audit", "verify"] + (["--key", key] if key else []) + paths
    p = subprocess.run(argv, capture_output=True, timeout=30)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def drive(p, n, tool="get_item", window=8, first_id=1, args=None):
    """Runs n calls on the running session p, at most window in flight
    (under limits.max_inflight), then closes its input.  Returns
    {id: result} of what came back."""
    reqs = calls(n, tool, first_id, args).split(b"\n")[:-1]
    p.stdin.write(reqs[0] + b"\n")		# initialize
    p.stdin.flush()
    got, sent = {}, 1
    p.stdout.readline()
    while sent <= n and sent <= window:
        p.stdin.write(reqs[sent] + b"\n")
        sent += 1
    p.stdin.flush()
    while len(got) < n:
        line = p.stdout.readline()
        if not line:
            break
        msg = json.loads(line)
        got[msg.get("id")] = msg.get("result", msg.get("error"))
        if sent <= n:
            p.stdin.write(reqs[sent] + b"\n")
            p.stdin.flush()
            sent += 1
    p.stdin.close()
    return got


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        srv = self.server
        entry = {"method": self.command, "path": self.path,
                 "headers": dict(self.headers.items()), "body": body}
        if srv.audit_path is not None:
            # What the audit file holds at the moment the request arrives.
            try:
                entry["audit"] = read_log(srv.audit_path)[0]
            except OSError:
                entry["audit"] = []
        with srv.lock:
            srv.requests.append(entry)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")

    do_GET = do_PUT = do_POST = do_DELETE = handle_any


class Target:
    """A local HTTP target on 127.0.0.1 (free port) that keeps every
    request; with audit_path, also the audit records present when each
    request arrived."""

    def __init__(self, audit_path=None):
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                   _Handler)
        self.srv.daemon_threads = True
        self.srv.request_queue_size = 128
        self.srv.audit_path = audit_path
        self.srv.lock = threading.Lock()
        self.srv.requests = []
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.thread = threading.Thread(target=self.srv.serve_forever,
                                       daemon=True)
        self.thread.start()

    @property
    def requests(self):
        with self.srv.lock:
            return list(self.srv.requests)

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()

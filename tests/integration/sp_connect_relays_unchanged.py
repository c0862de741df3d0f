#!/usr/bin/env python3
"""sp connect SOCKET relays stdin/stdout to a unix socket unchanged.

The socket is served here as systemd's Accept=yes would: each connection
runs the real `sp mcp` with the connection as its stdin and stdout, so its
profile comes from the connecting process's uid (SO_PEERCRED).  Other
servers made here echo bytes, or hang up first, to show that no byte is
altered, that EOF on stdin reaches the server as a half-close while its
answer still comes back, and that the relay ends when the server does."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request  # noqa: E402
from sptest.policy import shared_target_policy  # noqa: E402
from sptest.run import SP, sp_env  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402

TIMEOUT = 10
NOBODY = 65534
TOOLS = [
    {"name": "get_item", "description": "Read one item.", "target": "api",
     "scope": "read", "http": {"method": "GET", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
    {"name": "put_item", "description": "Replace one item.", "target": "api",
     "scope": "write", "http": {"method": "PUT", "path": "/items/{id}"},
     "params": {"id": {"type": "string", "maxLength": 64}}},
]
# An id the server must echo byte for byte: quotes, a shell substitution,
# an encoded dot-dot and text outside ASCII.
ODD_ID = 'id "quoted" $(rm -rf /) %2e%2e/ é日本語 \U0001F600'


class Server:
    """A unix socket server; each connection goes to handler(conn) on its
    own thread.  stop() closes the socket and joins every thread."""

    def __init__(self, path, handler):
        self.path = path
        self.handler = handler
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o777)
        self.sock.listen(4)
        self.sock.settimeout(0.1)
        self.stopping = False
        self.threads = []
        self.accepter = threading.Thread(target=self.accept_loop)
        self.accepter.start()

    def accept_loop(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            conn.settimeout(TIMEOUT)
            t = threading.Thread(target=self.serve, args=(conn,))
            t.start()
            self.threads.append(t)

    def serve(self, conn):
        """A client gone early is the client's test to fail, not ours."""
        try:
            self.handler(conn)
        except OSError as e:
            print("# server: %s" % e)
        finally:
            conn.close()

    def stop(self):
        self.stopping = True
        self.accepter.join()
        for t in self.threads:
            t.join(TIMEOUT)
        self.sock.close()
        os.unlink(self.path)


class McpHandler:
    """Runs `sp mcp` on each connection, as sallyport@.service does."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.statuses = []

    def __call__(self, conn):
        p = subprocess.Popen([SP, "mcp", "--config", self.cfg],
                             stdin=conn.fileno(), stdout=conn.fileno(),
                             stderr=subprocess.DEVNULL, env=sp_env())
        conn.close()
        try:
            self.statuses.append(p.wait(TIMEOUT))
        except subprocess.TimeoutExpired:
            p.kill()
            self.statuses.append(p.wait())


def echo_then_trailer(conn):
    """Echoes everything; after the client's EOF, says how much came."""
    got = 0
    while True:
        data = conn.recv(65536)
        if not data:
            break
        got += len(data)
        conn.sendall(data)
    conn.sendall(b"server saw EOF after %d bytes\n" % got)
    conn.close()


def hello_and_hang_up(conn):
    """Speaks first and closes without reading anything."""
    conn.sendall(b"hello \xc3\xa9\n")
    conn.close()


def connect_env():
    """sp connect runs no sandbox, so unlike sp mcp it keeps the caller's
    sanitizer options: under ASan its leaks are checked too."""
    e = dict(os.environ)
    e.pop("SP_TEST_HOOK", None)
    return e


def connect(path, data, user=None, stdin=None):
    """sp connect with data on stdin; (status, stdout, stderr)."""
    kw = {}
    if user is not None:
        kw = {"user": user, "group": user, "extra_groups": []}
    p = subprocess.Popen([SP, "connect", path], env=connect_env(),
                         stdin=stdin if stdin is not None else
                         subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, **kw)
    try:
        out, err = p.communicate(None if stdin is not None else data,
                                 timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err.decode("utf-8", "replace")
    return p.returncode, out, err.decode("utf-8", "replace")


def direct(cfg, data):
    """What `sp mcp` itself writes for data over a socketpair."""
    ours, theirs = socket.socketpair()
    p = subprocess.Popen([SP, "mcp", "--config", cfg], stdin=theirs,
                         stdout=theirs, stderr=subprocess.DEVNULL,
                         env=sp_env())
    theirs.close()
    ours.sendall(data)
    ours.shutdown(socket.SHUT_WR)
    out = b""
    while True:
        chunk = ours.recv(65536)
        if not chunk:
            break
        out += chunk
    ours.close()
    p.wait(TIMEOUT)
    return out


def tool_names(out):
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("id") == 1:
            return [t["name"] for t in msg["result"]["tools"]]
    return None


def last_session_start(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        recs = [json.loads(line) for line in f]
    return [r for r in recs if r["kind"] == "session-start"][-1]


def test_mcp(tmp):
    uid = os.getuid()
    cfg = shared_target_policy(tmp, tools=TOOLS, profiles={
        "default": {"scopes": ["read"]},
        "ops": {"scopes": ["read", "write"], "match": {"uid": [uid]}},
    })
    path = os.path.join(tmp, "mcp.sock")
    handler = McpHandler(cfg)
    server = Server(path, handler)
    # The ping goes as raw UTF-8, not \u escapes.
    ping = json.dumps({"jsonrpc": "2.0", "id": ODD_ID, "method": "ping"},
                      ensure_ascii=False).encode() + b"\n"
    msgs = INITIALIZE + request(1, "tools/list") + ping
    try:
        status, out, err = connect(path, msgs)
        if os.getuid() == 0:
            n_status, n_out, n_err = connect(path, msgs, user=NOBODY)
            n_rec = last_session_start(tmp)
    finally:
        server.stop()
    lines = out.splitlines()
    check("sp connect ends 0 with sp mcp's three answers, nothing else",
          status == 0 and len(lines) == 3 and out.endswith(b"\n") and
          err == "", (status, out[:300], err))
    check("the answers are byte for byte what sp mcp writes directly",
          out == direct(cfg, msgs), out[:300])
    check("the odd string id comes back unaltered",
          len(lines) == 3 and json.loads(lines[2]).get("id") == ODD_ID and
          json.dumps(ODD_ID, ensure_ascii=False).encode() in lines[2], lines[-1:])
    check("the server's sp mcp ended cleanly (0) on the half-close",
          handler.statuses[:1] == [0], handler.statuses)
    check("the caller's uid matched the 'ops' profile: both tools",
          tool_names(out) == ["get_item", "put_item"], out[:300])
    if os.getuid() != 0:
        skip("a peer of another uid nobody matches gets no tools",
             "not root, cannot connect as another uid")
        return
    # docs/design.md section 7: a socket peer that no profile's match fits gets
    # no tools; "default" is never a fallback for a socket peer.
    check("uid %d matches no profile: no tools, not 'default'" % NOBODY,
          n_status == 0 and tool_names(n_out) == [],
          (n_status, n_out[:300], n_err))
    check("the server recorded the relay's peer credentials",
          n_rec.get("profile") == "" and
          n_rec.get("peer") == "uid %d gid %d" % (NOBODY, NOBODY), n_rec)


def test_bytes(tmp):
    line = ('{"q": "say \\"hi\\" $(id) `x` %2e%2e/ é 日本 \U0001F600", '
            '"pad": "').encode() + b"\xe2\x82\xac" * 350000 + b'"}\n'
    every_byte = bytes(range(256)) * 3
    payload = line + every_byte + b"no newline at the end"
    path = os.path.join(tmp, "echo.sock")
    server = Server(path, echo_then_trailer)
    try:
        status, out, err = connect(path, payload)
    finally:
        server.stop()
    trailer = b"server saw EOF after %d bytes\n" % len(payload)
    check("a 1 MB line and every byte value pass unaltered both ways",
          status == 0 and len(line) > 1 << 20 and
          out[:len(payload)] == payload, (status, len(out), err))
    check("EOF on stdin reached the server as a half-close; its answer "
          "after that still came back", out[len(payload):] == trailer,
          out[len(payload):][:200])


def test_server_ends_first(tmp):
    path = os.path.join(tmp, "hangup.sock")
    server = Server(path, hello_and_hang_up)
    r, w = os.pipe()
    try:
        # stdin stays open (w is never written to or closed until after):
        # only the server's EOF can end the relay.
        status, out, err = connect(path, None, stdin=r)
    finally:
        os.close(w)
        os.close(r)
        server.stop()
    check("the server hanging up ends the relay (0) after flushing stdout",
          status == 0 and out == b"hello \xc3\xa9\n", (status, out, err))
    server = Server(path, hello_and_hang_up)
    try:
        status, out, err = connect(path, b"x" * (4 << 20))
    finally:
        server.stop()
    check("a server that hangs up unread: input dropped, its answer "
          "still delivered, exit 0", status == 0 and
          out == b"hello \xc3\xa9\n", (status, out, err))


def test_closed_stdio(tmp):
    path = os.path.join(tmp, "closed.sock")
    server = Server(path, echo_then_trailer)
    try:
        p = subprocess.run([SP, "connect", path], env=connect_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=lambda: os.close(0), timeout=TIMEOUT)
    finally:
        server.stop()
    err = p.stderr.decode("utf-8", "replace")
    # Else the socket would take fd 0 and the relay would talk to itself.
    check("stdin not open: exit 74 with one line, not a spin",
          p.returncode == 74 and len(err.splitlines()) == 1 and
          "stdin" in err, (p.returncode, err))


def test_unavailable(tmp):
    missing = os.path.join(tmp, 'no "such" $(dir) é', "mcp.sock")
    status, out, err = connect(missing, b"{}\n")
    lines = err.splitlines()
    check("a missing socket: exit 69 and one stderr line naming the path "
          "and the errno", status == 69 and out == b"" and len(lines) == 1
          and missing in lines[0] and
          os.strerror(2) in lines[0], (status, err))
    plain = os.path.join(tmp, "plain-file")
    open(plain, "w").close()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead = os.path.join(tmp, "dead.sock")
    s.bind(dead)
    s.close()  # bound, never listening: refused
    status, out, err = connect(dead, b"{}\n")
    check("a socket nobody listens on: exit 69, 'Connection refused'",
          status == 69 and out == b"" and len(err.splitlines()) == 1 and
          os.strerror(111) in err, (status, err))
    status, out, err = connect(os.path.join(tmp, "x" * 120), b"")
    check("a path too long for sun_path is a usage error (64)",
          status == 64 and len(err.splitlines()) == 1, (status, err))
    p = subprocess.run([SP, "connect"], capture_output=True,
                       env=connect_env(), timeout=TIMEOUT)
    check("no socket argument: usage (64)",
          p.returncode == 64 and b"sp connect SOCKET" in p.stderr,
          p.stderr)


def main():
    tmp = tempfile.mkdtemp(prefix="sp-ops-")
    os.chmod(tmp, 0o755)  # uid 65534 must reach the socket
    try:
        test_mcp(tmp)
        test_bytes(tmp)
        test_server_ends_first(tmp)
        test_closed_stdio(tmp)
        test_unavailable(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

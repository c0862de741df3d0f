#!/usr/bin/env python3
"""Shared hosts, the client's and the operator's side: `sp connect` never
puts a byte of its own into either stream it relays (stdout to the
client, the socket to the server), however its stderr is set up; and the
root variant of the systemd service (contrib/systemd/sallyport-root.conf)
grants what the sandbox needs, so a session under it actually starts.
systemd itself is not run here: the unit's capability bounding set and
no-new-privs are applied with setpriv(1), which needs root (skipped
otherwise)."""
import ctypes
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
from sptest.procfs import confined_children, status_field  # noqa: E402
from sptest.run import SP, sp_env  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

TIMEOUT = 10
SRC = os.environ["SP_SRCDIR"]
ROOT_DROPIN = os.path.join(SRC, "contrib", "systemd", "sallyport-root.conf")
SERVICE = os.path.join(SRC, "contrib", "systemd", "sallyport@.service")
EMPTY_DIR = "/run/sallyport-empty"


class OneShot:
    """A unix socket server for one connection: handler(conn) runs on a
    thread; what the client sent is kept in .received."""

    def __init__(self, path, handler):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(1)
        self.sock.settimeout(TIMEOUT)
        self.handler = handler
        self.received = b""
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        try:
            conn, _ = self.sock.accept()
        except socket.timeout:
            return
        conn.settimeout(TIMEOUT)
        try:
            self.handler(self, conn)
        except OSError as e:
            print("# server: %s" % e)
        finally:
            conn.close()

    def stop(self):
        self.t.join(TIMEOUT)
        self.sock.close()


def answer_then_reset(server, conn):
    """Reads a little, answers one line, closes with input unread (the
    client then gets EPIPE and ECONNRESET: sp connect has things to say)."""
    server.received += conn.recv(16)
    conn.sendall(b'{"jsonrpc":"2.0","id":"\\"$(x)\\" \xc3\xa9","result":{}}\n')


def record_all(server, conn):
    while True:
        data = conn.recv(65536)
        if not data:
            return
        server.received += data


def test_stderr_is_stdout(tmp):
    """Review host F4: with 2>&1 the relay's own diagnostics were mixed
    into the client's stream."""
    path = os.path.join(tmp, "reset.sock")
    server = OneShot(path, answer_then_reset)
    try:
        p = subprocess.run([SP, "connect", path], input=b"x" * (1 << 20),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT)
    finally:
        server.stop()
    check("stderr same as stdout: stdout holds the server's line and "
          "nothing else, exit 0",
          p.returncode == 0 and p.stdout ==
          b'{"jsonrpc":"2.0","id":"\\"$(x)\\" \xc3\xa9","result":{}}\n',
          (p.returncode, p.stdout[:400]))


def test_stderr_closed(tmp):
    """Review host F4: with fd 2 closed the socket became fd 2, and a
    diagnostic went to the server as protocol input."""
    path = os.path.join(tmp, "record.sock")
    server = OneShot(path, record_all)
    stdin = os.open("/", os.O_RDONLY | os.O_DIRECTORY)  # read: EISDIR
    try:
        p = subprocess.run([SP, "connect", path], stdin=stdin,
                           stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL,
                           preexec_fn=lambda: os.close(2), timeout=TIMEOUT)
    finally:
        os.close(stdin)
        server.stop()
    check("stderr closed, stdin unreadable: exit 74, nothing on stdout",
          p.returncode == 74 and p.stdout == b"", (p.returncode, p.stdout))
    check("and the server received no byte (no diagnostic as input)",
          server.received == b"", server.received[:300])


def unit_settings(path):
    """{key: value} of the [Service] lines of a unit or drop-in."""
    out, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "Service":
                key, _, value = line.partition("=")
                out[key.strip()] = value.strip()
    return out


def setpriv_caps(bounding):
    """setpriv's --bounding-set argument for a CapabilityBoundingSet=."""
    caps = [c.lower()[len("cap_"):] for c in bounding.split()]
    return "-all" + "".join(",+" + c for c in caps)


def root_session(tmp, target, bounding):
    """sp mcp as root under the bounding set and no-new-privs; returns
    (status, {id: answer}, stderr, {role: (Uid, CapEff)})."""
    doc = {
        "sallyport": 1,
        "server": {"name": "root-unit", "run_as": "daemon"},
        "targets": {"api": {"type": "http", "base_url":
                            "http://127.0.0.1:%d" % target.port}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["read"]}},
        "audit": {"path": os.path.join(tmp, "audit.jsonl")},
    }
    cfg = os.path.join(tmp, "policy.json")
    with open(cfg, "w") as f:
        json.dump(doc, f)
    msgs = (INITIALIZE + request(2, "tools/call", {
        "name": "get_item", "arguments": {"id": 'a "b" $(c) é'}}))
    p = subprocess.Popen(["setpriv", "--bounding-set",
                          setpriv_caps(bounding), "--inh-caps=-all",
                          "--no-new-privs", SP, "mcp", "--config", cfg],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=sp_env())
    kids = confined_children(p.pid, timeout=3)
    ids = {r: (status_field(pid, "Uid"), status_field(pid, "CapEff"))
           for r, pid in kids.items()}
    try:
        out, err = p.communicate(msgs, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    got = {}
    for line in out.splitlines():
        msg = json.loads(line)
        got[msg.get("id")] = msg
    return p.returncode, got, err.decode("utf-8", "replace"), ids


def analyzed(tmp):
    """systemd-analyze on the service with the drop-in where systemd
    would look for it: verify says nothing, and the merged unit (as
    `security --offline` reads it) runs as root with exactly the
    capabilities the drop-in names."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        skip("systemd-analyze security of the units",
             "systemd-analyze not installed (package systemd)")
        return
    units = os.path.join(tmp, "units")
    os.makedirs(os.path.join(units, "sallyport@.service.d"))
    for name in ("sallyport.socket", "sallyport@.service"):
        with open(os.path.join(SRC, "contrib", "systemd", name)) as f:
            text = f.read().replace("/usr/local/bin/sp", os.path.abspath(SP))
        with open(os.path.join(units, name), "w") as f:
            f.write(text)
    shutil.copy(ROOT_DROPIN, os.path.join(units, "sallyport@.service.d",
                                          "root.conf"))
    p = subprocess.run([analyze, "verify", "--man=no",
                        os.path.join(units, "sallyport.socket"),
                        os.path.join(units, "sallyport@.service")],
                       capture_output=True, timeout=30)
    noise = [l for l in (p.stdout + p.stderr).decode().splitlines()
             if "sallyport" in l]
    check("systemd-analyze verify with the drop-in: no warning",
          p.returncode == 0 and not noise, (p.returncode, noise))
    p = subprocess.run([analyze, "security", "--offline=yes", "--no-pager",
                        os.path.join(units, "sallyport@.service")],
                       capture_output=True, timeout=30)
    report = p.stdout.decode("utf-8", "replace").splitlines()
    granted = sorted(l.split()[1] for l in report
                     if l.startswith("\u2717 CapabilityBoundingSet="))
    as_root = any(l.startswith("\u2717 User=") for l in report)
    check("the merged unit runs as root and may chroot and change ids, "
          "and nothing else (no CAP_DAC_*, CAP_SYS_PTRACE, CAP_KILL...)",
          as_root and granted == ["CapabilityBoundingSet=~CAP_SET(UID|GID|"
                                  "PCAP)", "CapabilityBoundingSet=~CAP_SYS_"
                                  "CHROOT"], (as_root, granted))


def test_root_unit(tmp):
    """Review host F5: the README's root variant kept
    CapabilityBoundingSet= (empty), so chroot and the uid drop failed and
    every session ended 71; and ProtectSystem=strict leaves /run
    read-only, so the empty directory must be made by systemd."""
    svc = unit_settings(SERVICE)
    drop = unit_settings(ROOT_DROPIN)
    check("the root drop-in clears User= and Group= and names the empty "
          "directory as a preserved RuntimeDirectory",
          drop.get("User") == "" and drop.get("Group") == "" and
          "/run/" + drop.get("RuntimeDirectory", "") == EMPTY_DIR and
          drop.get("RuntimeDirectoryMode") == "0755" and
          drop.get("RuntimeDirectoryPreserve") == "yes", drop)
    check("and keeps the service's fence: no-new-privs, strict file system",
          svc.get("NoNewPrivileges") == "yes" and
          svc.get("ProtectSystem") == "strict" and
          "NoNewPrivileges" not in drop and "ProtectSystem" not in drop,
          (svc, drop))
    analyzed(tmp)
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        skip("the root unit's capabilities, run as the unit says",
             "needs root and setpriv")
        return
    os.makedirs(EMPTY_DIR, mode=0o755, exist_ok=True)
    target = Target(tmp)
    try:
        status, got, err, ids = root_session(
            tmp, target, svc.get("CapabilityBoundingSet", ""))
        check("control: the service's own empty bounding set as root: "
              "exit 71, the drop refused, nothing reached the target",
              status == 71 and "Operation not permitted" in err and
              target.requests() == [], (status, err))
        status, got, err, ids = root_session(
            tmp, target, drop.get("CapabilityBoundingSet", ""))
        res = got.get(2, {}).get("result", {}).get("structuredContent", {})
        check("the drop-in's bounding set: the call runs (exit 0, ok, "
              "one request at the target)",
              status == 0 and res.get("outcome") == "ok" and
              len(target.requests()) == 1, (status, got.get(2), err))
        check("with the executor as run_as (uid 1) and the frontend as "
              "nobody, neither keeping a capability",
              ids.get("executor") == ("1\t1\t1\t1", "0000000000000000") and
              ids.get("frontend") == ("65534\t65534\t65534\t65534",
                                      "0000000000000000"), ids)
    finally:
        target.stop()


PR_SET_MDWE = 65
PR_MDWE_REFUSE_EXEC_GAIN = 1


def unit_preexec(svc):
    """What setpriv cannot apply: UMask= and MemoryDenyWriteExecute= (the
    kernel's own MDWE, which refuses what systemd's filter refuses:
    memory made executable after it was writable)."""
    libc = ctypes.CDLL(None, use_errno=True)
    umask = int(svc.get("UMask", "0022"), 8)
    mdwe = svc.get("MemoryDenyWriteExecute") == "yes"

    def pre():
        os.umask(umask)
        if mdwe and libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN,
                               0, 0, 0) != 0:
            os.write(2, b"test: PR_SET_MDWE refused\n")
    return pre


def test_user_unit(tmp):
    """The service as shipped: a dedicated user (65534 stands in for
    sallyport), no capabilities, no-new-privs, its UMask= and
    MemoryDenyWriteExecute=; the credential readable by that user alone.
    A session starts, the executor loads libcurl and sends the bearer,
    and the audit log it creates is 0600."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        skip("a session as the service user, as the unit runs it",
             "needs root and setpriv")
        return
    svc = unit_settings(SERVICE)
    home = os.path.join(tmp, "user-unit")
    logs = os.path.join(home, "logs")
    os.makedirs(logs)
    os.chmod(tmp, 0o755)  # the service user must reach its files
    os.chmod(home, 0o755)
    os.chown(logs, 65534, 65534)
    os.chmod(logs, 0o700)
    token = 'tok-"$(id)"-%2e%2e-\u00e9'
    cred = os.path.join(home, "api.token")
    with open(cred, "w") as f:
        f.write(token)
    os.chown(cred, 65534, 65534)
    os.chmod(cred, 0o600)
    target = Target(home)
    doc = {
        "sallyport": 1,
        "server": {"name": "user-unit"},
        "credentials": {"api-token": {"type": "bearer", "file": cred}},
        "targets": {"api": {"type": "http", "credential": "api-token",
                            "base_url": "http://127.0.0.1:%d" % target.port}},
        "tools": [{"name": "get_item", "description": "Read one item.",
                   "target": "api", "scope": "read",
                   "http": {"method": "GET", "path": "/items/{id}"},
                   "params": {"id": {"type": "string", "maxLength": 64}}}],
        "profiles": {"default": {"scopes": ["read"]}},
        "audit": {"path": os.path.join(logs, "audit.jsonl")},
    }
    cfg = os.path.join(home, "policy.json")
    with open(cfg, "w") as f:
        json.dump(doc, f)
    os.chmod(cfg, 0o644)
    bounding = setpriv_caps(svc.get("CapabilityBoundingSet", ""))
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
           "--bounding-set", bounding, "--inh-caps=-all"]
    if svc.get("NoNewPrivileges") == "yes":
        cmd.append("--no-new-privs")
    msgs = INITIALIZE + request(2, "tools/call", {
        "name": "get_item", "arguments": {"id": "7"}})
    try:
        p = subprocess.run(cmd + [SP, "mcp", "--config", cfg], input=msgs,
                           capture_output=True, env=sp_env(),
                           preexec_fn=unit_preexec(svc), timeout=TIMEOUT)
        reqs = target.requests()
    finally:
        target.stop()
    answer = {}
    for line in p.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("id") == 2:
            answer = msg
    res = answer.get("result", {}).get("structuredContent", {})
    check("as the service user under the unit's fence the call runs: "
          "exit 0, ok", p.returncode == 0 and res.get("outcome") == "ok",
          (p.returncode, p.stdout[-300:], p.stderr))
    check("the target got one request with the bearer",
          len(reqs) == 1 and ["Authorization", "Bearer " + token] in
          reqs[0]["headers"], reqs)
    log = os.path.join(logs, "audit.jsonl")
    st = os.stat(log) if os.path.exists(log) else None
    logged = b""
    if st is not None:
        with open(log, "rb") as f:
            logged = f.read()
    check("the audit log is created 0600, owned by the service user",
          st is not None and st.st_mode & 0o777 == 0o600 and
          st.st_uid == 65534, st)
    check("and the token is in none of stdout, stderr and the log",
          token.encode() not in p.stdout + p.stderr + logged)


def main():
    tmp = tempfile.mkdtemp(prefix="sp-ops-host-")
    try:
        test_stderr_is_stdout(tmp)
        test_stderr_closed(tmp)
        test_root_unit(tmp)
        test_user_unit(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

#!/usr/bin/env python3
"""SSH outcomes when the connection breaks after the exec request was sent,
when a command dies by a signal OpenSSH has no name for, when the command
is too long for libssh2 to send, and a known_hosts keyed by the host's
name (docs/internals/executor-engines.md).  The real `sp mcp` talks to
the throwaway sshd through a relay on 127.0.0.1 that, once it has passed
the client's exec request (recognised by its size: the command carries a
long literal), damages the server's next bytes, stops relaying them, or
cuts both sides.  In every case sshd has already run the command -- the
marker file it touches proves it -- so the outcome must be `unknown`,
never `failed`."""
import getpass
import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.sshd import sshd_fixture  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402

PAD = "p" * 3000          # makes the exec request the client's only big write
EXEC_MIN = 2500           # bytes in one client write: the exec request


class Relay:
    """One connection at a time, client <-> sshd; `mode` says what happens
    to the server's bytes once the exec request went by."""

    def __init__(self, server_port, mode):
        self.server_port = server_port
        self.mode = mode
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(4)
        self.port = self.lsock.getsockname()[1]
        self.exec_seen = threading.Event()
        self.connections = 0
        self.damaged = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            self.connections += 1
            s = socket.create_connection(("127.0.0.1", self.server_port))
            threading.Thread(target=self._up, args=(c, s),
                             daemon=True).start()
            threading.Thread(target=self._down, args=(s, c),
                             daemon=True).start()

    def _up(self, c, s):
        """Client to server, whole; notes the exec request."""
        while True:
            try:
                data = c.recv(65536)
            except OSError:
                return
            if not data:
                return
            try:
                s.sendall(data)
            except OSError:
                return
            if len(data) >= EXEC_MIN and not self.exec_seen.is_set():
                self.exec_seen.set()
                if self.mode == "cut":
                    self._cut(c, s)

    @staticmethod
    def _cut(c, s):
        for sock in (c, s):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _down(self, s, c):
        """Server to client; after the exec request: held, or its next
        bytes damaged once (one changed byte fails a packet MAC)."""
        while True:
            try:
                data = s.recv(65536)
            except OSError:
                return
            if not data:
                return
            if self.exec_seen.is_set():
                if self.mode == "stall":
                    continue
                if self.mode == "corrupt" and not self.damaged:
                    self.damaged = True
                    data = data[:-1] + bytes([data[-1] ^ 0x55])
            try:
                c.sendall(data)
            except OSError:
                return

    def close(self):
        self.lsock.close()


def make_policy(tmp, name, port):
    key = {"type": "ssh-key",
           "private_key": os.path.join(tmp, "user_ed25519"),
           "public_key": os.path.join(tmp, "user_ed25519.pub")}
    with open(os.path.join(tmp, "host_key.pub")) as f:
        host_key = " ".join(f.read().split()[:2])
    kh = os.path.join(tmp, "known_hosts_%s" % name)
    with open(kh, "w") as f:
        f.write("[127.0.0.1]:%d %s\n" % (port, host_key))
    marker = os.path.join(tmp, "ran-%s" % name)
    return write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "exec-ssh-outcomes"},
        # far above need (a loaded machine); only the stall needs a
        # short budget, to end the call the relay holds
        "limits": {"call_timeout_ms": 60000},
        "credentials": {"key": key},
        "targets": {"relayed": {"type": "ssh", "host": "127.0.0.1",
                                "port": port, "user": getpass.getuser(),
                                "credential": "key", "known_hosts": kh}},
        "tools": [{"name": "mark", "description": "Touch a marker.",
                   "target": "relayed", "scope": "run",
                   "timeout_ms": 2000 if name == "stall" else 60000,
                   "ssh": {"argv": ["sh", "-c", 'touch "$1"', PAD, marker]},
                   "params": {}},
                  {"name": "kill_self", "description": "Die by a signal.",
                   "target": "relayed", "scope": "run",
                   # exec: the login shell (dash for a non-root user,
                   # which forks where bash execs) must not stand between
                   # sshd and the command that dies, or it reports 128+N
                   "ssh": {"argv": ["exec", "sh", "-c",
                                    'ulimit -c 0; kill -"$1" $$', "sh",
                                    "{sig}"]},
                   "params": {"sig": {"type": "string",
                                      "enum": ["BUS", "SYS", "TERM"]}}},
                  {"name": "long_arg", "description": "Count, then mark.",
                   "target": "relayed", "scope": "run",
                   "ssh": {"argv": ["sh", "-c",
                                    'printf %s "$1" | wc -c; touch "$0"',
                                    marker + "-long", "{v}"]},
                   "params": {"v": {"type": "string",
                                    "maxLength": 65536}}}],
        "profiles": {"default": {"scopes": ["run"]}},
    }), marker


def wait_for(path, seconds=30):
    """sshd's child may still be starting when the answer comes (on a
    loaded machine, seconds later); returns as soon as path exists."""
    end = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.02)
    return os.path.exists(path)


def phase(tmp, sshd_port, mode):
    relay = Relay(sshd_port, mode)
    cfg, marker = make_policy(tmp, mode, relay.port)
    s = Session(cfg)
    s.call(1, "mark", {})
    a = s.wait([1]).get(1)
    check("%s after the exec request: the relay saw it" % mode,
          relay.exec_seen.is_set())
    check("%s after the exec request: sshd ran the command" % mode,
          wait_for(marker))
    check("%s after the exec request: outcome unknown, not failed" % mode,
          structured(a).get("outcome") == "unknown", a)
    if mode == "corrupt":
        # the relay damages nothing more: only that session is suspect
        s.call(2, "mark", {})
        second = s.wait([2]).get(2)
        check("corrupt: the damaged session is dropped, the next call "
              "runs on a fresh connection",
              structured(second).get("outcome") == "ok" and
              relay.connections == 2, (relay.connections, second))
    s.close()
    relay.close()


def phase_signals(tmp, sshd_port):
    """OpenSSH names only 13 signals; for any other (BUS, SYS, XCPU...)
    it sends "SIG@openssh.com", which no result record can carry."""
    relay = Relay(sshd_port, "pass")
    cfg, _ = make_policy(tmp, "signals", relay.port)
    s = Session(cfg)
    for rid, sig in ((1, "BUS"), (2, "SYS"), (3, "TERM")):
        s.call(rid, "kill_self", {"sig": sig})
    got = s.wait([1, 2, 3])
    s.call(4, "mark", {})
    after = s.wait([4]).get(4)
    status = s.close()
    relay.close()
    for rid, name in ((1, "UNKNOWN"), (2, "UNKNOWN"), (3, "TERM")):
        sc = structured(got.get(rid))
        check("killed by signal %s: answered, ok, signal %s" % (
              ("BUS", "SYS", "TERM")[rid - 1], name),
              sc.get("outcome") == "ok" and
              sc.get("ssh", {}).get("signal") == name and
              "killed by signal %s" % name in sc.get("message", ""),
              got.get(rid))
    check("after them the session still runs calls",
          structured(after).get("outcome") == "ok", after)
    check("and ends with 0", status == 0,
          s.stderr.decode("utf-8", "replace")[-2000:])


def phase_long_commands(tmp, sshd_port):
    """libssh2 sends no packet over 35000 bytes: a longer command is
    refused before anything is sent (invalid), never reported as run."""
    relay = Relay(sshd_port, "pass")
    cfg, marker = make_policy(tmp, "long", relay.port)
    marker += "-long"
    s = Session(cfg)
    s.call(1, "long_arg", {"v": "x" * 30000})
    fits = s.wait([1]).get(1)
    check("a 30000-byte argument runs whole",
          structured(fits).get("outcome") == "ok" and
          structured(fits).get("ssh", {}).get("stdout", "").strip() ==
          "30000" and wait_for(marker), fits)
    os.unlink(marker)
    for rid, v in ((2, "y" * 40000), (3, "'" * 9000)):
        s.call(rid, "long_arg", {"v": v})
        a = s.wait([rid]).get(rid)
        check("a command of over 32768 bytes (%d chars of %r): invalid, "
              "nothing sent" % (len(v), v[0]),
              structured(a).get("outcome") == "invalid" and
              "too long" in structured(a).get("message", "") and
              not wait_for(marker, 0.5), a)
    s.close()
    relay.close()


def phase_host_name(tmp, sshd_port):
    """A policy naming its host, with the known_hosts line ssh-keyscan
    writes for that name (the executor connects to the address)."""
    first = socket.getaddrinfo("localhost", sshd_port,
                               type=socket.SOCK_STREAM)[0][4][0]
    if first != "127.0.0.1":  # the fixture listens there only
        skip("a policy naming its host (localhost)",
             "localhost resolves to %s first" % first)
        return
    with open(os.path.join(tmp, "host_key.pub")) as f:
        host_key = " ".join(f.read().split()[:2])
    kh = os.path.join(tmp, "known_hosts_named")
    with open(kh, "w") as f:
        f.write("[localhost]:%d %s\n" % (sshd_port, host_key))
    marker = os.path.join(tmp, "ran-named")
    cfg = write_policy(tmp, {
        "sallyport": 1,
        "server": {"name": "exec-ssh-named"},
        "credentials": {"key": {
            "type": "ssh-key",
            "private_key": os.path.join(tmp, "user_ed25519")}},
        "targets": {"named": {"type": "ssh", "host": "localhost",
                              "port": sshd_port, "user": getpass.getuser(),
                              "credential": "key", "known_hosts": kh}},
        "tools": [{"name": "mark", "description": "Touch a marker.",
                   "target": "named", "scope": "run",
                   "ssh": {"argv": ["touch", marker]}, "params": {}}],
        "profiles": {"default": {"scopes": ["run"]}},
    })
    s = Session(cfg)
    s.call(1, "mark", {})
    a = s.wait([1]).get(1)
    s.close()
    check("known_hosts naming the host as the policy does: verified",
          structured(a).get("outcome") == "ok" and os.path.exists(marker),
          a)


def main():
    tmp = tmpdir()
    with sshd_fixture(tmp) as port:
        for mode in ("corrupt", "stall", "cut"):
            phase(tmp, port, mode)
        phase_signals(tmp, port)
        phase_long_commands(tmp, port)
        phase_host_name(tmp, port)
    done()


main()

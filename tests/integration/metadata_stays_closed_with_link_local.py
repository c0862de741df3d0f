#!/usr/bin/env python3
"""allow_link_local does not open the cloud metadata service (issue 14,
finding 5).  In a private network namespace (unshare -n, as root; a
counted skip for another user), 169.254.169.254, fd00:ec2::254 and a
plain link-local address are put on lo, each with a listener counting the TCP connections it accepts.
Through the real `sp mcp`: a target with allow_link_local (and
allow_private) but no allow_metadata is refused before connecting, by
literal address and by a name resolving to it (a bind-mounted /etc/hosts);
the link-local address is still reached, and allow_metadata opens the
metadata address (both controls must connect, else the test proves
nothing)."""
import os
import socket
import subprocess
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy  # noqa: E402
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done, skip, skip_all  # noqa: E402

META4, META6, LINK = "169.254.169.254", "fd00:ec2::254", "169.254.10.10"


class Counter:
    """Accepts and closes connections on addr, counting them."""

    def __init__(self, addr):
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        self.s = socket.socket(fam, socket.SOCK_STREAM)
        self.s.bind((addr, 0))
        self.s.listen(16)
        self.port = self.s.getsockname()[1]
        self.count = 0
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            self.count += 1
            c.close()


def reexec_in_namespace():
    """Runs this file again inside a fresh network and mount namespace.
    Only root can: as another user unshare -r makes the namespace's root
    of it, and sp running as root drops its children to users that user
    namespace does not map (it refuses to start, or exits 71)."""
    if os.geteuid() != 0:
        skip_all("needs root: in a user namespace of its own sp would run "
                 "as root, with no other user mapped to drop to")
    flags = ["-n", "-m"]
    env = dict(os.environ, SP_IN_NETNS="1")
    r = subprocess.run(["unshare"] + flags + [sys.executable,
                                              os.path.abspath(__file__)],
                       env=env)
    sys.exit(r.returncode)


def setup_namespace(tmp):
    """lo up with the three addresses; meta.test -> 169.254.169.254."""
    cmds = [["ip", "link", "set", "lo", "up"],
            ["ip", "addr", "add", META4 + "/32", "dev", "lo"],
            ["ip", "addr", "add", LINK + "/32", "dev", "lo"],
            ["ip", "-6", "addr", "add", META6 + "/128", "dev", "lo",
             "nodad"]]
    for c in cmds:
        if subprocess.run(c, stderr=subprocess.DEVNULL).returncode != 0:
            return False, " ".join(c)
    hosts = os.path.join(tmp, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1 localhost\n%s meta.test\n" % META4)
    named = subprocess.run(["mount", "--bind", hosts, "/etc/hosts"],
                           stderr=subprocess.DEVNULL).returncode == 0
    return True, named


def main():
    if os.environ.get("SP_IN_NETNS") != "1":
        reexec_in_namespace()
    tmp = tmpdir()
    ok, named = setup_namespace(tmp)
    if not ok:
        skip_all("no private network namespace here (%s)" % named)
    meta, meta_name, meta6 = Counter(META4), Counter(META4), Counter(META6)
    link, opened = Counter(LINK), Counter(META4)

    def target(host, port, **allow):
        t = {"type": "http", "base_url": "https://%s:%d" % (host, port),
             "allow_link_local": True, "allow_private": True}
        t.update(allow)
        return t

    targets = {"meta": target(META4, meta.port),
               "meta6": target("[%s]" % META6, meta6.port),
               "link": target(LINK, link.port),
               "opened": target(META4, opened.port, allow_metadata=True)}
    if named:
        targets["meta_name"] = target("meta.test", meta_name.port)
    tools = [{"name": "get_" + n, "description": "Read.", "target": n,
              "scope": "read", "http": {"method": "GET", "path": "/latest"}}
             for n in targets]
    cfg = write_policy(tmp, {
        "sallyport": 1, "server": {"name": "exec-metadata"},
        "limits": {"call_timeout_ms": 5000},
        "targets": targets, "tools": tools,
        "profiles": {"default": {"scopes": ["read"]}}})
    s = Session(cfg)
    ids = {}
    for i, n in enumerate(sorted(targets)):
        s.call(100 + i, "get_" + n, {})
        ids[n] = 100 + i
    got = s.wait(list(ids.values()), timeout=30)
    s.close()
    sc = {n: structured(got.get(r)) for n, r in ids.items()}
    refused = ["meta", "meta6"] + (["meta_name"] if named else [])
    counters = {"meta": meta, "meta6": meta6, "meta_name": meta_name}
    for n in refused:
        msg = sc[n].get("message", "")
        check("%s: refused as cloud metadata, outcome failed" % n,
              sc[n].get("outcome") == "failed" and "cloud metadata" in msg,
              sc[n])
        check("%s: the listener saw no connection" % n,
              counters[n].count == 0, counters[n].count)
    if not named:
        skip("meta_name: refused, no connection",
             "no bind mount of /etc/hosts: the name case is not run")
    check("control: the link-local address is still reached",
          link.count >= 1, (link.count, sc["link"]))
    check("control: allow_metadata opens the metadata address",
          opened.count >= 1, (opened.count, sc["opened"]))
    done()


main()

#!/usr/bin/env python3
"""sp check runs the checks sp mcp runs at start (policy/startcheck.c), so
a policy that passes sp check starts and one sp mcp refuses fails sp check
first, at the place the policy names the file: for each case below, sp
check exits 78 with FILE:LINE:COL, sp mcp exits 78 before any child
starts, and the client's first request gets one JSON-RPC error saying why
in a sentence, with no path and nothing of the file in it.  The same
policy with the file put right passes sp check, and sp mcp then answers
initialize.  Last, the refusal as a client behind socket activation and
sp connect sees it."""
import base64
import hashlib
import hmac
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request, start_refusal  # noqa: E402
from sptest.policy import run_as_root  # noqa: E402
from sptest.run import SP, finish, sp_env, start, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import die_with_parent  # noqa: E402

TIMEOUT = 30
KEY = (b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOzyXLQUhRWvyCnuf9sELB2QPtLar6"
       b"+7GN2DpGwKkaib ops@example\n")
SECRET = b"s3cr\"et $(id) \xc3\xa9\n"


def write(path, data, mode=0o600):
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
    return path


def policy_text(tmp, files):
    """The policy, one key a line, so each file's line is known:
    returns (text, {key: line})."""
    doc = run_as_root({
        "sallyport": 1,
        "server": {"name": "start-check"},
        "audit": {"path": files["audit"], "key_file": files["audit_key"]},
        "credentials": {
            "tok": {"type": "bearer", "file": files["token"]},
            "k": {"type": "ssh-key", "private_key": files["private_key"],
                  "public_key": files["public_key"]}},
        "targets": {
            "api": {"type": "http", "base_url": "http://127.0.0.1:9",
                    "credential": "tok", "ca_file": files["ca"]},
            "web": {"type": "ssh", "host": "127.0.0.1", "port": 9,
                    "user": "ops", "credential": "k",
                    "known_hosts": files["known_hosts"]}},
        "tools": [
            {"name": "get_item", "description": "Read one item.",
             "target": "api", "scope": "read",
             "http": {"method": "GET", "path": "/items"}},
            {"name": "disk", "description": "df.", "target": "web",
             "scope": "read", "ssh": {"argv": ["df", "-h"]}}],
        "profiles": {"default": {"scopes": ["read"]}}})
    text = json.dumps(doc, indent=1)
    lines = {}
    for n, line in enumerate(text.splitlines(), 1):
        for key in ("path", "key_file", "file", "private_key", "public_key",
                    "ca_file", "known_hosts"):
            if line.strip().startswith('"%s":' % key):
                lines.setdefault(key, n)
    return text, lines


def keypair(tmp, name, passphrase="", pem=False):
    """A throwaway ssh-keygen key pair in tmp/keys; (private, public)
    bytes."""
    d = os.path.join(tmp, "keys")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name)
    if not os.path.exists(path):
        subprocess.run(["ssh-keygen", "-q", "-t", "rsa" if pem else "ed25519",
                        "-N", passphrase, "-C", "ops $(id)", "-f", path] +
                       (["-m", "PEM", "-b", "2048"] if pem else []),
                       check=True, stdin=subprocess.DEVNULL)
    with open(path, "rb") as a, open(path + ".pub", "rb") as b:
        return a.read(), b.read()


def good_files(tmp):
    f = {"audit": os.path.join(tmp, "log", "audit.jsonl"),
         "audit_key": os.path.join(tmp, "audit.key"),
         "token": os.path.join(tmp, "api token"),
         "private_key": os.path.join(tmp, "id_ed25519"),
         "public_key": os.path.join(tmp, "id_ed25519.pub"),
         "ca": os.path.join(tmp, "ca.pem"),
         "known_hosts": os.path.join(tmp, "known_hosts")}
    os.makedirs(os.path.join(tmp, "log"), exist_ok=True)
    write(f["audit_key"], b"k\"$(id)\n" + b"\x00\xff" * 12)   # 32 bytes
    write(f["token"], SECRET)
    private, public = keypair(tmp, "ops")
    write(f["private_key"], private)
    write(f["public_key"], public, 0o644)
    write(f["ca"], b"-----BEGIN CERTIFICATE-----\nMIIB\n"
          b"-----END CERTIFICATE-----\n", 0o644)
    write(f["known_hosts"], b"# ours\n[127.0.0.1]:9 " + KEY, 0o644)
    return f


def good_policy(tmp):
    """good_files and the policy naming them, in tmp/policy.json:
    (files, text, {key: line}, path)."""
    f = good_files(tmp)
    text, lines = policy_text(tmp, f)
    path = os.path.join(tmp, "policy.json")
    with open(path, "w") as fh:
        fh.write(text)
    return f, text, lines, path


def sp_check(path):
    p = subprocess.run([SP, "check", "--config", path], capture_output=True,
                       timeout=TIMEOUT, env=sp_env())
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def sp_mcp(path):
    return finish(start(path), INITIALIZE, timeout=TIMEOUT)


def expect_refused(name, tmp, path, key, line, phrase):
    """Returns sp check's diagnostic at line."""
    status, out, err = sp_check(path)
    want = "%s:%d:" % (path, line)
    located = [l for l in err.splitlines() if l.startswith(want)]
    check("%s: sp check exits 78 naming it at line %d" % (name, line),
          status == 78 and out == b"" and located and
          phrase in located[0], (status, err))
    status, out, err = sp_mcp(path)
    why = start_refusal(out)
    check("%s: sp mcp exits 78 before any child" % name,
          status == 78 and "frontend" not in err and
          "executor" not in err, (status, err))
    check("%s: the client is told why in a sentence" % name,
          why is not None and phrase in why and
          ("line %d" % line) in why, out)
    check("%s: ... with no path and nothing of a file in it" % name,
          tmp.encode() not in out and b"s3cr" not in out and
          b"$(id)" not in out, out)
    check("%s: no audit log was started" % name,
          not os.path.exists(os.path.join(tmp, "log", "audit.jsonl")))
    return located[0] if located else ""


def expect_starts(name, path):
    status, out, err = sp_check(path)
    check("%s put right: sp check passes" % name, status == 0, err)
    status, out, err = sp_mcp(path)
    first = out.split(b"\n")[0]
    try:
        answer = json.loads(first)
    except ValueError:
        answer = {}
    check("%s put right: sp mcp starts and answers initialize" % name,
          status == 0 and "result" in answer, (status, out[:300], err))
    log = os.path.join(os.path.dirname(path), "log", "audit.jsonl")
    if os.path.exists(log):
        os.unlink(log)


def cases(tmp, f):
    """(name, key in the policy, what breaks it, phrase sp says)."""
    big = os.path.join(tmp, "big")

    def symlink():
        real = write(os.path.join(tmp, "real token"), SECRET)
        os.unlink(f["token"])
        os.symlink(real, f["token"])

    def huge():
        write(big, b"")
        os.truncate(big, 4 * 1024 * 1024 + 1)
        os.unlink(f["token"])
        os.rename(big, f["token"])

    def other_owner():
        os.chown(f["token"], 65534, 65534)

    out = [
        ("known_hosts missing", "known_hosts",
         lambda: os.unlink(f["known_hosts"]), "No such file or directory"),
        ("known_hosts of garbage", "known_hosts",
         lambda: write(f["known_hosts"], b"web $(id) not-a-key\n"),
         "fails at its line 1"),
        ("known_hosts with no key", "known_hosts",
         lambda: write(f["known_hosts"], b"# nothing yet\n\n"),
         "holds no host key"),
        ("a @revoked line in known_hosts", "known_hosts",
         lambda: write(f["known_hosts"], KEY.join([b"h ", b"@revoked * ",
                                                   b""])),
         "markers such as @revoked"),
        ("empty audit.key_file", "key_file",
         lambda: write(f["audit_key"], b""), "holds 0 bytes"),
        ("3-byte audit key", "key_file",
         lambda: write(f["audit_key"], b"k\"\n"), "holds 3 bytes"),
        ("31-byte audit key", "key_file",
         lambda: write(f["audit_key"], b"-" * 31), "holds 31 bytes"),
        ("audit key as a symlink", "key_file",
         lambda: (os.unlink(f["audit_key"]),
                  os.symlink(f["token"], f["audit_key"])),
         "is a symbolic link"),
        ("credential that is a symlink", "file", symlink,
         "is a symbolic link"),
        ("credential over 4 MiB", "file", huge, "is larger than 4194304"),
        ("credential that is a directory", "file",
         lambda: (os.unlink(f["token"]), os.mkdir(f["token"])),
         "is not a regular file"),
        ("public key that is not one", "public_key",
         lambda: write(f["public_key"], SECRET), "not an OpenSSH public key"),
        ("CA file with no certificate", "ca_file",
         lambda: write(f["ca"], b"-----BEGIN PRIVATE KEY-----\n"),
         "holds no PEM certificate"),
        ("audit directory missing", "path",
         lambda: shutil.rmtree(os.path.join(tmp, "log")),
         "its directory does not exist"),
    ]
    if os.geteuid() == 0:
        out.append(("credential owned by another uid", "file", other_owner,
                     "is owned by uid 65534"))
    return out


def test_cases(tmp):
    f, text, lines, path = good_policy(tmp)
    expect_starts("the whole policy", path)
    for name, key, breaker, phrase in cases(tmp, f):
        breaker()
        expect_refused(name, tmp, path, key, lines[key], phrase)
        for p in (f["token"], f["audit_key"]):
            if os.path.isdir(p) and not os.path.islink(p):
                os.rmdir(p)
        good_files(tmp)
        expect_starts(name, path)


def test_kernel_files(tmp):
    """A credential named at a file of procfs or sysfs (S_ISREG, size 0
    whatever it holds) is no regular file: refused by sp check and at
    start, where the executor's read of it would end the session (70)."""
    for name in ("/proc/self/environ", "/sys/kernel/mm/transparent_hugepage/"
                 "enabled", "/dev/null"):
        if not os.path.exists(name):
            skip("credential at %s refused" % name, "not on this machine")
            continue
        f = good_files(tmp)
        f["token"] = name
        text, lines = policy_text(tmp, f)
        path = os.path.join(tmp, "kernel.json")
        with open(path, "w") as fh:
            fh.write(text)
        expect_refused("credential at %s" % name, tmp, path, "file",
                       lines["file"], "is not a regular file")


def ssh_cases(tmp, f):
    """(name, key, breaker, phrase, the fix sp check must name): the key
    checks sp check did not make before, which otherwise fail only at
    call time (or, for known_hosts, at every call)."""
    other = keypair(tmp, "other")[1]
    kh = f["known_hosts"]

    def hosts(line):
        return lambda: write(kh, b"# ours\n" + line + KEY, 0o644)

    fix = "ssh-keyscan -p 9 127.0.0.1 >> %s" % kh
    out = [("known_hosts entry for port 22 only", "known_hosts",
            hosts(b"127.0.0.1 "), "has no entry for", fix),
           ("known_hosts entry under [host]:22", "known_hosts",
            hosts(b"[127.0.0.1]:22,other.example "), "has no entry for",
            fix),
           ("known_hosts entry for another port", "known_hosts",
            hosts(b"[127.0.0.1]:99 "), "has no entry for", fix),
           ("known_hosts entry for localhost", "known_hosts",
            hosts(b"[localhost]:9 "), "has no entry for", fix)]
    for label, private in (
            ("encrypted OpenSSH key", keypair(tmp, "enc", "pass $(id) 'é")[0]),
            ("encrypted PEM key", keypair(tmp, "pem", "pass-\"x", True)[0])):
        out.append(("%s without passphrase_file" % label, "private_key",
                    lambda p=private: write(f["private_key"], p),
                    "is an encrypted private key",
                    "name one, or remove the passphrase"))
    out.append(("public_key of another pair", "public_key",
                lambda: write(f["public_key"], other, 0o644),
                "is not the public half of",
                "ssh-keygen -y -f %s > %s" % (f["private_key"],
                                               f["public_key"])))
    cut = keypair(tmp, "ops")[0][:90]
    out.append(("OpenSSH private key cut short", "private_key",
                lambda: write(f["private_key"], cut),
                "is not a whole OpenSSH private key", "is not a whole"))
    return out


def test_ssh_keys(tmp):
    f, text, lines, path = good_policy(tmp)
    for name, key, breaker, phrase, fix in ssh_cases(tmp, f):
        breaker()
        said = expect_refused(name, tmp, path, key, lines[key], phrase)
        check("%s: sp check says how to fix it" % name, fix in said, said)
        good_files(tmp)
        expect_starts(name, path)
    # a hashed name (ssh-keygen -H) sp cannot match is not refused
    salt = os.urandom(20)
    digest = hmac.new(salt, b"[127.0.0.1]:9", hashlib.sha1).digest()
    write(f["known_hosts"], b"|1|%s|%s %s" % (base64.b64encode(salt),
                                             base64.b64encode(digest), KEY),
          0o644)
    expect_starts("known_hosts with only a hashed name", path)
    good_files(tmp)
    # the same pair with its passphrase named starts
    private, public = keypair(tmp, "enc", "pass $(id) 'é")
    write(f["private_key"], private)
    write(f["public_key"], public, 0o644)
    pw = write(os.path.join(tmp, "passphrase"), "pass $(id) 'é\n".encode())
    doc = json.loads(text)
    doc["credentials"]["k"]["passphrase_file"] = pw
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1)
    expect_starts("encrypted key with its passphrase_file", path)
    # a PEM key's public half cannot be compared offline: said, not failed
    private, public = keypair(tmp, "pem2", "", True)
    write(f["private_key"], private)
    write(f["public_key"], public, 0o644)
    with open(path, "w") as fh:
        fh.write(text)
    status, out, err = sp_check(path)
    check("a PEM key with a public_key: a warning that it cannot be "
          "compared, at the public key",
          status == 0 and "%s:%d:" % (path, lines["public_key"]) in err and
          "warning: public key file %s cannot be compared" % f["public_key"]
          in err, err)


def test_root_hint(tmp):
    """As root without --user, files the service user owns fail as owned
    by another uid: sp check says which user to check as."""
    if os.geteuid() != 0:
        skip("as root, sp check hints at --user", "needs root")
        return
    f, text, lines, path = good_policy(tmp)
    for key in ("token", "private_key", "audit_key"):
        os.chown(f[key], 1, 1)
    status, out, err = sp_check(path)
    first = min(lines["file"], lines["private_key"], lines["key_file"])
    check("as root, files of uid 1: exit 78 and a hint to check as daemon "
          "at line %d" % first,
          status == 78 and any(
              l.startswith("%s:%d:" % (path, first)) and "warning:" in l and
              "sp check --user daemon" in l for l in err.splitlines()), err)
    p = subprocess.run([SP, "check", "--config", path, "--user", "daemon"],
                       capture_output=True, timeout=TIMEOUT, env=sp_env())
    check("with --user daemon the hint is not given",
          b"sp check --user" not in p.stderr, p.stderr)
    good_files(tmp)


def test_answers(tmp):
    """The refusal answers the first request whatever its id, after any
    notification; a client that sends nothing gets nothing."""
    path = os.path.join(tmp, "broken.json")
    with open(path, "w") as fh:
        json.dump(run_as_root({"sallyport": 1, "tools": 3}), fh)
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    for rid, data in ((0, INITIALIZE), ("a\"b", note + note +
                      request("a\"b", "initialize", {})),
                      (-7, request(-7, "tools/list"))):
        status, out, err = finish(start(path), data, timeout=TIMEOUT)
        check("id %r: one error answering it, exit 78" % (rid,),
              status == 78 and start_refusal(out, rid) is not None and
              "its policy has 1 error, the first at line 1" in
              start_refusal(out, rid), (status, out))
    status, out, err = finish(start(path), b"", timeout=TIMEOUT)
    check("no request at all: nothing on stdout, exit 78",
          status == 78 and out == b"", (status, out))
    status, out, err = finish(start(path), b"{not json\n", timeout=TIMEOUT)
    check("an unreadable first frame: answered with id null",
          status == 78 and b'"id":null' in out and
          b"Sallyport cannot start" in out, (status, out))


def test_user(tmp):
    """sp check --user NAME opens the files as NAME, as a service running
    as NAME will: what root may read but daemon may not fails there."""
    if os.geteuid() != 0:
        skip("sp check --user checks as another user", "needs root")
        return
    f, text, lines, path = good_policy(tmp)
    os.chmod(path, 0o644)
    os.chmod(os.path.join(tmp, "log"), 0o755)
    status, out, err = sp_check(path)
    check("as root the policy passes", status == 0, err)
    p = subprocess.run([SP, "check", "--config", path, "--user", "daemon"],
                       capture_output=True, timeout=TIMEOUT, env=sp_env())
    err = p.stderr.decode("utf-8", "replace").splitlines()
    check("--user daemon: exit 78", p.returncode == 78, err)
    check("--user daemon: the audit directory is not writable by it",
          "%s:%d:" % (path, lines["path"]) in "\n".join(err) and
          any("not writable by uid 1" in l for l in err), err)
    check("--user daemon: root's 0600 token cannot be opened by it",
          any(l.startswith("%s:%d:" % (path, lines["file"])) and
              "Permission denied" in l for l in err), err)
    check("--user daemon: server.run_as is unused then (a warning)",
          any("warning: server.run_as" in l for l in err), err)
    p = subprocess.run([SP, "check", "--config", path, "--user",
                        "no-such-user-$(id)"], capture_output=True,
                       timeout=TIMEOUT, env=sp_env())
    check("--user of no such user: exit 78, said so",
          p.returncode == 78 and b"no such user" in p.stderr, p.stderr)


def clear_part(path):
    """How many bytes of an OpenSSH private key file hold the armor line,
    the header and the public key, up to the private section's length:
    the start-up checks may read that much (policy/ssh_private_key.h)."""
    with open(path, "rb") as fh:
        armor, body = fh.read().split(b"\n", 1)
    chars = body.split(b"-----")[0]
    raw = base64.b64decode(chars.replace(b"\n", b""))
    at = 15
    for _ in range(3):                      # cipher, kdf, kdf options
        at += 4 + int.from_bytes(raw[at:at + 4], "big")
    at += 4                                 # the number of keys: 1
    at += 4 + int.from_bytes(raw[at:at + 4], "big")
    quads, seen = (at + 4 + 2) // 3, 0     # through the section's length
    for i, c in enumerate(chars):
        if c not in b"\r\n":
            seen += 1
        if seen == quads * 4:
            return len(armor) + 1 + i + 1
    return len(armor) + 1 + len(chars)


def test_secrets_unread(tmp):
    """The start-up checks open a credential file and judge what the
    descriptor is, but never read its bytes: they are the executor's
    alone (docs/design.md section 1).  Of a private key they read only
    the clear part before the private section (armor, cipher, public key).  Seen with strace -y in sp check,
    which runs the same checks as the broker; the known_hosts file next
    to it is read, so the trace is able to show a read."""
    if shutil.which("strace") is None:
        skip("the start-up checks read no credential", "strace missing")
        return
    f, text, lines, path = good_policy(tmp)
    trace = os.path.join(tmp, "trace")
    p = subprocess.run(["strace", "-f", "-y", "-e", "trace=read,pread64",
                        "-o", trace, SP, "check", "--config", path],
                       capture_output=True, timeout=TIMEOUT, env=sp_env())
    with open(trace, errors="replace") as fh:
        reads = [l for l in fh if "read" in l]
    check("strace ran sp check, which passed", p.returncode == 0,
          p.stderr)
    check("known_hosts was read (the trace shows reads)",
          any("<%s>" % f["known_hosts"] in l for l in reads), reads[:5])
    check("the token file was never read",
          not any("<%s>" % f["token"] in l for l in reads),
          [l for l in reads if f["token"] in l])
    got = sum(int(l.rsplit("=", 1)[1]) for l in reads
              if "<%s>" % f["private_key"] in l)
    most = clear_part(f["private_key"])
    check("of the private key only the clear part was read: %d bytes, at "
          "most %d" % (got, most), 0 < got <= most, got)


def listen(sock, config):
    with open(sock + ".log", "wb") as log:
        p = subprocess.Popen(["systemd-socket-activate", "--listen=" + sock,
                              "--accept", "--inetd", SP, "mcp", "--config",
                              config], stdout=subprocess.DEVNULL, stderr=log,
                             env=sp_env(), preexec_fn=die_with_parent)
    end = time.monotonic() + TIMEOUT
    while time.monotonic() < end and p.poll() is None:
        if os.path.exists(sock) and stat.S_ISSOCK(os.stat(sock).st_mode):
            return p
        time.sleep(0.02)
    p.kill()
    p.wait()
    return None


def test_socket_activation(tmp):
    if shutil.which("systemd-socket-activate") is None:
        skip("behind socket activation the client is told why",
             "systemd-socket-activate not installed (package systemd)")
        return
    f, text, lines, path = good_policy(tmp)
    write(f["audit_key"], b"abc")
    sock = os.path.join(tmp, "mcp.sock")
    server = listen(sock, path)
    if not check("systemd-socket-activate listens", server is not None):
        return
    try:
        p = subprocess.run([SP, "connect", sock], input=INITIALIZE,
                           capture_output=True, timeout=TIMEOUT, env=sp_env())
        why = start_refusal(p.stdout)
        check("behind sp connect and socket activation: the client reads "
              "why, not a reset connection",
              why is not None and "holds 3 bytes" in why and
              tmp.encode() not in p.stdout, (p.returncode, p.stdout,
                                              p.stderr))
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main():
    tmp = tmpdir()
    os.chmod(tmp, 0o755)
    try:
        test_cases(tmp)
        test_kernel_files(tmp)
        test_ssh_keys(tmp)
        test_root_hint(tmp)
        test_answers(tmp)
        test_user(tmp)
        test_secrets_unread(tmp)
        test_socket_activation(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done()


main()

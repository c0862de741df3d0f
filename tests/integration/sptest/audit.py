"""The audit log as sp wrote it, and `sp audit verify` on it."""
import hashlib
import json
import os
import subprocess

from sptest.run import SP


def read_log(path):
    """(complete lines as records, the torn last line or b"")."""
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


def audit_records(tmp):
    """The complete records of tmp/audit.jsonl (the log the policy
    builders name), [] before sp created it; a torn last line is not
    one."""
    path = os.path.join(tmp, "audit.jsonl")
    return read_log(path)[0] if os.path.exists(path) else []


def write_chained(path, records):
    """Writes records (each (session, kind, members dict)) to path as a
    hash chain sp audit verify accepts (sp-audit(5): "hash" is SHA-256 of
    the record without it, "prev" SHA-256 of the line before; no HMAC):
    what a crafted, or a very long, log holds, made without a session."""
    prev = "0" * 64
    with open(path, "wb") as f:
        for seq, (session, kind, members) in enumerate(records, 1):
            rec = {"seq": seq, "ts": "2026-12-06T00:00:00.000Z",
                   "session": session, "kind": kind, "prev": prev}
            rec.update(members)
            body = json.dumps(rec, separators=(",", ":"),
                              ensure_ascii=False).encode()
            line = body[:-1] + b',"hash":"%s"}' % (
                hashlib.sha256(body).hexdigest().encode())
            f.write(line + b"\n")
            prev = hashlib.sha256(line).hexdigest()

#!/usr/bin/env python3
"""The idempotency journal fails closed when state_dir is full
(docs/design.md section 9), as the limits do.  state_dir is a small tmpfs
the test mounts (root and a working mount only; otherwise each check is a
counted skip), filled to ENOSPC by a file of the test's; the audit log is
elsewhere.  Real sp, real HTTP target counting what reached it.

- full before the call: three sessions one after the other each make the
  same journaled call: each is denied, saying the journal could not
  record it, and the target sees none of them;
- full after the pending line, before the outcome (the target holds the
  request while the test fills the disk): the call's session says on
  stderr that the outcome is not in state_dir; two later sessions refuse
  the identical call (the file still says pending) and the target saw
  the request once."""
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import (document, http_target, http_tool,  # noqa: E402
                            write_policy)
from sptest.run import Session, tmpdir  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target  # noqa: E402

ID = {"id": {"type": "string", "maxLength": 64}}

CHECKS = ["full before: each session denied", "full before: saying why",
          "full before: nothing reached the target",
          "full after: the session says the outcome is not written",
          "full after: later sessions refuse the identical call",
          "full after: the target saw the request once"]


def doc(tmp, port, state):
    held = http_tool("hold_item", "/hold/f/{id}", ID, method="POST",
                     scope="rw", description="Store, held.", mutating=True,
                     idempotency={"window_s": 3600,
                                  "header": "Idempotency-Key"})
    return document("journal-full",
                    {"api": http_target("http://127.0.0.1:%d" % port)},
                    [held], limits={"call_timeout_ms": 120000,
                                    "dedupe_ms": 0},
                    audit_path=os.path.join(tmp, "audit.jsonl"),
                    scopes=("rw",), state_dir=state)


def mounted(state):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return "needs root to mount a tmpfs"
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700",
                        "tmpfs", state], stderr=subprocess.PIPE, text=True)
    return None if r.returncode == 0 else "mount: " + r.stderr.strip()


def fill(state):
    """Writes until ENOSPC: nothing more fits in state_dir, not even in
    the last page of a state file (tmpfs allocates by pages), which gets
    empty lines, lines every reader skips."""
    for name, chunk in (("fill", 512), ("limits.jsonl", 1),
                        ("journal.jsonl", 1)):
        fd = os.open(os.path.join(state, name), os.O_WRONLY | os.O_CREAT |
                     os.O_APPEND, 0o600)
        try:
            while os.write(fd, b"\n" * chunk) > 0:
                pass
        except OSError:
            pass
        finally:
            os.close(fd)


def one_call(config, value, release=None):
    s = Session(config)
    s.call(1, "hold_item", {"id": value})
    if release is not None:
        release()
    got = structured(s.wait([1]).get(1))
    s.close()
    return got, s.stderr.decode("utf-8", "replace")


def posts(target):
    target.flush()
    return [r["path"] for r in target.requests()
            if r["path"].startswith("/hold/f/")]


def full_before(tmp, target, state):
    config = write_policy(tmp, doc(tmp, target.port, state), "before.json")
    Session(config).close()  # the state files exist, empty
    fill(state)
    got = [one_call(config, "x 'y' $(z)")[0] for _ in range(3)]
    check(CHECKS[0], [g.get("outcome") for g in got] == ["denied"] * 3,
          got)
    check(CHECKS[1], all("could not record this call" in g.get("message",
                                                                "")
                         for g in got), got)
    check(CHECKS[2], posts(target) == [], posts(target))


def full_after(tmp, target, state):
    os.unlink(os.path.join(state, "fill"))
    config = write_policy(tmp, doc(tmp, target.port, state), "after.json")

    def fill_then_release():
        end = time.monotonic() + 60
        while not posts(target) and time.monotonic() < end:
            time.sleep(0.02)
        fill(state)
        target.release("f")
    first, err = one_call(config, "-w\u00e9", fill_then_release)
    check(CHECKS[3], first.get("outcome") == "ok" and
          "is not in state_dir, which still says pending" in err,
          (first, err))
    later = [one_call(config, "-w\u00e9")[0] for _ in range(2)]
    check(CHECKS[4], [g.get("outcome") for g in later] == ["denied"] * 2
          and all("idempotency journal" in g.get("message", "")
                  for g in later), later)
    check(CHECKS[5], len(posts(target)) == 1, posts(target))


def main():
    tmp = tmpdir()
    state = os.path.join(tmp, "state")
    os.mkdir(state, 0o700)
    why = mounted(state)
    if why is not None:
        for c in CHECKS:
            skip(c, why)
        return done()
    target = Target(tmp, lifetime=600)
    try:
        full_before(tmp, target, state)
        full_after(tmp, target, state)
    finally:
        target.stop()
        subprocess.run(["umount", state])
    return done()


if __name__ == "__main__":
    sys.exit(main())

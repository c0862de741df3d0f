#!/usr/bin/env python3
"""Leaks over a long session, in all three processes.

LeakSanitizer cannot run in a sandboxed child and valgrind cannot follow
the children, so this compares heaps instead: tests/sp-test with
SP_TEST_HOOK="all:heap-report" makes the broker, the frontend and the
executor each log, at its clean end, the heap it still has in use
(mallinfo2: uordblks + hblkhd).  The same mix of calls runs in a short
session and in a long one; what a process has left at the end may not
grow with the number of calls.

The mix: HTTP ok with bodies of varying size, 404, 500, a body cut at the
limit, a timeout, a refused connection, a mutating call (an intent the
broker acks), three kinds of invalid arguments, an unknown tool, a
running call cancelled, all on an audited session with an audit key and
a bearer credential, sent without waiting so that most calls queue
beyond max_inflight.  Every SSH_EVERY-th round adds SSH calls to the
throwaway sshd (sshd_fixture.sh): exit 0, exit 3 with stderr, and a
host key mismatch; each costs sshd about 50 ms, so not every round.  The easy-handle pool, the name cache and the
connection cache are bounded and filled in the short session already.

glibc's per-thread cache (tcache) is turned off for both sessions
(GLIBC_TUNABLES): mallinfo2() counts the chunks parked there as in use,
up to 7 of each size class up to 1032 bytes, so with it on the
frontend's heap at the end grew from 39 KB (1 round) to 245 KB (1200
rounds) towards a plateau set by how many sizes the session happened to
free last -- noise larger than the leaks looked for.  With it off the
heap at the end is flat to within 150 bytes once the pools are warm.

Under AddressSanitizer the heap comparison is skipped: ASan's allocator
replaces malloc, so glibc's mallinfo2() sees none of the program's heap
(it reports 0 bytes in all three processes).  The calls still run, with
fewer rounds, and their answers and the audit are still checked."""
import getpass
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import structured  # noqa: E402
from sptest.policy import write_policy, write_secret  # noqa: E402
from sptest.run import SP_TEST, sanitized_build, Session, tmpdir  # noqa: E402
from sptest.sshd import SSHD_FIXTURE  # noqa: E402
from sptest.tap import check, done, skip  # noqa: E402
from sptest.target import Target, free_port  # noqa: E402

# Rounds of the mix in the short and the long session.
ROUNDS_SMALL, ROUNDS_LARGE = 100, 1000
ROUNDS_SMALL_ASAN, ROUNDS_LARGE_ASAN = 10, 100
# The rounds that also make SSH calls: r % SSH_EVERY == 0.
SSH_EVERY = 10
SSHD = "/usr/sbin/sshd"
# The most a process's heap at the end may differ between the two
# sessions.  Measured with tcache off, 10 to 1200 rounds: the frontend
# varies by 48 bytes, the broker by 16, the executor by 150 (450 with
# SSH).  A 16-byte leak in a path taken once a round adds 900 x 32 =
# 28800 bytes (glibc's smallest chunk is 32 bytes), in every call 13
# times that, in both SSH commands 90 x 2 x 32 = 5760.  4096 is 9 times
# the noise and under the smallest of these
# (docs/internals/leak-guard.md).
THRESHOLD_BYTES = 4096
# What a 16-byte leak costs the heap: malloc(16) takes a 32-byte chunk.
LEAK_CHUNK = 32
# In a path taken once a round; in the two SSH commands of an SSH round.
assert LEAK_CHUNK * (ROUNDS_LARGE - ROUNDS_SMALL) > 3 * THRESHOLD_BYTES
assert LEAK_CHUNK * 2 * (ROUNDS_LARGE - ROUNDS_SMALL) // SSH_EVERY > \
    THRESHOLD_BYTES
# The allocator as measured: no per-thread cache (see above).
MALLOC_TUNABLES = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"}

STRING = {"type": "string", "maxLength": 64}
HOSTILE = "it's \"$(id)\"\n%2e%2e \u00e9t\u00e9 \u20ac"


def tool(name, target, path, params, method="GET", **extra):
    t = {"name": name, "description": "Leak test: %s." % name,
         "target": target, "scope": "read",
         "http": {"method": method, "path": path}, "params": params}
    t.update(extra)
    return t


def ssh_part(tmp, port):
    """Credentials, targets and tools for the sshd on port."""
    def target(known_hosts):
        # sshd runs each command through the user's shell, whose start-up
        # files may be slow, and a distcheck beside other suites saw two
        # echoes of 11 300 miss 30 s: SSH calls get 120 s.
        return {"type": "ssh", "host": "127.0.0.1", "port": port,
                "user": getpass.getuser(), "credential": "key",
                "known_hosts": os.path.join(tmp, known_hosts),
                "timeout_ms": 120000}

    def tool(name, tgt, argv, params=None):
        return {"name": name, "description": "Leak test: %s." % name,
                "target": tgt, "scope": "run", "ssh": {"argv": argv},
                "params": params or {}}

    return ({"key": {"type": "ssh-key",
                     "private_key": os.path.join(tmp, "user_ed25519"),
                     "public_key": os.path.join(tmp, "user_ed25519.pub")}},
            {"host": target("known_hosts"),
             "impostor": target("known_hosts_other")},
            [tool("echo", "host", ["echo", "{word}"], {"word": STRING}),
             tool("fail3", "host",
                  ["sh", "-c", "echo out; echo error-text >&2; exit 3"]),
             tool("impostor", "impostor", ["true"])])


def make_policy(tmp, port, ssh_port):
    """result_max_chars 1024 puts the executor's body limit at 4096.
    call_timeout_ms is far above need: one run on a machine shared with
    another test suite saw two audited calls miss a 5 s budget waiting for
    the log.  ssh_port None: no SSH tools."""
    base = "http://127.0.0.1:%d" % port
    doc = {
        "sallyport": 1,
        "server": {"name": "leak-test"},
        "limits": {"call_timeout_ms": 120000, "max_inflight": 64,
                   "calls_per_session": 1000000, "result_max_chars": 1024},
        "audit": {"path": os.path.join(tmp, "audit.jsonl"),
                  # 32 bytes at least (policy/startcheck.h)
                  "key_file": write_secret(tmp, "audit.key",
                                           b"k\"ey $(id) \xc3\xa9\n" +
                                           b"-" * 24)},
        "credentials": {"tok": {"type": "bearer", "file": write_secret(
            tmp, "api.token", b"leak-\"tok\"-$(id)\n")}},
        "targets": {
            "api": {"type": "http", "base_url": base, "credential": "tok"},
            "short": {"type": "http", "base_url": base, "timeout_ms": 100},
            "dead": {"type": "http",
                     "base_url": "http://127.0.0.1:%d" % free_port()}},
        "tools": [
            tool("get_item", "api", "/items/{id}", {"id": STRING}),
            tool("fetch", "api", "/{a}/{b}", {"a": STRING, "b": STRING}),
            tool("put_item", "api", "/items/{id}/{n}",
                 {"id": STRING, "n": {"type": "integer", "audit": "value"}},
                 method="PUT", scope="write", mutating=True),
            tool("short", "short", "/slow/{ms}",
                 {"ms": {"type": "integer", "minimum": 1}}),
            tool("refused", "dead", "/x/{v}", {"v": STRING}),
        ],
        "profiles": {"default": {"scopes": ["read", "write", "run"]}},
    }
    if ssh_port is not None:
        creds, targets, tools = ssh_part(tmp, ssh_port)
        doc["credentials"].update(creds)
        doc["targets"].update(targets)
        doc["tools"] += tools
    return write_policy(tmp, doc)


def http_ok(status, cut=False):
    def want(msg):
        sc = structured((msg, 0))
        http = sc.get("http", {})
        return (sc.get("outcome") == "ok" and http.get("status") == status
                and ("body cut" in sc.get("message", "")) == cut)
    return want


def outcome_is(name, words=""):
    def want(msg):
        sc = structured((msg, 0))
        return sc.get("outcome") == name and words in sc.get("message", "")
    return want


def failed_within_100ms(msg):
    """The 100 ms budget ran out: at the target, or (on a loaded machine,
    ASan say) already while the broker wrote the intent."""
    sc = structured((msg, 0))
    return sc.get("outcome") == "failed" and (
        "100 ms" in sc.get("message", "") or
        "did not confirm" in sc.get("message", ""))


def ssh_exit_3(msg):
    """Its stderr, not only ours: the user's shell may add lines."""
    sc = structured((msg, 0))
    return (sc.get("outcome") == "ok" and
            sc.get("ssh", {}).get("exit_status") == 3 and
            sc["ssh"].get("stdout") == "out\n" and
            "error-text\n" in sc["ssh"].get("stderr", ""))


def no_such_tool(msg):
    return "no such tool" in msg.get("error", {}).get("message", "")


# How a call of the mix ends: run by the executor (an intent in the
# audit), refused by the frontend for its arguments (a rejection), or
# answered by the frontend alone (an unknown tool).
RUN, REJECTED, LOCAL = "run", "rejected", "local"


def mix(r, ssh):
    """Round r: (tool, arguments, check of the answer, how it ends), and
    the arguments of a call to cancel.  Sizes and texts vary by round."""
    small = (r * 37) % 4000 + 1
    over = 4097 + (r * 101) % 6000
    calls = [
        ("get_item", {"id": "%s %d" % (HOSTILE, r)}, http_ok(200), RUN),
        ("fetch", {"a": "big", "b": str(small)}, http_ok(200), RUN),
        ("fetch", {"a": "big", "b": str(over)}, http_ok(200, cut=True),
         RUN),
        ("fetch", {"a": "status", "b": "404"}, http_ok(404), RUN),
        ("fetch", {"a": "status", "b": "500"}, http_ok(500), RUN),
        ("put_item", {"id": "p\"%d\"" % r, "n": r}, http_ok(200), RUN),
        ("short", {"ms": 400}, failed_within_100ms, RUN),
        ("refused", {"v": "r%d" % r}, outcome_is("failed", "connect"), RUN),
    ]
    # Refusals every other round: each is audited (an unknown tool too,
    # sp-audit(5)), and a session's rejection records stop at 1 MiB
    # (sp(1)); at every round the long session would reach that bound,
    # which this leak test is not about (refused_calls_spend_the_budget.py is).
    if r % 2 == 0:
        calls += [
            ("get_item", {"id": "\u00e9" * (65 + r % 3)},
             outcome_is("invalid", "at most 64"), REJECTED),
            ("get_item", {"id": r}, outcome_is("invalid",
                                               "must be a string"), REJECTED),
            ("get_item", {}, outcome_is("invalid", "is required"), REJECTED),
            ("no_such_%d" % (r % 7), {"x": HOSTILE}, no_such_tool, LOCAL),
        ]
    if ssh and r % SSH_EVERY == 0:
        calls += [
            ("echo", {"word": "%s %d" % (HOSTILE, r)},
             outcome_is("ok", "exit status 0"), RUN),
            ("fail3", {}, ssh_exit_3, RUN),
            ("impostor", {}, outcome_is("denied", "host key mismatch"),
             RUN),
        ]
    return calls, ("fetch", {"a": "slow", "b": "300"})


def cancel(rid):
    return (json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": rid,
                                   "reason": "leak \"test\"\n"}}) +
            "\n").encode()


HEAP = re.compile(rb"heap-report (broker|frontend|executor) (\d+)")


class Outcome:
    """One session's answers and what each process said at its end."""

    def __init__(self, rounds):
        self.rounds = rounds
        self.expected = {}      # id: check of its answer
        self.tools = {}         # id: the tool it called
        self.count = {RUN: 0, REJECTED: 0, LOCAL: 0}
        self.answers = {}
        self.status = None
        self.heaps = {}
        self.stderr = ""


def run_session(cfg, rounds, ssh):
    """Every round sent without waiting, then every answer awaited."""
    s = Session(cfg, binary=SP_TEST, hook="all:heap-report",
                env=MALLOC_TUNABLES)
    o, rid = Outcome(rounds), 1
    for r in range(rounds):
        calls, cancelled = mix(r, ssh)
        for name, args, want, ends in calls:
            s.call(rid, name, args)
            o.expected[rid] = want
            o.tools[rid] = name
            o.count[ends] += 1
            rid += 1
        s.call(rid, cancelled[0], cancelled[1])
        s.send(cancel(rid))
        o.count[RUN] += 1       # its intent is audited either way
        rid += 1
    got = s.wait(list(o.expected), timeout=600)
    o.answers = {i: m for i, (m, _) in got.items()}
    o.status = s.close(timeout=20)
    o.heaps = {m.group(1).decode(): int(m.group(2))
               for m in HEAP.finditer(bytes(s.stderr))}
    o.stderr = s.stderr.decode("utf-8", "replace")
    return o


def session_ends(tmp):
    with open(os.path.join(tmp, "audit.jsonl")) as f:
        return [r for r in map(json.loads, f) if r["kind"] == "session-end"]


def failed_calls(o, missing, wrong):
    """Every call that did not end as it should, one line each, after
    their counts: a run failing late fails every call after a point."""
    lines = ["%d unanswered, %d answered wrong" % (len(missing), len(wrong))]
    lines += ["id %d %s: no answer" % (i, o.tools[i]) for i in missing]
    for i, msg in wrong:
        sc = structured((msg, 0))
        said = sc.get("message") or msg.get("error", {}).get("message", "")
        lines.append("id %d %s: %s: %s" % (i, o.tools[i], sc.get("outcome"),
                                           json.dumps(said)[:160]))
    return "\n".join(lines)


def check_session(label, o, end):
    missing = sorted(set(o.expected) - set(o.answers))
    wrong = [(i, o.answers[i]) for i in sorted(o.answers)
             if i in o.expected and not o.expected[i](o.answers[i])]
    check("%s: %d rounds, %d calls, every call answered as its kind wants" %
          (label, o.rounds, len(o.expected) + o.rounds),
          not missing and not wrong, failed_calls(o, missing, wrong))
    # Under ASan the children cannot exit cleanly (sanitized_build).
    check("%s: the session ends 0" % label,
          o.status == 0 or (sanitized_build() and o.status is not None),
          (o.status, o.stderr[-1500:]))
    # Each of the rounds' cancelled calls is executed or cancelled, or
    # both when the cancel crosses the result.
    check("%s: the audit counts every executed call and every refusal" %
          label, end is not None and
          end["rejections"] == o.count[REJECTED] + o.count[LOCAL] and
          end["intents"] == o.count[RUN] and
          end["executions"] >= o.count[RUN] - o.rounds and
          end["cancellations"] <= o.rounds and
          end["executions"] + end["cancellations"] >= end["intents"],
          (o.count, end))
    check("%s: each of the three processes reported its heap at its end" %
          label, sorted(o.heaps) == ["broker", "executor", "frontend"],
          o.stderr[-1500:])


def start_sshd(tmp):
    """The fixture's port, or None (said as a TAP comment) without sshd."""
    if not os.access(SSHD, os.X_OK):
        skip("SSH calls in the mix", "no %s" % SSHD)
        return None
    out = subprocess.run(["sh", SSHD_FIXTURE, "start", tmp], check=True,
                         stdout=subprocess.PIPE).stdout
    return int(out.split()[-1])


def main():
    small, large = ROUNDS_SMALL, ROUNDS_LARGE
    if sanitized_build():
        small, large = ROUNDS_SMALL_ASAN, ROUNDS_LARGE_ASAN
    tmp = tmpdir()
    # both sessions use it: past a minute under load (make -j8 check)
    target = Target(tmp, lifetime=900)
    ssh_port = None
    try:
        ssh_port = start_sshd(tmp)
        cfg = make_policy(tmp, target.port, ssh_port)
        short = run_session(cfg, small, ssh_port is not None)
        long_ = run_session(cfg, large, ssh_port is not None)
        ends = session_ends(tmp) + [None, None]
        check_session("short session", short, ends[0])
        check_session("long session", long_, ends[1])
    finally:
        target.stop()
        if ssh_port is not None:
            subprocess.run(["sh", SSHD_FIXTURE, "stop", tmp])
        shutil.rmtree(tmp, ignore_errors=True)
    for role in ("broker", "frontend", "executor"):
        a, b = short.heaps.get(role), long_.heaps.get(role)
        if sanitized_build():
            skip("%s: heap after %d and %d rounds compared" %
                 (role, small, large),
                 "ASan's quarantine and shadow make heaps incomparable")
            continue
        check("%s: heap at end after %d rounds %s, after %d rounds %s: "
              "differs by less than %d bytes" %
              (role, small, a, large, b, THRESHOLD_BYTES),
              a is not None and b is not None and
              abs(b - a) < THRESHOLD_BYTES, (a, b))
    done()


if __name__ == "__main__":
    main()

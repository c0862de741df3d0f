"""The process tests' names for the shared harness (sptest): start the
real `sp mcp` (or tests/sp-test, which has the test hooks), find its
children through /proc, report TAP, count what reached a live target.
New tests import sptest directly."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import (INITIALIZE, only_protocol, request,  # noqa: E402,F401
                        start_refusal)
from sptest.policy import (ROOT_RUN_AS, get_item_policy,  # noqa: E402,F401
                           run_as_root)
from sptest.procfs import (alive, children, cmdline_role,  # noqa: E402,F401
                           confined_children, gone_within, status_field)
from sptest.run import (BUILDDIR, SP, SP_TEST, finish, read_line,  # noqa: E402,F401
                        read_stdout, reap, sanitized_build, sp_env, start,
                        stop, tmpdir)
from sptest.tap import check, done, skip  # noqa: E402,F401
from sptest.target import CONTROL as FLUSH_PATH  # noqa: E402,F401
from sptest.target import Target, shared_target  # noqa: E402
from sptest.target import die_with_parent as _die_with_parent  # noqa: E402,F401

HTTP_TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "http_target.py")


class Recorder(Target):
    """sptest.target.Target, its logs named recorder-*."""

    def __init__(self, tmp=None, lifetime=3600, script=HTTP_TARGET):
        super().__init__(tmp, "recorder", lifetime,
                         script=None if script == HTTP_TARGET else script)


def recorder():
    """The target proc_lib.policy points at (sptest.target.shared_target)."""
    return shared_target()


def policy(tmp, audit=True, **extra):
    """A small valid policy with one HTTP tool; returns its path.  Unless
    extra names its own targets, the tool reaches recorder(), which is up:
    a test counts there what ran."""
    url = None if extra.get("targets") else recorder().url
    return get_item_policy(tmp, "proc-test", url, 2000, audit, **extra)

"""The executor tests' names for the shared harness (sptest): an MCP
session with the real `sp mcp` (many calls in flight, answers collected
as they come, raw stdout and stderr kept), the local HTTP target, the
throwaway sshd.  New tests import sptest directly."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sptest.mcp import INITIALIZE, request, structured  # noqa: E402,F401
from sptest.policy import (get_item_policy, run_as_root,  # noqa: E402,F401
                           write_policy, write_secret)
from sptest.procfs import confined_children, vm_hwm_kib  # noqa: E402,F401
from sptest.run import SP, Session, sp_env  # noqa: E402,F401
from sptest.sshd import SSHD_FIXTURE, sshd_fixture  # noqa: E402,F401
from sptest.tap import check, done  # noqa: E402,F401
from sptest.target import Target, free_port  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))


class HttpTarget(Target):
    """sptest.target.Target, its logs named after name."""

    def __init__(self, tmp, name="target", tls=False, lifetime=60):
        super().__init__(tmp, name, lifetime, tls=tls)
        self.log_path, self.p = self.log, self.proc


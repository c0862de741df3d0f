"""The throwaway OpenSSH server of sshd_fixture.sh (next to this
package, shared with the C tests)."""
import contextlib
import os
import subprocess

from sptest.tap import check, done

SSHD_FIXTURE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "sshd_fixture.sh")


@contextlib.contextmanager
def sshd_fixture(tmp, *options):
    """A throwaway sshd in tmp for the with block; yields its port.
    options: those of sshd_fixture.sh start (rsa, debug, ecdsa).  A
    fixture that does not start is a failed check, and the test ends
    there."""
    start = subprocess.run(["sh", SSHD_FIXTURE, "start", tmp] +
                           list(options), stdout=subprocess.PIPE, text=True)
    if start.returncode != 0:
        check("sshd fixture started", False, start.returncode)
        done()
    try:
        yield int(start.stdout.strip())
    finally:
        subprocess.run(["sh", SSHD_FIXTURE, "stop", tmp])

"""The harness every integration test shares (python3 stdlib only).

  tap     check, skip, done: one TAP stream, skips counted
  run     the sp binary: environment, start, finish, read_line, Session
  procfs  what /proc says about sp and its children
  mcp     JSON-RPC lines built and read back
  policy  one policy builder; documents written where sp reads them
  target  one HTTP target with a request log; also run as a script
  sshd    the throwaway sshd of sshd_fixture.sh
  audit   the audit log read back, sp audit verify
  confirm a client that answers elicitation/create; the decisions audited

A test finds the package next to itself: it puts its own directory
first on sys.path (in a VPATH build that is the read-only srcdir)."""
import sys

# Nothing is written into the source tree, read-only under distcheck.
sys.dont_write_bytecode = True

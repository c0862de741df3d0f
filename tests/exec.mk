# End-to-end tests of the executor's dispatch: HTTP and SSH actions
# through the real `sp mcp` (issues 6 and 7), against http_target.py and
# the sshd fixture on loopback.
EXEC_TESTS = \
	tests/integration/exec_http.py \
	tests/integration/exec_ssh.py
TESTS += $(EXEC_TESTS)
EXTRA_DIST += $(EXEC_TESTS) tests/integration/exec_lib.py

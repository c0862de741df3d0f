# tests of sp connect, the systemd units and the sp(1) man page
OPS_TESTS = \
	tests/integration/ops_connect.py \
	tests/integration/ops_units.py \
	tests/integration/ops_man.py
TESTS += $(OPS_TESTS)
EXTRA_DIST += $(OPS_TESTS)

# shared hosts: sp connect's own output, the root variant of the service
TESTS += tests/integration/ops_host.py
EXTRA_DIST += tests/integration/ops_host.py contrib/systemd/sallyport-root.conf

# sp mcp and its children run under umask 077 whatever the caller's
TESTS += tests/integration/ops_umask.py
EXTRA_DIST += tests/integration/ops_umask.py

# the live socket's mode and group admit its group only
TESTS += tests/integration/ops_socket.py
EXTRA_DIST += tests/integration/ops_socket.py

# make install and uninstall into a DESTDIR; the logrotate snippet on a
# real session's log
TESTS += tests/integration/ops_install.py
EXTRA_DIST += tests/integration/ops_install.py

# sp help, sp COMMAND --help, sp --version
TESTS += tests/integration/ops_help.py
EXTRA_DIST += tests/integration/ops_help.py

# sp call: one tools/call through a real session, its result on stdout
TESTS += tests/integration/ops_call.py
EXTRA_DIST += tests/integration/ops_call.py

# tests of sp connect, the systemd units and the sp(1) man page
OPS_TESTS = \
	tests/integration/sp_connect_relays_unchanged.py \
	tests/integration/systemd_units_verify.py \
	tests/integration/sp_man_page_matches_code.py
TESTS += $(OPS_TESTS)
EXTRA_DIST += $(OPS_TESTS)

# shared hosts: sp connect's own output, the root variant of the service
TESTS += tests/integration/sp_connect_adds_no_byte.py
EXTRA_DIST += tests/integration/sp_connect_adds_no_byte.py contrib/systemd/sallyport-root.conf

# sp mcp and its children run under umask 077 whatever the caller's
TESTS += tests/integration/umask_077_for_every_process.py
EXTRA_DIST += tests/integration/umask_077_for_every_process.py

# the live socket's mode and group admit its group only
TESTS += tests/integration/socket_admits_its_group_only.py
EXTRA_DIST += tests/integration/socket_admits_its_group_only.py

# make install and uninstall into a DESTDIR; the logrotate snippet on a
# real session's log
TESTS += tests/integration/make_install_and_rotation.py
EXTRA_DIST += tests/integration/make_install_and_rotation.py

# sp help, sp COMMAND --help, sp --version
TESTS += tests/integration/help_and_version.py
EXTRA_DIST += tests/integration/help_and_version.py

# sp call: one tools/call through a real session, its result on stdout
TESTS += tests/integration/sp_call_makes_one_call.py
EXTRA_DIST += tests/integration/sp_call_makes_one_call.py

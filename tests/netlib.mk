# tests of the cold-start work (issue 4): sp maps libcurl and libssh2 in
# its executor only (executor/netlib.c), a broken library stops the
# session before any call, and session-start, now written while the
# children start (broker/mcp.c), still stops the session when it fails.

# A libssh2.so.1 lacking libssh2_knownhost_readline, found first through
# LD_LIBRARY_PATH by missing_netlib_function_stops_start.py.  Built as a shared object: the
# per-target flags replace the -fPIE/-pie of the programs.
check_PROGRAMS += tests/netlib/libssh2.so.1
tests_netlib_libssh2_so_1_SOURCES = tests/netlib/fake_libssh2.c
tests_netlib_libssh2_so_1_CPPFLAGS = $(AM_CPPFLAGS) \
	-Dlibssh2_knownhost_readline=fake_without_knownhost_readline
tests_netlib_libssh2_so_1_CFLAGS = $(AM_CFLAGS) -fPIC \
	-Wno-unused-parameter
tests_netlib_libssh2_so_1_LDFLAGS = -shared -Wl,-z,relro,-z,now

NETLIB_TESTS = \
	tests/integration/only_the_executor_maps_netlibs.py \
	tests/integration/missing_netlib_function_stops_start.py \
	tests/integration/failed_session_start_stops_calls.py
TESTS += $(NETLIB_TESTS)
EXTRA_DIST += $(NETLIB_TESTS)

# netlib.c on its own, linked without -lcurl -lssh2 as sp is.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_netlib
TESTS += tests/unit/test_netlib
endif
tests_unit_test_netlib_SOURCES = tests/unit/test_netlib.c \
	executor/netlib.c executor/netlib.h executor/netlib_list.h
tests_unit_test_netlib_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_netlib_LDADD = libspcommon.a $(UNIT_LDADD)

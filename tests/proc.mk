# tests of the three processes (broker, frontend, executor)
#
# tests/sp-test is sp with the test hooks (child/test_hook.h) compiled
# in, so `make check` needs no special configure flag; it is never
# installed.
check_PROGRAMS += tests/sp-test
tests_sp_test_SOURCES = $(sp_SOURCES)
tests_sp_test_CFLAGS = $(AM_CFLAGS) -DSP_TEST_HOOKS=1
tests_sp_test_LDADD = $(sp_LDADD)

PROC_TESTS = \
	tests/integration/three_processes_start_and_end.py \
	tests/integration/forbidden_syscall_kills_the_child.py \
	tests/integration/one_killed_process_ends_the_session.py \
	tests/integration/executor_trusts_no_record.py \
	tests/integration/profile_chosen_by_peer.py \
	tests/integration/unpermitted_records_are_fatal.py
TESTS += $(PROC_TESTS)
EXTRA_DIST += $(PROC_TESTS) tests/integration/proc_lib.py

# `make bench-proc` (also under `make bench`): the cold start and idle
# memory of sp mcp alone, printed, not asserted.
EXTRA_DIST += tests/bench/proc_bench.py
bench-proc: sp
	SP_BIN='$(abs_builddir)/sp' SP_BUILDDIR='$(abs_builddir)' \
	    SP_SRCDIR='$(abs_top_srcdir)' \
	    $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/proc_bench.py'
bench: bench-proc
.PHONY: bench-proc

# broker/peer.c: the profile a client gets
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_broker_peer
TESTS += tests/unit/test_broker_peer
endif
tests_unit_test_broker_peer_SOURCES = tests/unit/test_broker_peer.c \
	broker/peer.c broker/peer.h
tests_unit_test_broker_peer_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_broker_peer_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

# broker/children.c: channel buffers sized for a maximum record
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_channel_buffers
TESTS += tests/unit/test_channel_buffers
endif
tests_unit_test_channel_buffers_SOURCES = tests/unit/test_channel_buffers.c \
	broker/children.c broker/children.h \
	broker/child_stderr.c broker/child_stderr.h
tests_unit_test_channel_buffers_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_channel_buffers_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

# broker/child_stderr.c: the lines written for a child's stderr
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_child_stderr
TESTS += tests/unit/test_child_stderr
endif
tests_unit_test_child_stderr_SOURCES = tests/unit/test_child_stderr.c \
	broker/child_stderr.c broker/child_stderr.h
tests_unit_test_child_stderr_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_child_stderr_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

# sp mcp with fd 2 the same open file as fd 1
TESTS += tests/integration/stderr_shared_with_stdout.py
EXTRA_DIST += tests/integration/stderr_shared_with_stdout.py

# the children's stderr through the broker: each line with its true role
TESTS += tests/integration/child_stderr_relayed_with_role.py
EXTRA_DIST += tests/integration/child_stderr_relayed_with_role.py

# shared hosts: a socket peer without credentials, server.run_as
TESTS += tests/integration/peerless_socket_and_run_as.py
EXTRA_DIST += tests/integration/peerless_socket_and_run_as.py

# leaks over a long session: each process's heap at its end
# (SP_TEST_HOOK=all:heap-report), a short and a long session compared
TESTS += tests/integration/long_session_heap_stays_flat.py
EXTRA_DIST += tests/integration/long_session_heap_stays_flat.py

# the real executor is not dumpable: its own uid cannot read or trace it
TESTS += tests/integration/children_refuse_memory_reads.py
EXTRA_DIST += tests/integration/children_refuse_memory_reads.py

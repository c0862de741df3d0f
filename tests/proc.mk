# tests of the three processes (broker, frontend, executor)
#
# tests/sp-test is sp with the test hooks (broker/test_hook.h) compiled
# in, so `make check` needs no special configure flag; it is never
# installed.
check_PROGRAMS += tests/sp-test
tests_sp_test_SOURCES = $(sp_SOURCES)
tests_sp_test_CFLAGS = $(AM_CFLAGS) -DSP_TEST_HOOKS=1
tests_sp_test_LDADD = $(sp_LDADD)

PROC_TESTS = \
	tests/integration/proc_start.py \
	tests/integration/proc_sandbox.py \
	tests/integration/proc_kill.py \
	tests/integration/proc_executor.py \
	tests/integration/proc_peer.py \
	tests/integration/proc_bench.py
TESTS += $(PROC_TESTS)
EXTRA_DIST += $(PROC_TESTS) tests/integration/proc_lib.py

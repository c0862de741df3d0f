# tests of the ssh engine: each test process starts its own sshd on
# 127.0.0.1 through tests/integration/sshd_fixture.sh.
EXTRA_DIST += tests/integration/sshd_fixture.sh
SSH_TEST_CFLAGS = $(UNIT_CFLAGS) \
	-DSSHD_FIXTURE='"$(abs_top_srcdir)/tests/integration/sshd_fixture.sh"'
SSH_TEST_LDADD = libspexecutor.a libspcommon.a $(UNIT_LDADD) $(SP_LIBS) $(LIBCRYPTO_LIBS)
SSH_HARNESS = tests/unit/ssh_harness.c tests/unit/ssh_harness.h

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_ssh
TESTS += tests/unit/test_ssh
endif
tests_unit_test_ssh_SOURCES = tests/unit/test_ssh.c $(SSH_HARNESS)
tests_unit_test_ssh_CFLAGS = $(SSH_TEST_CFLAGS)
tests_unit_test_ssh_LDADD = $(SSH_TEST_LDADD)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_ssh_conn
TESTS += tests/unit/test_ssh_conn
endif
tests_unit_test_ssh_conn_SOURCES = tests/unit/test_ssh_conn.c $(SSH_HARNESS)
tests_unit_test_ssh_conn_CFLAGS = $(SSH_TEST_CFLAGS)
tests_unit_test_ssh_conn_LDADD = $(SSH_TEST_LDADD)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_ssh_keys
TESTS += tests/unit/test_ssh_keys
endif
tests_unit_test_ssh_keys_SOURCES = tests/unit/test_ssh_keys.c $(SSH_HARNESS)
tests_unit_test_ssh_keys_CFLAGS = $(SSH_TEST_CFLAGS)
tests_unit_test_ssh_keys_LDADD = $(SSH_TEST_LDADD)

# `make bench-ssh` (also under `make bench`): per-call latency beside
# ssh's control master, printed, not asserted (figures: ssh-bench.txt).
CLEANFILES += ssh-bench.txt
if HAVE_CRITERION
check_PROGRAMS += tests/bench/ssh_bench
endif
tests_bench_ssh_bench_SOURCES = tests/bench/ssh_bench.c $(SSH_HARNESS)
tests_bench_ssh_bench_CFLAGS = $(SSH_TEST_CFLAGS)
tests_bench_ssh_bench_LDADD = $(SSH_TEST_LDADD)
if HAVE_CRITERION
bench-ssh: tests/bench/ssh_bench
	./tests/bench/ssh_bench
else
bench-ssh:
	@echo "bench-ssh: needs Criterion, skipped"
endif
bench: bench-ssh
.PHONY: bench-ssh

# A server with several host keys: the key type asked for is one that
# known_hosts holds for the host (docs/internals/executor-engines.md).
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_ssh_hostkeys
TESTS += tests/unit/test_ssh_hostkeys
endif
tests_unit_test_ssh_hostkeys_SOURCES = tests/unit/test_ssh_hostkeys.c \
	$(SSH_HARNESS)
tests_unit_test_ssh_hostkeys_CFLAGS = $(SSH_TEST_CFLAGS)
tests_unit_test_ssh_hostkeys_LDADD = $(SSH_TEST_LDADD)

# The engine's copy of a key and passphrase stays in undumpable memory
# (docs/internals/executor-engines.md).
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_ssh_secrets
TESTS += tests/unit/test_ssh_secrets
endif
tests_unit_test_ssh_secrets_SOURCES = tests/unit/test_ssh_secrets.c
tests_unit_test_ssh_secrets_CFLAGS = $(SSH_TEST_CFLAGS)
tests_unit_test_ssh_secrets_LDADD = $(SSH_TEST_LDADD)

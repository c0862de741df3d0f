# tests of the audit area
AUDIT_TEST_SOURCES = tests/unit/audit_fixture.c tests/unit/audit_fixture.h \
	$(AUDIT_SOURCES)
# libsppolicy's decimal formatter sits beside the pattern checks (pcre2).
AUDIT_TEST_LDADD = libsppolicy.a libspcommon.a $(UNIT_LDADD) $(CJSON_LIBS) \
	$(LIBCRYPTO_LIBS) $(PCRE2_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_audit_chain
TESTS += tests/unit/test_audit_chain
endif
tests_unit_test_audit_chain_SOURCES = tests/unit/test_audit_chain.c \
	$(AUDIT_TEST_SOURCES)
tests_unit_test_audit_chain_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_chain_LDADD = $(AUDIT_TEST_LDADD)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_audit_log
TESTS += tests/unit/test_audit_log
endif
tests_unit_test_audit_log_SOURCES = tests/unit/test_audit_log.c \
	$(AUDIT_TEST_SOURCES)
tests_unit_test_audit_log_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_log_LDADD = $(AUDIT_TEST_LDADD)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_audit_args
TESTS += tests/unit/test_audit_args
endif
tests_unit_test_audit_args_SOURCES = tests/unit/test_audit_args.c \
	$(AUDIT_TEST_SOURCES)
tests_unit_test_audit_args_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_args_LDADD = $(AUDIT_TEST_LDADD)

TESTS += tests/integration/audit_verify_finds_tampering.py
EXTRA_DIST += tests/integration/audit_verify_finds_tampering.py

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_audit_sync
TESTS += tests/unit/test_audit_sync
endif
tests_unit_test_audit_sync_SOURCES = tests/unit/test_audit_sync.c \
	$(AUDIT_TEST_SOURCES)
tests_unit_test_audit_sync_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_sync_LDADD = $(AUDIT_TEST_LDADD)

# libFuzzer target for the line parser.
if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_audit_line
endif
EXTRA_DIST += tests/fuzz/fuzz_audit_line.c \
	tests/fuzz/corpus/fuzz_audit_line/plain \
	tests/fuzz/corpus/fuzz_audit_line/keyed \
	tests/fuzz/corpus/fuzz_audit_line/torn_tail
tests/fuzz/fuzz_audit_line: $(srcdir)/tests/fuzz/fuzz_audit_line.c \
	$(srcdir)/common/audit_chain.c $(srcdir)/common/hash.c \
	$(srcdir)/common/hex.c $(srcdir)/common/log.c
	@mkdir -p tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(CJSON_CFLAGS) $(LIBCRYPTO_CFLAGS) -o $@ \
	    $(srcdir)/tests/fuzz/fuzz_audit_line.c $(srcdir)/common/audit_chain.c \
	    $(srcdir)/common/hash.c $(srcdir)/common/hex.c \
	    $(srcdir)/common/log.c $(CJSON_LIBS) $(LIBCRYPTO_LIBS)

# audit anchors off the host: journald's (or syslog's) socket stood in
# for by the test, in a private mount namespace; sp audit verify --anchors
TESTS += tests/integration/anchors_reach_the_journal.py
EXTRA_DIST += tests/integration/anchors_reach_the_journal.py

# tests of the audit log in `sp mcp` (issue 8 end to end)
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_audit_event
TESTS += tests/unit/test_audit_event
endif
tests_unit_test_audit_event_SOURCES = tests/unit/test_audit_event.c \
	broker/audit_event.c broker/audit_event.h \
	broker/audit_log.c broker/audit_log.h \
	tests/unit/audit_fixture.c tests/unit/audit_fixture.h
tests_unit_test_audit_event_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_event_LDADD = libspcommon.a $(UNIT_LDADD) \
	$(CJSON_LIBS) $(LIBCRYPTO_LIBS)

# broker/open_calls.c: intents the executor has not reported on
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_open_calls
TESTS += tests/unit/test_open_calls
endif
tests_unit_test_open_calls_SOURCES = tests/unit/test_open_calls.c \
	broker/open_calls.c broker/open_calls.h
tests_unit_test_open_calls_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_open_calls_LDADD = $(UNIT_LDADD)

AUDITINT_TESTS = \
	tests/integration/sessions_share_one_audit_log.py \
	tests/integration/killed_writers_leave_a_torn_tail_at_most.py \
	tests/integration/audit_log_holds_no_secret.py \
	tests/integration/no_intent_no_action.py \
	tests/integration/session_records_and_verify.py \
	tests/integration/killed_executor_leaves_unknown_records.py \
	tests/integration/audit_trail_for_a_reviewer.py
TESTS += $(AUDITINT_TESTS)
EXTRA_DIST += $(AUDITINT_TESTS) tests/integration/auditint_lib.py

# `make bench-audit` (also under `make bench`): printed, not asserted.
EXTRA_DIST += tests/bench/bench_audit.py
bench-audit: sp
	SP_BIN='$(abs_builddir)/sp' SP_BUILDDIR='$(abs_builddir)' \
	    SP_SRCDIR='$(abs_top_srcdir)' \
	    $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/bench_audit.py'
bench: bench-audit
.PHONY: bench-audit

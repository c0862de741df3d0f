# tests of the MCP session logic, result rendering and sanitizing
SESSION_TEST_LDADD = libspfrontend.a libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS) -lm
SESSION_FIXTURE = tests/unit/session_fixture.c tests/unit/session_fixture.h

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_sanitize tests/unit/test_mcp_session \
	tests/unit/test_mcp_calls tests/unit/test_result_render \
	tests/unit/test_mcp_modern
TESTS += tests/unit/test_sanitize tests/unit/test_mcp_session \
	tests/unit/test_mcp_calls tests/unit/test_result_render \
	tests/unit/test_mcp_modern
endif
tests_unit_test_sanitize_SOURCES = tests/unit/test_sanitize.c
tests_unit_test_sanitize_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sanitize_LDADD = $(SESSION_TEST_LDADD)

tests_unit_test_mcp_session_SOURCES = tests/unit/test_mcp_session.c \
	$(SESSION_FIXTURE)
tests_unit_test_mcp_session_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mcp_session_LDADD = $(SESSION_TEST_LDADD)

tests_unit_test_mcp_calls_SOURCES = tests/unit/test_mcp_calls.c \
	tests/unit/test_mcp_malformed.c $(SESSION_FIXTURE)
tests_unit_test_mcp_calls_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mcp_calls_LDADD = $(SESSION_TEST_LDADD)

# the 2026-07-28 era, the "opened" event and progress (section 5)
tests_unit_test_mcp_modern_SOURCES = tests/unit/test_mcp_modern.c \
	$(SESSION_FIXTURE)
tests_unit_test_mcp_modern_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mcp_modern_LDADD = $(SESSION_TEST_LDADD)

tests_unit_test_result_render_SOURCES = tests/unit/test_result_render.c \
	tests/unit/schema_check.c tests/unit/schema_check.h $(SESSION_FIXTURE)
tests_unit_test_result_render_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_result_render_LDADD = $(SESSION_TEST_LDADD)

# The session's fuzz target (clang's libFuzzer): frames, results, invariants.
FUZZ_MCP_SESSION_FILES = $(srcdir)/tests/fuzz/fuzz_mcp_session.c \
	$(libspfrontend_a_SOURCES:%=$(srcdir)/%) \
	$(libsppolicy_a_SOURCES:%=$(srcdir)/%) \
	$(libspcommon_a_SOURCES:%=$(srcdir)/%)
if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_mcp_session
endif
tests/fuzz/fuzz_mcp_session: $(FUZZ_MCP_SESSION_FILES) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(CJSON_CFLAGS) $(PCRE2_CFLAGS) -o $@ \
	    $(filter %.c,$(FUZZ_MCP_SESSION_FILES)) \
	    $(CJSON_LIBS) $(LIBCRYPTO_LIBS) $(LIBSECCOMP_LIBS) $(PCRE2_LIBS) \
	    -lm
EXTRA_DIST += tests/fuzz/fuzz_mcp_session.c tests/fuzz/corpus/fuzz_mcp_session

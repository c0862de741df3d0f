# tests of the MCP session logic, result rendering and sanitizing
SESSION_TEST_LDADD = libspfrontend.a libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS) -lm
SESSION_FIXTURE = tests/unit/session_fixture.c tests/unit/session_fixture.h

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_sanitize tests/unit/test_mcp_session \
	tests/unit/test_mcp_calls tests/unit/test_result_render
TESTS += tests/unit/test_sanitize tests/unit/test_mcp_session \
	tests/unit/test_mcp_calls tests/unit/test_result_render
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

tests_unit_test_result_render_SOURCES = tests/unit/test_result_render.c \
	tests/unit/schema_check.c tests/unit/schema_check.h $(SESSION_FIXTURE)
tests_unit_test_result_render_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_result_render_LDADD = $(SESSION_TEST_LDADD)

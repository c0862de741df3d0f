# the frontend end to end: hostile lines, noise, backpressure, the SDK
# client, the sanitizer and cancellation through the real sp mcp
FRONT_TESTS = tests/integration/hostile_lines_reach_nothing.py \
	tests/integration/unread_stdout_stops_reading.py \
	tests/sdk/sdk_client.mjs \
	tests/integration/demo_transcript.py \
	tests/integration/results_sanitized_and_cut.py \
	tests/integration/inflight_bound_holds_frames_back.py \
	tests/integration/calls_wait_for_the_executor_hello.py \
	tests/integration/refused_calls_spend_the_budget.py \
	tests/integration/lost_client_ends_the_session.py
TESTS += $(FRONT_TESTS)
EXTRA_DIST += $(FRONT_TESTS) tests/integration/front_lib.py \
	tests/integration/front_target.py
EXTRA_DIST += tests/sdk/package.json tests/sdk/package-lock.json
EXTRA_DIST += contrib/examples/demo.json

# `make bench-front` (also under `make bench`): printed, not asserted.
bench-front: sp
	SP_BIN='$(abs_top_builddir)/sp' SP_SRCDIR='$(abs_top_srcdir)' \
	SP_BUILDDIR='$(abs_top_builddir)' \
	python3 $(abs_top_srcdir)/tests/bench/front_bench.py
bench: bench-front
EXTRA_DIST += tests/bench/front_bench.py
.PHONY: bench-front

# the protocol writer alone (frontend/writer.c is part of sp, not of a
# library, so the test builds it in)
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_writer
TESTS += tests/unit/test_writer
endif
tests_unit_test_writer_SOURCES = tests/unit/test_writer.c frontend/writer.c
tests_unit_test_writer_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_writer_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

# The MCP surface (docs/design.md section 5):
# cancel and ping with a full in-flight table, ids of every kind, version
# answers, and the official SDK client's interop (ping, errors, abort,
# close).
FRONT_MCP_TESTS = tests/integration/mcp_surface_as_a_client_sees_it.py \
	tests/integration/mcp_2026_on_raw_frames.py \
	tests/sdk/sdk_interop.mjs tests/sdk/sdk_v2.mjs
TESTS += $(FRONT_MCP_TESTS)
EXTRA_DIST += $(FRONT_MCP_TESTS) tests/sdk/sdk_lib.mjs

# the frontend end to end: hostile lines, noise, backpressure, the SDK
# client, the sanitizer and cancellation through the real sp mcp
FRONT_TESTS = tests/integration/front_hostile.py \
	tests/integration/front_backpressure.py \
	tests/sdk/sdk_client.mjs \
	tests/integration/front_demo.py \
	tests/integration/front_results.py \
	tests/integration/front_inflight.py \
	tests/integration/front_hello.py \
	tests/integration/front_budget.py \
	tests/integration/front_client_gone.py
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
FRONT_MCP_TESTS = tests/integration/front_mcp_surface.py \
	tests/integration/front_modern.py \
	tests/sdk/sdk_interop.mjs tests/sdk/sdk_v2.mjs
TESTS += $(FRONT_MCP_TESTS)
EXTRA_DIST += $(FRONT_MCP_TESTS) tests/sdk/sdk_lib.mjs

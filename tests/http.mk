# tests of the http area: the engine against a real local HTTP server
# (tests/integration/http_target.py, which runs the harness's
# sptest/target.py; python3 stdlib only).
EXTRA_DIST += tests/integration/http_target.py

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_http
TESTS += tests/unit/test_http
endif
HTTP_HARNESS = tests/unit/http_harness.c tests/unit/http_harness.h \
	tests/unit/http_peer.c tests/unit/http_peer.h
tests_unit_test_http_SOURCES = tests/unit/test_http.c $(HTTP_HARNESS)
tests_unit_test_http_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSP_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_http_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_LDADD = libspexecutor.a libspcommon.a $(UNIT_LDADD) \
	$(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_http_flow
TESTS += tests/unit/test_http_flow
endif
tests_unit_test_http_flow_SOURCES = tests/unit/test_http_flow.c \
	$(HTTP_HARNESS)
tests_unit_test_http_flow_CPPFLAGS = $(tests_unit_test_http_CPPFLAGS)
tests_unit_test_http_flow_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_flow_LDADD = $(tests_unit_test_http_LDADD)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_http_rules
TESTS += tests/unit/test_http_rules
endif
tests_unit_test_http_rules_SOURCES = tests/unit/test_http_rules.c
tests_unit_test_http_rules_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_rules_LDADD = libspexecutor.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

# `make bench-http` (also under `make bench`): printed, not asserted.
check_PROGRAMS += tests/bench/bench_http
tests_bench_bench_http_SOURCES = tests/bench/bench_http.c \
	tests/unit/http_peer.c tests/unit/http_peer.h
tests_bench_bench_http_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSP_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_bench_bench_http_LDADD = libspexecutor.a libspcommon.a $(SP_LIBS)

bench-http: tests/bench/bench_http
	SP_SRCDIR='$(abs_top_srcdir)' ./tests/bench/bench_http

bench: bench-http
.PHONY: bench bench-http

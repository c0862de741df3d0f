# Per-tool limits and duplicates (docs/design.md section 9), decided by
# the broker at each intent: the real sp mcp against http_target.py,
# counting what reached the target.
LIMITS_TESTS = \
	tests/integration/limits_memory.py \
	tests/integration/limits_state.py \
	tests/integration/limits_journal.py
TESTS += $(LIMITS_TESTS)
EXTRA_DIST += $(LIMITS_TESTS)

# `make bench-limits` (also under `make bench`): the per-call cost of a
# per_day decision with state_dir against without, printed as ratios.
check_PROGRAMS += tests/bench/bench_limits
tests_bench_bench_limits_SOURCES = tests/bench/bench_limits.c \
	broker/limits.c broker/limits.h broker/state_dir.c broker/state_dir.h
tests_bench_bench_limits_LDADD = libsppolicy.a libspcommon.a $(SP_LIBS)

bench-limits: tests/bench/bench_limits
	./tests/bench/bench_limits

bench: bench-limits
.PHONY: bench-limits

# broker/state_dir.c: the shared file's reader and writer
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_state_dir
TESTS += tests/unit/test_state_dir
endif
tests_unit_test_state_dir_SOURCES = tests/unit/test_state_dir.c \
	broker/state_dir.c broker/state_dir.h
tests_unit_test_state_dir_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_state_dir_LDADD = libspcommon.a $(UNIT_LDADD)

# broker/limits.c on given clocks
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_limits
TESTS += tests/unit/test_limits
endif
tests_unit_test_limits_SOURCES = tests/unit/test_limits.c \
	broker/limits.c broker/limits.h broker/state_dir.c broker/state_dir.h
tests_unit_test_limits_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_limits_LDADD = libsppolicy.a libspcommon.a $(UNIT_LDADD) \
	$(SP_LIBS)

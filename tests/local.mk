# Tests.  Criterion binaries print TAP (one line per test) through
# tests/criterion-tap; integration tests are scripts run by their
# interpreter.  Each area adds itself in its own fragment.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
LOG_COMPILER = $(top_srcdir)/tests/criterion-tap
TEST_EXTENSIONS = .py .sh .mjs .tap
PY_LOG_COMPILER = python3
TAP_LOG_DRIVER = $(LOG_DRIVER)
TAP_LOG_COMPILER = $(SHELL)
SH_LOG_COMPILER = $(SHELL)
MJS_LOG_COMPILER = node
AM_TESTS_ENVIRONMENT = \
	SP_BIN='$(abs_top_builddir)/sp'; export SP_BIN; \
	SP_SRCDIR='$(abs_top_srcdir)'; export SP_SRCDIR; \
	SP_BUILDDIR='$(abs_top_builddir)'; export SP_BUILDDIR; \
	PYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE;
EXTRA_DIST += tests/criterion-tap
# The harness every integration test shares (python3 stdlib only); the
# tests find it next to themselves, in the srcdir.
EXTRA_DIST += tests/integration/sptest/__init__.py \
	tests/integration/sptest/audit.py \
	tests/integration/sptest/mcp.py \
	tests/integration/sptest/policy.py \
	tests/integration/sptest/procfs.py \
	tests/integration/sptest/run.py \
	tests/integration/sptest/sshd.py \
	tests/integration/sptest/tap.py \
	tests/integration/sptest/target.py

# Without Criterion no unit test is built; this one fails in their place,
# saying why, so a green `make check` always means the unit tests ran.
if !HAVE_CRITERION
TESTS += tests/no_criterion.tap
endif
EXTRA_DIST += tests/no_criterion.tap

# The test list, for the count of results .ci/run compares it with
# (tests/suite_count.sh).
EXTRA_DIST += tests/suite_count.sh
print-tests:
	@echo $(TESTS)
# What `contrib/bootstrap check` needs of a configuration: it configures
# afresh unless this prints criterion=yes werror=yes.
if HAVE_CRITERION
SP_CHECK_CRITERION = yes
else
SP_CHECK_CRITERION = no
endif
print-check-config:
	@echo criterion=$(SP_CHECK_CRITERION) \
	    werror=`test "x$(WERROR_CFLAGS)" = x-Werror && echo yes || echo no`
.PHONY: print-tests print-check-config

UNIT_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
# Each area appends its libFuzzer targets here (see the fuzz section below).
FUZZ_TARGETS =
UNIT_LDADD = $(CRITERION_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_log
TESTS += tests/unit/test_log
endif
tests_unit_test_log_SOURCES = tests/unit/test_log.c
tests_unit_test_log_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_log_LDADD = libspcommon.a $(UNIT_LDADD)

include tests/wire.mk
include tests/policy.mk
include tests/record.mk
include tests/audit.mk
include tests/http.mk

# libFuzzer targets (clang only).  An area adds its target to FUZZ_TARGETS
# with a rule that builds it with $(FUZZ_CC) $(FUZZ_CFLAGS); its seed corpus
# lives in tests/fuzz/corpus/NAME/.  `make fuzz-run` runs each one for
# FUZZ_SECONDS on a copy of its corpus (the shipped corpus is never written).
FUZZ_SECONDS = 20
FUZZ_CC = $(CLANG)
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I$(top_srcdir) -I$(top_builddir) -D_GNU_SOURCE
CLEANFILES += $(FUZZ_TARGETS)

fuzz: $(FUZZ_TARGETS)

fuzz-run: $(FUZZ_TARGETS)
	@if test -z "$(CLANG)"; then echo "fuzz-run: clang not found, skipped"; exit 0; fi; \
	for t in $(FUZZ_TARGETS); do \
	  name=`basename $$t`; work=`mktemp -d`; \
	  cp -R $(srcdir)/tests/fuzz/corpus/$$name/. $$work/ 2>/dev/null || true; \
	  echo "fuzz-run: $$name for $(FUZZ_SECONDS)s"; \
	  ./$$t -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$$work/ \
	    -print_final_stats=1 $$work >$$work.log 2>&1 \
	    || { tail -40 $$work.log; echo "fuzz-run: $$name FAILED"; exit 1; }; \
	  grep -E 'stat::number_of_executed_units' $$work.log || true; \
	  rm -rf $$work $$work.log; \
	done

.PHONY: fuzz fuzz-run

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_hash
TESTS += tests/unit/test_hash
endif
tests_unit_test_hash_SOURCES = tests/unit/test_hash.c
tests_unit_test_hash_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hash_LDADD = libspcommon.a $(UNIT_LDADD) $(LIBCRYPTO_LIBS)

# common/hex.c: the one reader of hex digits
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_hex
TESTS += tests/unit/test_hex
endif
tests_unit_test_hex_SOURCES = tests/unit/test_hex.c
tests_unit_test_hex_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hex_LDADD = libspcommon.a $(UNIT_LDADD)
include tests/sandbox.mk
include tests/ssh.mk
include tests/session.mk
include tests/proc.mk
include tests/auditint.mk
include tests/front.mk
include tests/confirm.mk
include tests/exec.mk
include tests/limits.mk
include tests/ops.mk

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_base64
TESTS += tests/unit/test_base64
endif
tests_unit_test_base64_SOURCES = tests/unit/test_base64.c
tests_unit_test_base64_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_base64_LDADD = libspcommon.a $(UNIT_LDADD) $(LIBCRYPTO_LIBS)

# libFuzzer target for the strict base64 decoder.
if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_base64
endif
EXTRA_DIST += tests/fuzz/fuzz_base64.c \
	tests/fuzz/corpus/fuzz_base64/foobar \
	tests/fuzz/corpus/fuzz_base64/foob \
	tests/fuzz/corpus/fuzz_base64/fooba \
	tests/fuzz/corpus/fuzz_base64/quoted
tests/fuzz/fuzz_base64: $(srcdir)/tests/fuzz/fuzz_base64.c \
	$(srcdir)/common/base64.c
	@mkdir -p tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_base64.c \
	    $(srcdir)/common/base64.c
include tests/netlib.mk

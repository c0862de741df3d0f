# Tests.  Criterion binaries print TAP (one line per test) through
# tests/criterion-tap; integration and SDK tests are scripts run by their
# interpreter, printing TAP too.  Every kind goes through the TAP driver,
# so each ok, not ok and # SKIP line is a counted result in the summary
# (the plain driver reads only the exit status: a script whose every
# check was skipped would say PASS).  Each kind has its fragment beside
# it: tests/unit (one list per library), tests/integration, tests/sdk,
# tests/fuzz, tests/bench.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
LOG_COMPILER = $(top_srcdir)/tests/criterion-tap
TEST_EXTENSIONS = .py .sh .mjs .tap
PY_LOG_COMPILER = python3
PY_LOG_DRIVER = $(LOG_DRIVER)
MJS_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_DRIVER = $(LOG_DRIVER)
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

# tests/sp-test is sp with the test hooks (child/test_hook.h) compiled
# in, so `make check` needs no special configure flag; it is never
# installed.  Its children, built the same way, are beside it, where it
# looks first (broker/children.h).
check_PROGRAMS += tests/sp-test tests/sp-frontend tests/sp-executor
tests_sp_test_SOURCES = $(sp_SOURCES)
tests_sp_test_CFLAGS = $(AM_CFLAGS) -DSP_TEST_HOOKS=1
tests_sp_test_LDADD = $(sp_LDADD)
tests_sp_frontend_SOURCES = $(sp_frontend_SOURCES)
tests_sp_frontend_CFLAGS = $(AM_CFLAGS) -DSP_TEST_HOOKS=1
tests_sp_frontend_LDADD = $(sp_frontend_LDADD)
tests_sp_executor_SOURCES = $(sp_executor_SOURCES)
tests_sp_executor_CFLAGS = $(AM_CFLAGS) -DSP_TEST_HOOKS=1
tests_sp_executor_LDADD = $(sp_executor_LDADD)

include tests/unit/local.mk
include tests/integration/local.mk
include tests/sdk/local.mk
include tests/fuzz/local.mk
include tests/bench/local.mk

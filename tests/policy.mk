# tests of the policy area

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_args
TESTS += tests/unit/test_policy_args
endif
tests_unit_test_policy_args_SOURCES = tests/unit/test_policy_args.c \
	tests/unit/policy_fixture.c tests/unit/policy_fixture.h
tests_unit_test_policy_args_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_args_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_expand
TESTS += tests/unit/test_policy_expand
endif
tests_unit_test_policy_expand_SOURCES = tests/unit/test_policy_expand.c \
	tests/unit/policy_fixture.c tests/unit/policy_fixture.h
tests_unit_test_policy_expand_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_expand_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_expand_ssh
TESTS += tests/unit/test_expand_ssh
endif
tests_unit_test_expand_ssh_SOURCES = tests/unit/test_expand_ssh.c \
	tests/unit/policy_fixture.c tests/unit/policy_fixture.h
tests_unit_test_expand_ssh_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_expand_ssh_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_authz
TESTS += tests/unit/test_policy_authz
endif
tests_unit_test_policy_authz_SOURCES = tests/unit/test_policy_authz.c \
	tests/unit/policy_fixture.c tests/unit/policy_fixture.h
tests_unit_test_policy_authz_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_authz_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_load
TESTS += tests/unit/test_policy_load
endif
tests_unit_test_policy_load_SOURCES = tests/unit/test_policy_load.c \
	tests/unit/test_policy_confirm.c \
	tests/unit/test_policy_locate.c \
	tests/unit/policy_load_expect.c tests/unit/policy_load_expect.h
tests_unit_test_policy_load_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_load_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_load_sections
TESTS += tests/unit/test_policy_load_sections
endif
tests_unit_test_policy_load_sections_SOURCES = \
	tests/unit/test_policy_load_sections.c \
	tests/unit/policy_load_expect.c tests/unit/policy_load_expect.h
tests_unit_test_policy_load_sections_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_load_sections_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_catalog
TESTS += tests/unit/test_policy_catalog
endif
tests_unit_test_policy_catalog_SOURCES = tests/unit/test_policy_catalog.c \
	tests/unit/policy_fixture.c tests/unit/policy_fixture.h
tests_unit_test_policy_catalog_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_catalog_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_load_files
TESTS += tests/unit/test_policy_load_files
endif
tests_unit_test_policy_load_files_SOURCES = tests/unit/test_policy_load_files.c
tests_unit_test_policy_load_files_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_load_files_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

# sp check as a user runs it, on the shipped examples and on broken policies.
TESTS += tests/integration/sp_check_examples_and_errors.py
EXTRA_DIST += tests/integration/sp_check_examples_and_errors.py contrib/examples/design.json \
	contrib/examples/http-readonly.json contrib/examples/ssh-ops.json

TESTS += tests/policy_catalog.py
EXTRA_DIST += tests/policy_catalog.py

# docs/sp-policy.5 names every member the loader accepts.
TESTS += tests/integration/sp_policy_man_page_covers_keys.py
EXTRA_DIST += tests/integration/sp_policy_man_page_covers_keys.py

# libFuzzer: policy_load() on arbitrary bytes (seeds: the shipped examples).
# Built from the whole policy and common libraries' sources, so a new
# source file in either can never leave the fuzzer unlinkable.
FUZZ_POLICY_LOAD_FILES = $(srcdir)/tests/fuzz/fuzz_policy_load.c \
	$(libsppolicy_a_SOURCES:%=$(srcdir)/%) \
	$(libspcommon_a_SOURCES:%=$(srcdir)/%)
tests/fuzz/fuzz_policy_load: $(FUZZ_POLICY_LOAD_FILES) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(CJSON_CFLAGS) $(PCRE2_CFLAGS) -o $@ \
	    $(filter %.c,$(FUZZ_POLICY_LOAD_FILES)) \
	    $(CJSON_LIBS) $(LIBCRYPTO_LIBS) $(LIBSECCOMP_LIBS) $(PCRE2_LIBS) \
	    -lm
EXTRA_DIST += tests/fuzz/fuzz_policy_load.c \
	tests/fuzz/corpus/fuzz_policy_load

if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_policy_load
endif

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_policy_pattern
TESTS += tests/unit/test_policy_pattern
endif
tests_unit_test_policy_pattern_SOURCES = tests/unit/test_policy_pattern.c \
	tests/unit/policy_load_expect.c tests/unit/policy_load_expect.h
tests_unit_test_policy_pattern_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_pattern_LDADD = libsppolicy.a libspcommon.a \
	$(UNIT_LDADD) $(SP_LIBS)

# Param patterns under `sp check` with a 1 GB address-space limit, and
# matched by the sandboxed children (issue 14 finding 4).
TESTS += tests/integration/patterns_bounded.py
EXTRA_DIST += tests/integration/patterns_bounded.py

# sp check runs sp mcp's start-up checks; a broken start answers the client
TESTS += tests/integration/sp_check_runs_the_start_checks.py
EXTRA_DIST += tests/integration/sp_check_runs_the_start_checks.py

# ssh.argv: a value may not begin an element with '-' (issue 14 finding
# 3), against the throwaway sshd.
TESTS += tests/integration/leading_dash_value_refused.py
EXTRA_DIST += tests/integration/leading_dash_value_refused.py

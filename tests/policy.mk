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
TESTS += tests/integration/sp_check.py
EXTRA_DIST += tests/integration/sp_check.py contrib/examples/design.json \
	contrib/examples/http-readonly.json contrib/examples/ssh-ops.json

TESTS += tests/policy_catalog.py
EXTRA_DIST += tests/policy_catalog.py

# docs/sp-policy.5 names every member the loader accepts.
TESTS += tests/integration/sp_policy_man.py
EXTRA_DIST += tests/integration/sp_policy_man.py

# libFuzzer: policy_load() on arbitrary bytes (seeds: the shipped examples).
# (listed in FUZZ_TARGETS at the end of tests/local.mk, which defines it
# after including this file)
FUZZ_POLICY_LOAD_FILES = $(srcdir)/tests/fuzz/fuzz_policy_load.c \
	$(srcdir)/policy/locate.c $(srcdir)/policy/diags.c \
	$(srcdir)/policy/load.c $(srcdir)/policy/load_ctx.c \
	$(srcdir)/policy/load_targets.c $(srcdir)/policy/load_url.c \
	$(srcdir)/policy/load_tools.c $(srcdir)/policy/load_params.c \
	$(srcdir)/policy/load_template.c $(srcdir)/policy/constraint.c \
	$(srcdir)/common/log.c $(srcdir)/common/value.c $(srcdir)/common/hash.c
tests/fuzz/fuzz_policy_load: $(FUZZ_POLICY_LOAD_FILES)
	@mkdir -p tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_POLICY_LOAD_FILES) \
	    $(CJSON_LIBS) $(LIBCRYPTO_LIBS)
EXTRA_DIST += tests/fuzz/fuzz_policy_load.c \
	tests/fuzz/corpus/fuzz_policy_load

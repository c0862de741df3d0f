# Tests of the confinement building blocks (common/sandbox*, privdrop,
# spawn, secret).  Each Criterion test runs in its own worker process, so a
# test may load a seccomp filter or drop privileges for good.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_sandbox
TESTS += tests/unit/test_sandbox
endif
tests_unit_test_sandbox_SOURCES = tests/unit/test_sandbox.c \
	tests/unit/sandbox_test.h
tests_unit_test_sandbox_CFLAGS = $(UNIT_CFLAGS) -pthread
tests_unit_test_sandbox_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS) \
	-lpthread

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_confine
TESTS += tests/unit/test_confine
endif
tests_unit_test_confine_SOURCES = tests/unit/test_confine.c \
	tests/unit/sandbox_test.h
tests_unit_test_confine_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_confine_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_spawn
TESTS += tests/unit/test_spawn
endif
tests_unit_test_spawn_SOURCES = tests/unit/test_spawn.c \
	tests/unit/sandbox_test.h
tests_unit_test_spawn_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_spawn_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_executor_filter
TESTS += tests/unit/test_executor_filter
endif
tests_unit_test_executor_filter_SOURCES = tests/unit/test_executor_filter.c \
	tests/unit/sandbox_test.h
tests_unit_test_executor_filter_CFLAGS = $(UNIT_CFLAGS) -pthread
tests_unit_test_executor_filter_LDADD = libspcommon.a $(UNIT_LDADD) \
	$(SP_LIBS) -lpthread

if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_secret
TESTS += tests/unit/test_secret
endif
tests_unit_test_secret_SOURCES = tests/unit/test_secret.c \
	tests/unit/sandbox_test.h
tests_unit_test_secret_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_secret_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

# sandbox_child stands in for an exec'd Sallyport child; test_exec_confine
# finds it beside itself.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/sandbox_child tests/unit/test_exec_confine
TESTS += tests/unit/test_exec_confine
endif
tests_unit_sandbox_child_SOURCES = tests/unit/sandbox_child.c
tests_unit_sandbox_child_LDADD = libspcommon.a $(SP_LIBS)
tests_unit_test_exec_confine_SOURCES = tests/unit/test_exec_confine.c \
	tests/unit/sandbox_test.h
tests_unit_test_exec_confine_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_exec_confine_LDADD = libspcommon.a $(UNIT_LDADD) $(SP_LIBS)

# tests of the record area
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_buf tests/unit/test_record
TESTS += tests/unit/test_buf tests/unit/test_record
endif
tests_unit_test_buf_SOURCES = tests/unit/test_buf.c
tests_unit_test_buf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_buf_LDADD = libspcommon.a $(UNIT_LDADD)

RECORD_TEST_HELPERS = \
	tests/unit/record_equal.c tests/unit/record_equal.h \
	tests/unit/record_samples.c tests/unit/record_samples.h
tests_unit_test_record_SOURCES = tests/unit/test_record.c \
	tests/unit/test_record_action.c tests/unit/test_record_result.c \
	tests/unit/test_record_audit.c $(RECORD_TEST_HELPERS)
tests_unit_test_record_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_record_LDADD = libspcommon.a $(UNIT_LDADD) $(LIBCRYPTO_LIBS)

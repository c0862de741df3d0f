# tests of the record area
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_buf tests/unit/test_record
TESTS += tests/unit/test_buf tests/unit/test_record
endif
# common/channel.c: the one receive and send path
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_channel
TESTS += tests/unit/test_channel
endif
tests_unit_test_channel_SOURCES = tests/unit/test_channel.c
tests_unit_test_channel_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_channel_LDADD = libspcommon.a $(UNIT_LDADD)

tests_unit_test_buf_SOURCES = tests/unit/test_buf.c
tests_unit_test_buf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_buf_LDADD = libspcommon.a $(UNIT_LDADD)

RECORD_TEST_HELPERS = \
	tests/unit/record_equal.c tests/unit/record_equal.h \
	tests/unit/record_samples.c tests/unit/record_samples.h
tests_unit_test_record_SOURCES = tests/unit/test_record.c \
	tests/unit/test_record_action.c tests/unit/test_record_result.c \
	tests/unit/test_record_audit.c tests/unit/test_record_confirm.c \
	$(RECORD_TEST_HELPERS)
tests_unit_test_record_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_record_LDADD = libspcommon.a $(UNIT_LDADD) $(LIBCRYPTO_LIBS)

# The fuzz target of every record decoder, built with clang's libFuzzer.
FUZZ_RECORD_SRCS = tests/fuzz/fuzz_record.c tests/unit/record_equal.c \
	common/buf.c common/record.c common/record_action.c \
	common/record_result.c common/record_audit.c common/record_confirm.c \
	common/value.c common/hash.c common/hex.c \
	common/log.c
if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_record
endif
tests/fuzz/fuzz_record: $(FUZZ_RECORD_SRCS:%=$(srcdir)/%) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(FUZZ_RECORD_SRCS:%=$(srcdir)/%)
EXTRA_DIST += $(FUZZ_RECORD_SRCS) tests/fuzz/corpus/fuzz_record

# Regenerates the committed seeds after a layout change:
#   make tests/fuzz/make_record_corpus &&
#   tests/fuzz/make_record_corpus $(srcdir)/tests/fuzz/corpus/fuzz_record
EXTRA_PROGRAMS = tests/fuzz/make_record_corpus
tests_fuzz_make_record_corpus_SOURCES = tests/fuzz/make_record_corpus.c \
	tests/unit/record_samples.c tests/unit/record_samples.h
tests_fuzz_make_record_corpus_LDADD = libspcommon.a $(LIBCRYPTO_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)

# tests of the wire area: strict UTF-8, frame reader, strict JSON,
# JSON-RPC classification, and the JSONTestSuite corpus.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_wire tests/unit/test_wire_corpus
TESTS += tests/unit/test_wire tests/unit/test_wire_corpus
endif
WIRE_TEST_HELPERS = tests/unit/wire_pipeline.c tests/unit/wire_pipeline.h
tests_unit_test_wire_SOURCES = tests/unit/test_utf8.c \
	tests/unit/test_frame.c tests/unit/test_json.c \
	tests/unit/test_jsonrpc.c tests/unit/test_wire_article.c \
	tests/unit/test_json_number.c \
	$(WIRE_TEST_HELPERS)
tests_unit_test_wire_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_wire_LDADD = libspcommon.a $(UNIT_LDADD) $(CJSON_LIBS) -lm
tests_unit_test_wire_corpus_SOURCES = tests/unit/test_wire_corpus.c \
	$(WIRE_TEST_HELPERS)
tests_unit_test_wire_corpus_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_wire_corpus_LDADD = libspcommon.a $(UNIT_LDADD) $(CJSON_LIBS) -lm
# JSONTestSuite's parsing corpus, unmodified (its README and LICENSE ship
# with it); test_wire_corpus reads it from $(SP_SRCDIR).
EXTRA_DIST += tests/data/jsontestsuite

# The libFuzzer target: frame reader -> JSON -> JSON-RPC.
FUZZ_WIRE_SRCS = tests/fuzz/fuzz_wire.c common/utf8.c common/frame.c \
	common/hex.c common/json.c common/json_tree.c common/json_number.c \
	common/jsonrpc.c common/log.c
if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_wire
endif
tests/fuzz/fuzz_wire: $(FUZZ_WIRE_SRCS:%=$(srcdir)/%) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(CJSON_CFLAGS) -o $@ \
	    $(FUZZ_WIRE_SRCS:%=$(srcdir)/%) $(CJSON_LIBS) -lm
EXTRA_DIST += $(FUZZ_WIRE_SRCS) tests/fuzz/corpus/fuzz_wire

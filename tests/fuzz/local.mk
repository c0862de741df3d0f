# libFuzzer targets (clang only), one per decoder that meets outside
# bytes.  Each is built with $(FUZZ_CC) $(FUZZ_CFLAGS) from the sources it
# names; its seed corpus lives in tests/fuzz/corpus/NAME/.  `make fuzz-run`
# runs each one for FUZZ_SECONDS on a copy of its corpus (the shipped
# corpus is never written).
FUZZ_SECONDS = 20
FUZZ_CC = $(CLANG)
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -I$(top_srcdir) -I$(top_builddir) -D_GNU_SOURCE
FUZZ_TARGETS =
if HAVE_CLANG
FUZZ_TARGETS += tests/fuzz/fuzz_wire tests/fuzz/fuzz_record \
	tests/fuzz/fuzz_audit_line tests/fuzz/fuzz_base64 \
	tests/fuzz/fuzz_policy_load tests/fuzz/fuzz_mcp_session
endif
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

# frame reader -> JSON -> JSON-RPC
FUZZ_WIRE_SRCS = tests/fuzz/fuzz_wire.c common/utf8.c common/frame.c \
	common/hex.c common/json.c common/json_tree.c common/json_number.c \
	common/jsonrpc.c common/log.c
tests/fuzz/fuzz_wire: $(FUZZ_WIRE_SRCS:%=$(srcdir)/%) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(CJSON_CFLAGS) -o $@ \
	    $(FUZZ_WIRE_SRCS:%=$(srcdir)/%) $(CJSON_LIBS) -lm
EXTRA_DIST += $(FUZZ_WIRE_SRCS) tests/fuzz/corpus/fuzz_wire

# every record decoder
FUZZ_RECORD_SRCS = tests/fuzz/fuzz_record.c tests/unit/record_equal.c \
	common/buf.c common/record.c common/record_action.c \
	common/record_result.c common/record_audit.c common/record_confirm.c \
	common/value.c common/hash.c common/hex.c \
	common/log.c
tests/fuzz/fuzz_record: $(FUZZ_RECORD_SRCS:%=$(srcdir)/%) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(FUZZ_RECORD_SRCS:%=$(srcdir)/%)
EXTRA_DIST += $(FUZZ_RECORD_SRCS) tests/fuzz/corpus/fuzz_record

# Regenerates the committed record seeds after a layout change:
#   make tests/fuzz/make_record_corpus &&
#   tests/fuzz/make_record_corpus $(srcdir)/tests/fuzz/corpus/fuzz_record
EXTRA_PROGRAMS = tests/fuzz/make_record_corpus
tests_fuzz_make_record_corpus_SOURCES = tests/fuzz/make_record_corpus.c \
	tests/unit/record_samples.c tests/unit/record_samples.h
tests_fuzz_make_record_corpus_LDADD = libspcommon.a $(LIBCRYPTO_LIBS)
CLEANFILES += $(EXTRA_PROGRAMS)

# the audit log's line parser
FUZZ_AUDIT_LINE_SRCS = tests/fuzz/fuzz_audit_line.c common/audit_chain.c \
	common/hash.c common/hex.c common/log.c
tests/fuzz/fuzz_audit_line: $(FUZZ_AUDIT_LINE_SRCS:%=$(srcdir)/%) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) $(CJSON_CFLAGS) $(LIBCRYPTO_CFLAGS) \
	    -o $@ $(FUZZ_AUDIT_LINE_SRCS:%=$(srcdir)/%) \
	    $(CJSON_LIBS) $(LIBCRYPTO_LIBS)
EXTRA_DIST += $(FUZZ_AUDIT_LINE_SRCS) tests/fuzz/corpus/fuzz_audit_line

# the strict base64 decoder
FUZZ_BASE64_SRCS = tests/fuzz/fuzz_base64.c common/base64.c
tests/fuzz/fuzz_base64: $(FUZZ_BASE64_SRCS:%=$(srcdir)/%)
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ \
	    $(FUZZ_BASE64_SRCS:%=$(srcdir)/%)
EXTRA_DIST += $(FUZZ_BASE64_SRCS) tests/fuzz/corpus/fuzz_base64

# The targets built from whole libraries' sources, and what those need.
FUZZ_LIBS_CFLAGS = $(FUZZ_CFLAGS) $(CJSON_CFLAGS) $(PCRE2_CFLAGS)
FUZZ_LIBS_LINK = $(CJSON_LIBS) $(LIBCRYPTO_LIBS) $(LIBSECCOMP_LIBS) \
	$(PCRE2_LIBS) -lm

# policy_load() on arbitrary bytes (seeds: the shipped examples).  Built
# from the whole policy and common libraries' sources, so a new source
# file in either can never leave the fuzzer unlinkable.
FUZZ_POLICY_LOAD_FILES = $(srcdir)/tests/fuzz/fuzz_policy_load.c \
	$(libsppolicy_a_SOURCES:%=$(srcdir)/%) \
	$(libspcommon_a_SOURCES:%=$(srcdir)/%)
tests/fuzz/fuzz_policy_load: $(FUZZ_POLICY_LOAD_FILES) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIBS_CFLAGS) -o $@ \
	    $(filter %.c,$(FUZZ_POLICY_LOAD_FILES)) $(FUZZ_LIBS_LINK)
EXTRA_DIST += tests/fuzz/fuzz_policy_load.c \
	tests/fuzz/corpus/fuzz_policy_load

# the MCP session: frames, results, invariants
FUZZ_MCP_SESSION_FILES = $(srcdir)/tests/fuzz/fuzz_mcp_session.c \
	$(libspfrontend_a_SOURCES:%=$(srcdir)/%) \
	$(libsppolicy_a_SOURCES:%=$(srcdir)/%) \
	$(libspcommon_a_SOURCES:%=$(srcdir)/%)
tests/fuzz/fuzz_mcp_session: $(FUZZ_MCP_SESSION_FILES) config.h
	@mkdir -p tests/fuzz
	$(AM_V_CC)$(FUZZ_CC) $(FUZZ_LIBS_CFLAGS) -o $@ \
	    $(filter %.c,$(FUZZ_MCP_SESSION_FILES)) $(FUZZ_LIBS_LINK)
EXTRA_DIST += tests/fuzz/fuzz_mcp_session.c \
	tests/fuzz/corpus/fuzz_mcp_session

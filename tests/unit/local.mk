# Unit tests (Criterion), one list per library they test.  A test is
# tests/unit/NAME.c, plus the files its _SOURCES line adds when it has
# more than one; every test links LDADD below, of which a static archive
# gives it only what it uses.  Criterion's flags reach the tests' own
# objects through UNIT_CFLAGS, never the product's.
UNIT_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)

# libspcommon: log, hash, hex, base64, buffers, the record codec and the
# channel layer, the wire (UTF-8, frames, JSON, JSON-RPC), confinement.
COMMON_UNIT_TESTS = \
	tests/unit/test_log tests/unit/test_hash tests/unit/test_hex \
	tests/unit/test_base64 tests/unit/test_buf tests/unit/test_record \
	tests/unit/test_channel tests/unit/test_wire tests/unit/test_wire_corpus \
	tests/unit/test_audit_chain \
	tests/unit/test_sandbox tests/unit/test_confine tests/unit/test_spawn \
	tests/unit/test_executor_filter tests/unit/test_secret \
	tests/unit/test_exec_confine tests/unit/test_text_escape
tests_unit_test_record_SOURCES = tests/unit/test_record.c \
	tests/unit/test_record_action.c tests/unit/test_record_result.c \
	tests/unit/test_record_audit.c tests/unit/test_record_confirm.c
tests_unit_test_wire_SOURCES = tests/unit/test_utf8.c \
	tests/unit/test_frame.c tests/unit/test_json.c \
	tests/unit/test_jsonrpc.c tests/unit/test_wire_article.c \
	tests/unit/test_json_number.c
# JSONTestSuite's parsing corpus, unmodified (its README and LICENSE ship
# with it); test_wire_corpus reads it from $(SP_SRCDIR).
EXTRA_DIST += tests/data/jsontestsuite

# libsppolicy: the loader, arguments, expansion, authorization, the
# catalog, patterns, how an argument is shown in the audit log.
POLICY_UNIT_TESTS = \
	tests/unit/test_policy_args tests/unit/test_policy_expand \
	tests/unit/test_expand_ssh tests/unit/test_policy_authz \
	tests/unit/test_policy_load tests/unit/test_policy_load_sections \
	tests/unit/test_policy_catalog tests/unit/test_policy_load_files \
	tests/unit/test_policy_pattern tests/unit/test_audit_args
tests_unit_test_policy_load_SOURCES = tests/unit/test_policy_load.c \
	tests/unit/test_policy_confirm.c tests/unit/test_policy_locate.c

# libspfrontend and the frontend's writer: the MCP session, results,
# sanitizing, both protocol eras.
FRONTEND_UNIT_TESTS = \
	tests/unit/test_sanitize tests/unit/test_mcp_session \
	tests/unit/test_mcp_calls tests/unit/test_result_render \
	tests/unit/test_mcp_modern tests/unit/test_writer
tests_unit_test_mcp_calls_SOURCES = tests/unit/test_mcp_calls.c \
	tests/unit/test_mcp_malformed.c

# libspexecutor and the executor's own files: the HTTP engine against a
# real local server, the SSH engine against a throwaway sshd (each test
# process starts its own, tests/integration/sshd_fixture.sh), credentials,
# withholding.
EXECUTOR_UNIT_TESTS = \
	tests/unit/test_http tests/unit/test_http_flow tests/unit/test_http_rules \
	tests/unit/test_http_cancel tests/unit/test_http_resolve \
	tests/unit/test_http_reuse \
	tests/unit/test_ssh tests/unit/test_ssh_conn tests/unit/test_ssh_keys \
	tests/unit/test_ssh_hostkeys tests/unit/test_ssh_secrets \
	tests/unit/test_exec_credentials tests/unit/test_redact
EXTRA_DIST += tests/integration/sshd_fixture.sh

# the broker: the audit log and its verifier, audit events, peers, the
# children's channels and stderr, open calls, limits, state_dir, journal.
BROKER_UNIT_TESTS = \
	tests/unit/test_audit_log tests/unit/test_audit_sync \
	tests/unit/test_audit_event tests/unit/test_broker_peer \
	tests/unit/test_channel_buffers tests/unit/test_child_stderr \
	tests/unit/test_open_calls tests/unit/test_limits tests/unit/test_journal \
	tests/unit/test_state_dir

UNIT_TESTS = $(COMMON_UNIT_TESTS) $(POLICY_UNIT_TESTS) \
	$(FRONTEND_UNIT_TESTS) $(EXECUTOR_UNIT_TESTS) $(BROKER_UNIT_TESTS)

# What the tests share: their fixtures and harnesses, and the files of sp
# that no library holds (the broker's, the executor's and the frontend's
# own), built once for them all.
tests_unit_libsptest_a_SOURCES = \
	tests/unit/audit_fixture.c tests/unit/audit_fixture.h \
	tests/unit/http_harness.c tests/unit/http_harness.h \
	tests/unit/http_peer.c tests/unit/http_peer.h \
	tests/unit/policy_fixture.c tests/unit/policy_fixture.h \
	tests/unit/policy_load_expect.c tests/unit/policy_load_expect.h \
	tests/unit/record_equal.c tests/unit/record_equal.h \
	tests/unit/record_samples.c tests/unit/record_samples.h \
	tests/unit/schema_check.c tests/unit/schema_check.h \
	tests/unit/session_fixture.c tests/unit/session_fixture.h \
	tests/unit/ssh_harness.c tests/unit/ssh_harness.h \
	tests/unit/wire_pipeline.c tests/unit/wire_pipeline.h \
	tests/unit/sandbox_test.h \
	$(AUDIT_SOURCES) audit/audit_event.c audit/audit_event.h \
	broker/peer.c broker/peer.h \
	broker/children.c broker/children.h \
	broker/child_stderr.c broker/child_stderr.h \
	broker/open_calls.c broker/open_calls.h \
	$(STATE_SOURCES) \
	child/test_hook.c child/test_hook.h \
	executor/credentials.c executor/credentials.h \
	executor/redact.c executor/redact.h \
	frontend/writer.c frontend/writer.h
tests_unit_libsptest_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSP_TEST_SRCDIR='"$(abs_top_srcdir)"' \
	-DSSHD_FIXTURE='"$(abs_top_srcdir)/tests/integration/sshd_fixture.sh"'
tests_unit_libsptest_a_CFLAGS = $(UNIT_CFLAGS)

# automake gives this LDADD to every program without an _LDADD of its
# own: any program that is not a unit test names its own (even empty).
LDADD = tests/unit/libsptest.a libspexecutor.a libspfrontend.a \
	libsppolicy.a libspcommon.a $(CRITERION_LIBS) $(SP_LIBS) \
	$(LIBCRYPTO_LIBS) -lpthread

# sandbox_child stands in for an exec'd Sallyport child; test_exec_confine
# finds it beside itself.
tests_unit_sandbox_child_LDADD = libspcommon.a $(SP_LIBS)

if HAVE_CRITERION
check_LIBRARIES = tests/unit/libsptest.a
check_PROGRAMS += $(UNIT_TESTS) tests/unit/sandbox_child
TESTS += $(UNIT_TESTS)
endif

# Criterion's flags, test by test: automake has no flags by folder.
tests_unit_test_log_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hash_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hex_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_text_escape_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_base64_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_buf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_record_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_channel_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_wire_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_wire_corpus_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_chain_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sandbox_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_confine_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_spawn_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_executor_filter_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_secret_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_exec_confine_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_args_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_expand_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_expand_ssh_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_authz_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_load_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_load_sections_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_catalog_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_load_files_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_policy_pattern_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_args_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_sanitize_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mcp_session_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mcp_calls_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_result_render_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_mcp_modern_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_writer_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_flow_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_rules_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_cancel_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_resolve_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_reuse_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ssh_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ssh_conn_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ssh_keys_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ssh_hostkeys_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ssh_secrets_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_exec_credentials_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_redact_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_log_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_sync_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_audit_event_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_broker_peer_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_channel_buffers_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_child_stderr_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_open_calls_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_limits_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_journal_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_state_dir_CFLAGS = $(UNIT_CFLAGS)

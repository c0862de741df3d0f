# End-to-end tests of the executor's dispatch: HTTP and SSH actions
# through the real `sp mcp` (issues 6 and 7), against http_target.py and
# the sshd fixture on loopback.
EXEC_TESTS = \
	tests/integration/http_actions_end_to_end.py \
	tests/integration/ssh_actions_end_to_end.py \
	tests/integration/executor_enforces_session_limits.py \
	tests/integration/credential_symlink_refused_at_start.py \
	tests/integration/executor_shortcuts_seen_from_outside.py \
	tests/integration/reflected_credential_withheld.py \
	tests/integration/metadata_stays_closed_with_link_local.py \
	tests/integration/credential_in_ssh_output_withheld.py
TESTS += $(EXEC_TESTS)
EXTRA_DIST += $(EXEC_TESTS) tests/integration/exec_lib.py

# `make bench-exec` (also under `make bench`): HTTP and SSH calls through
# sp mcp beside a plain libcurl loop and ssh with a control master;
# printed as ratios, not asserted, not part of `make check`.
check_PROGRAMS += tests/bench/exec_bench_peer
tests_bench_exec_bench_peer_SOURCES = tests/bench/exec_bench_peer.c \
	tests/bench/exec_bench_mcp.c tests/bench/exec_bench_mcp.h
tests_bench_exec_bench_peer_LDADD = $(SP_LIBS)
EXTRA_DIST += tests/bench/exec_bench.py

bench-exec: sp tests/bench/exec_bench_peer
	SP_BIN='$(abs_top_builddir)/sp' SP_BUILDDIR='$(abs_top_builddir)' \
	SP_SRCDIR='$(abs_top_srcdir)' python3 $(srcdir)/tests/bench/exec_bench.py

bench: bench-exec
.PHONY: bench-exec

# http_engine_cancel(), which the dispatch uses for cancel records.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_http_cancel
TESTS += tests/unit/test_http_cancel
endif
tests_unit_test_http_cancel_SOURCES = tests/unit/test_http_cancel.c \
	$(HTTP_HARNESS)
tests_unit_test_http_cancel_CPPFLAGS = $(tests_unit_test_http_CPPFLAGS)
tests_unit_test_http_cancel_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_cancel_LDADD = $(tests_unit_test_http_LDADD)

# credential_store_load(): symlinks and loose modes on the open file.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_exec_credentials
TESTS += tests/unit/test_exec_credentials
endif
tests_unit_test_exec_credentials_SOURCES = \
	tests/unit/test_exec_credentials.c executor/credentials.c
tests_unit_test_exec_credentials_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_exec_credentials_LDADD = libsppolicy.a libspcommon.a $(UNIT_LDADD) \
	$(SP_LIBS)

# Name resolution on a thread, bounded by the call's budget.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_http_resolve
TESTS += tests/unit/test_http_resolve
endif
tests_unit_test_http_resolve_SOURCES = tests/unit/test_http_resolve.c \
	$(HTTP_HARNESS)
tests_unit_test_http_resolve_CPPFLAGS = $(tests_unit_test_http_CPPFLAGS)
tests_unit_test_http_resolve_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_resolve_LDADD = $(tests_unit_test_http_LDADD)

# The engine's per-call shortcuts: pooled easy handles carry nothing from
# one call to the next; literal hosts skip the resolver, not the rules.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_http_reuse
TESTS += tests/unit/test_http_reuse
endif
tests_unit_test_http_reuse_SOURCES = tests/unit/test_http_reuse.c \
	$(HTTP_HARNESS)
tests_unit_test_http_reuse_CPPFLAGS = $(tests_unit_test_http_CPPFLAGS)
tests_unit_test_http_reuse_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_http_reuse_LDADD = $(tests_unit_test_http_LDADD)

# SSH outcomes when the session breaks after the exec request was sent
# (docs/internals/executor-engines.md): a relay damages, holds or cuts the server's bytes.
TESTS += tests/integration/ssh_outcomes_when_things_break.py
EXTRA_DIST += tests/integration/ssh_outcomes_when_things_break.py

# redact_bytes(): credentials a target reflects, withheld from results.
if HAVE_CRITERION
check_PROGRAMS += tests/unit/test_redact
TESTS += tests/unit/test_redact
endif
tests_unit_test_redact_SOURCES = tests/unit/test_redact.c executor/redact.c \
	executor/redact.h
tests_unit_test_redact_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_redact_LDADD = libspcommon.a $(UNIT_LDADD)

# known_hosts marker lines (@cert-authority, @revoked) verify nothing
TESTS += tests/integration/known_hosts_markers_refused.py
EXTRA_DIST += tests/integration/known_hosts_markers_refused.py

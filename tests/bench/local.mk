# `make bench`: each benchmark prints ratios against a baseline it runs in
# the same process; none is asserted, none is part of `make check`.
# `make bench-NAME` runs one.
BENCH_ENV = SP_BIN='$(abs_top_builddir)/sp' SP_BUILDDIR='$(abs_top_builddir)' \
	SP_SRCDIR='$(abs_top_srcdir)'
BENCH_PY_FILES = tests/bench/proc_bench.py tests/bench/bench_audit.py \
	tests/bench/front_bench.py tests/bench/exec_bench.py \
	tests/bench/confirm_bench.py tests/bench/limits_backend_bench.py \
	tests/bench/limits_bench.py
EXTRA_DIST += $(BENCH_PY_FILES)

# the cold start and idle memory of sp mcp alone
bench-proc: sp
	$(BENCH_ENV) $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/proc_bench.py'

# the audit log's writer
bench-audit: sp
	$(BENCH_ENV) $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/bench_audit.py'

# the frontend: frames through the real sp mcp
bench-front: sp
	$(BENCH_ENV) $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/front_bench.py'

# a confirmed call beside an unconfirmed one, end to end
bench-confirm: sp
	$(BENCH_ENV) $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/confirm_bench.py'

# HTTP and SSH calls through sp mcp beside a plain libcurl loop and ssh
# with a control master
check_PROGRAMS += tests/bench/exec_bench_peer
tests_bench_exec_bench_peer_SOURCES = tests/bench/exec_bench_peer.c \
	tests/bench/exec_bench_mcp.c tests/bench/exec_bench_mcp.h
tests_bench_exec_bench_peer_LDADD = $(SP_LIBS)
bench-exec: sp tests/bench/exec_bench_peer
	$(BENCH_ENV) $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/exec_bench.py'

# the HTTP engine alone against a local server
check_PROGRAMS += tests/bench/bench_http
tests_bench_bench_http_SOURCES = tests/bench/bench_http.c \
	tests/unit/http_peer.c tests/unit/http_peer.h
tests_bench_bench_http_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSP_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_bench_bench_http_LDADD = libspexecutor.a libspcommon.a $(SP_LIBS)
bench-http: tests/bench/bench_http
	SP_SRCDIR='$(abs_top_srcdir)' ./tests/bench/bench_http

# the per-call cost of a per_day decision in memory, with state_dir and
# in PostgreSQL (a throwaway cluster; the row says why when there is none)
check_PROGRAMS += tests/bench/bench_limits
tests_bench_bench_limits_SOURCES = tests/bench/bench_limits.c \
	state/limits.c state/limits.h state/pg.c state/pg.h \
	state/pq_load.c state/pq_load.h \
	state/state_dir.c state/state_dir.h child/test_hook.c child/test_hook.h
tests_bench_bench_limits_LDADD = libsppolicy.a libspcommon.a $(SP_LIBS)
bench-limits: sp tests/bench/bench_limits
	$(BENCH_ENV) $(PY_LOG_COMPILER) \
	    '$(abs_top_srcdir)/tests/bench/limits_bench.py' ./tests/bench/bench_limits

# 16 calls in flight through a per_day tool, decided in memory, in
# state_dir and in PostgreSQL (a throwaway cluster), through sp mcp
bench-limits-backend: sp
	$(BENCH_ENV) $(PY_LOG_COMPILER) '$(abs_top_srcdir)/tests/bench/limits_backend_bench.py'

# per-call SSH latency beside ssh's control master (figures:
# ssh-bench.txt); built on the unit tests' SSH harness, so with Criterion
CLEANFILES += ssh-bench.txt
if HAVE_CRITERION
check_PROGRAMS += tests/bench/ssh_bench
bench-ssh: tests/bench/ssh_bench
	./tests/bench/ssh_bench
else
bench-ssh:
	@echo "bench-ssh: needs Criterion, skipped"
endif
tests_bench_ssh_bench_CFLAGS = $(UNIT_CFLAGS)

bench: bench-proc bench-audit bench-front bench-confirm bench-exec \
	bench-http bench-limits bench-limits-backend bench-ssh
.PHONY: bench bench-proc bench-audit bench-front bench-confirm bench-exec \
	bench-http bench-limits bench-limits-backend bench-ssh

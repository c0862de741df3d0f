# executor/: record dispatch, HTTP (libcurl multi on libevent), SSH (libssh2
# non-blocking on libevent), credentials.  See docs/design.md section 2.
noinst_LIBRARIES += libspexecutor.a

# SSH engine (libssh2 on libevent).
SSH_ENGINE_SOURCES = \
	executor/ssh.c executor/ssh.h executor/ssh_int.h \
	executor/ssh_conn.c executor/ssh_channel.c executor/ssh_hostkey.c

# HTTP engine (curl multi on libevent).
# http.c: the engine (multi handle, socket watches, easy pool);
# http_call.c: one call's life; the others: one stage each.
HTTP_ENGINE_SOURCES = \
	executor/http.c executor/http.h executor/http_int.h \
	executor/http_call.c \
	executor/http_addr.c executor/http_addr.h \
	executor/http_resolve.c executor/http_resolve.h \
	executor/http_build.c executor/http_build.h \
	executor/http_response.c executor/http_response.h

libspexecutor_a_SOURCES = $(SSH_ENGINE_SOURCES) $(HTTP_ENGINE_SOURCES)

# sp-executor, the executor role: record checks and dispatch, on the
# engines; the one program linked with libcurl and libssh2
pkglibexec_PROGRAMS += sp-executor
sp_executor_SOURCES = \
	executor/main.c \
	executor/credentials.c executor/credentials.h \
	executor/redact.c executor/redact.h \
	executor/dispatch.c executor/dispatch.h executor/dispatch_int.h \
	executor/dispatch_http.c executor/dispatch_ssh.c executor/dispatch_dup.c \
	executor/dispatch_confirm.c executor/confirm.c executor/confirm.h \
	executor/exec_audit.c \
	$(CHILD_SOURCES)
sp_executor_LDADD = libspexecutor.a libsppolicy.a libspcommon.a \
	$(SP_BIN_LIBS) $(LIBCURL_LIBS) $(LIBSSH2_LIBS)

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

# the executor role's entry: record checks and dispatch; only sp links
# it, with netlib.c in place of -lcurl -lssh2 (executor/netlib.h)
EXECUTOR_MAIN_SOURCES = \
	executor/executor.h executor/main.c \
	executor/credentials.c executor/credentials.h \
	executor/redact.c executor/redact.h \
	executor/dispatch.c executor/dispatch.h executor/dispatch_int.h \
	executor/dispatch_http.c executor/dispatch_ssh.c executor/dispatch_dup.c \
	executor/dispatch_confirm.c executor/confirm.c executor/confirm.h \
	executor/exec_audit.c \
	executor/netlib.c executor/netlib.h executor/netlib_list.h \
	$(SSH_ENGINE_SOURCES) $(HTTP_ENGINE_SOURCES)

# executor/: record dispatch, HTTP (libcurl multi on libevent), SSH (libssh2
# non-blocking on libevent), credentials.  See DESIGN.md section 2.
noinst_LIBRARIES += libspexecutor.a

# SSH engine (libssh2 on libevent).
SSH_ENGINE_SOURCES = \
	executor/ssh.c executor/ssh.h executor/ssh_int.h \
	executor/ssh_conn.c executor/ssh_channel.c executor/ssh_hostkey.c

# HTTP engine (curl multi on libevent).
HTTP_ENGINE_SOURCES = \
	executor/http.c executor/http.h \
	executor/http_call.c executor/http_call.h \
	executor/http_easy.c \
	executor/http_build.c executor/http_build.h \
	executor/http_addr.c executor/http_addr.h \
	executor/http_resolve.c executor/http_resolve.h \
	executor/http_retry.c executor/http_retry.h

libspexecutor_a_SOURCES = $(SSH_ENGINE_SOURCES) $(HTTP_ENGINE_SOURCES)

# the executor role's entry: record checks and dispatch; only sp links
# it, with netlib.c in place of -lcurl -lssh2 (executor/netlib.h)
EXECUTOR_MAIN_SOURCES = \
	executor/executor.h executor/main.c \
	executor/credentials.c executor/credentials.h \
	executor/redact.c executor/redact.h \
	executor/dispatch.c executor/dispatch.h executor/dispatch_int.h \
	executor/dispatch_http.c executor/dispatch_ssh.c \
	executor/exec_audit.c \
	executor/netlib.c executor/netlib.h executor/netlib_list.h \
	$(SSH_ENGINE_SOURCES) $(HTTP_ENGINE_SOURCES)

# The HTTP engine's socket watches (kept-alive sockets stay registered),
# a call's origin (addresses, pin, redirect target) and recent names.
HTTP_ENGINE_SOURCES += executor/http_sock.c executor/http_sock.h \
	executor/http_origin.c executor/http_names.c executor/http_names.h

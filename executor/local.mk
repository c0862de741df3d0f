# executor/: see DESIGN.md section 2

# SSH engine (libssh2 on libevent); the HTTP branch adds its own sources.
noinst_LIBRARIES += libspexecutor.a
libspexecutor_a_SOURCES = \
	executor/ssh.c executor/ssh.h executor/ssh_int.h \
	executor/ssh_conn.c executor/ssh_channel.c executor/ssh_hostkey.c

# executor/: see DESIGN.md section 2

# SSH engine (libssh2 on libevent).  Kept in its own variable so that the
# library's source list (the HTTP branch defines it too) only needs to
# name $(SSH_ENGINE_SOURCES) when the branches meet.
SSH_ENGINE_SOURCES = \
	executor/ssh.c executor/ssh.h executor/ssh_int.h \
	executor/ssh_conn.c executor/ssh_channel.c executor/ssh_hostkey.c
noinst_LIBRARIES += libspexecutor.a
libspexecutor_a_SOURCES = $(SSH_ENGINE_SOURCES)

# cli/: the `sp` command table and every command a person types.
sp_SOURCES = \
	cli/sp.c cli/commands.h
# --config/--profile, shared by sp check, sp catalog and sp mcp
sp_SOURCES += cli/cmd_args.c cli/cmd_args.h
# No $(LIBPQ_LIBS): libpq and what it pulls in (OpenSSL, GSSAPI, LDAP)
# are loaded by state/pq_load.c only when a policy names "state", as they
# cost every sp mcp 10 ms and 5 MB (docs/design.md section 9.2).
sp_LDADD = libsppolicy.a libspcommon.a $(SP_BIN_LIBS)
sp_SOURCES += cli/cmd_audit.c cli/cmd_check.c cli/cmd_journal.c cli/cmd_state.c \
	cli/cmd_approve.c cli/cmd_catalog.c
# sp mcp: its arguments; the session is broker/'s
sp_SOURCES += cli/cmd_mcp.c
# sp call: one tools/call through an sp mcp session
sp_SOURCES += cli/cmd_call.c
# sp demo (the front branch)
sp_SOURCES += cli/cmd_demo.c cli/demo_target.c cli/demo_target.h
# sp connect: the stdin/stdout relay to a system instance's socket
sp_SOURCES += cli/cmd_connect.c
# sp metrics: the audit log and the shared state as Prometheus text
sp_SOURCES += cli/cmd_metrics.c cli/metrics_audit.c cli/metrics_audit.h \
	cli/metrics_text.c cli/metrics_text.h
dist_man_MANS += docs/sp.1

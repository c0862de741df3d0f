sp_SOURCES = \
	broker/sp.c broker/commands.h
# --config/--profile, shared by sp check, sp catalog and sp mcp
sp_SOURCES += broker/cmd_args.c broker/cmd_args.h
sp_LDADD = libsppolicy.a libspcommon.a $(SP_BIN_LIBS)
# the audit log: writer, argument rendering, verifier, `sp audit`
AUDIT_SOURCES = \
	broker/audit_log.c broker/audit_log.h \
	broker/audit_tail.c broker/audit_tail.h \
	broker/audit_verify.c broker/audit_verify.h
sp_SOURCES += $(AUDIT_SOURCES) broker/cmd_audit.c
# audit anchors off the host: sent (journald or syslog), and checked
sp_SOURCES += broker/audit_journal.c broker/audit_journal.h \
	broker/audit_anchors.c broker/audit_anchors.h
sp_SOURCES += broker/cmd_check.c broker/cmd_journal.c broker/cmd_approve.c
# sp call: one tools/call through an sp mcp session
sp_SOURCES += broker/cmd_call.c
sp_SOURCES += broker/cmd_catalog.c
# sp mcp: the broker, the start of its children and their supervision
PROC_SOURCES = \
	broker/mcp.c \
	broker/start_refusal.c broker/start_refusal.h \
	broker/children.c broker/children.h \
	broker/child_stderr.c broker/child_stderr.h \
	broker/supervise.c broker/supervise.h broker/supervise_int.h \
	broker/supervise_audit.c \
	broker/open_calls.c broker/open_calls.h \
	broker/limits.c broker/limits.h broker/journal.c broker/journal.h \
	broker/state_dir.c broker/state_dir.h \
	broker/approvals.c broker/approvals.h \
	broker/peer.c broker/peer.h \
	$(CHILD_SOURCES)
sp_SOURCES += $(PROC_SOURCES)
# the broker's side of children's audit events
sp_SOURCES += broker/audit_event.c broker/audit_event.h
# sp demo (the front branch)
sp_SOURCES += broker/cmd_demo.c broker/demo_target.c broker/demo_target.h
# sp connect: the stdin/stdout relay to a system instance's socket
sp_SOURCES += broker/cmd_connect.c
EXTRA_DIST += contrib/systemd/sallyport.socket \
	contrib/systemd/sallyport@.service contrib/systemd/README.md
dist_man_MANS += docs/sp.1 docs/sp-audit.5
EXTRA_DIST += docs/threat-model.md docs/design.md
EXTRA_DIST += docs/internals/performance.md docs/internals/seccomp.md \
	docs/internals/leak-guard.md docs/internals/frontend-io.md \
	docs/internals/executor-engines.md

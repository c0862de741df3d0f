# broker/: the session of `sp mcp`: start-up, the children and the relay
# of their stderr, supervision, open calls, peer credentials and the
# approvals socket.
PROC_SOURCES = \
	broker/broker.c broker/broker.h \
	broker/start_refusal.c broker/start_refusal.h \
	broker/children.c broker/children.h \
	broker/child_stderr.c broker/child_stderr.h \
	broker/supervise.c broker/supervise.h broker/supervise_int.h \
	broker/supervise_audit.c \
	broker/open_calls.c broker/open_calls.h \
	broker/approvals.c broker/approvals.h \
	broker/peer.c broker/peer.h \
	$(CHILD_SOURCES)
sp_SOURCES += $(PROC_SOURCES)
EXTRA_DIST += contrib/systemd/sallyport.socket \
	contrib/systemd/sallyport@.service contrib/systemd/README.md
EXTRA_DIST += docs/threat-model.md docs/design.md
EXTRA_DIST += docs/internals/performance.md docs/internals/seccomp.md \
	docs/internals/leak-guard.md docs/internals/frontend-io.md \
	docs/internals/executor-engines.md

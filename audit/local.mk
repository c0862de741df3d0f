# audit/: the audit log (writer, argument rendering, verifier), its
# anchors off the host, and the rendering of children's audit events.
AUDIT_SOURCES = \
	audit/audit_log.c audit/audit_log.h \
	audit/audit_tail.c audit/audit_tail.h \
	audit/audit_verify.c audit/audit_verify.h
sp_SOURCES += $(AUDIT_SOURCES)
# anchors off the host: sent (journald or syslog), and checked
sp_SOURCES += audit/audit_journal.c audit/audit_journal.h \
	audit/audit_anchors.c audit/audit_anchors.h
# the broker's side of children's audit events
sp_SOURCES += audit/audit_event.c audit/audit_event.h
dist_man_MANS += docs/sp-audit.5

sp_SOURCES = \
	broker/sp.c broker/commands.h
# the audit log: writer, argument rendering, verifier, `sp audit`
AUDIT_SOURCES = \
	broker/audit_log.c broker/audit_log.h \
	broker/audit_args.c broker/audit_args.h \
	broker/audit_verify.c broker/audit_verify.h
sp_SOURCES += $(AUDIT_SOURCES) broker/cmd_audit.c
sp_LDADD = libsppolicy.a libspcommon.a $(SP_LIBS)
sp_SOURCES += broker/cmd_check.c
sp_SOURCES += broker/cmd_catalog.c

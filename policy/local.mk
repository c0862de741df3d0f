# policy/: see docs/design.md section 2.  The loader and validator, then
# (appended by their owners) argument validation, expansion, authorization, catalog.
noinst_LIBRARIES += libsppolicy.a
libsppolicy_a_SOURCES = \
	policy/policy.h \
	policy/locate.c policy/locate.h \
	policy/diags.c policy/load.c policy/load.h \
	policy/load_ctx.c policy/load_ctx.h \
	policy/load_targets.c policy/load_url.c \
	policy/load_tools.c policy/load_params.c policy/load_confirm.c \
	policy/load_comment.c policy/load_limits.c \
	policy/load_template.c policy/load_template.h \
	policy/startcheck.c policy/startcheck.h policy/load_pin.c \
	policy/source.c policy/source.h \
	policy/dump.c policy/dump.h \
	policy/ssh_private_key.c policy/ssh_private_key.h
libsppolicy_a_SOURCES += \
	policy/buf.c policy/buf.h \
	policy/constraint.c policy/constraint.h \
	policy/pattern.c policy/pattern.h \
	policy/args.c policy/args.h
libsppolicy_a_SOURCES += \
	policy/expand.c policy/expand.h
libsppolicy_a_SOURCES += \
	policy/authz.c policy/authz.h \
	policy/confirm_message.c policy/confirm_message.h
libsppolicy_a_SOURCES += \
	policy/catalog.c policy/catalog_canon.c policy/catalog.h
# how an argument is shown in the audit log, by its param's audit rule
libsppolicy_a_SOURCES += policy/audit_args.c policy/audit_args.h
dist_man_MANS += docs/sp-policy.5

# policy/: see DESIGN.md section 2.  The loader and validator, then (appended
# by their owners) argument validation, expansion, authorization, catalog.
noinst_LIBRARIES += libsppolicy.a
libsppolicy_a_SOURCES = \
	policy/policy.h \
	policy/locate.c policy/locate.h
libsppolicy_a_SOURCES += \
	policy/buf.c policy/buf.h \
	policy/constraint.c policy/constraint.h \
	policy/args.c policy/args.h
libsppolicy_a_SOURCES += \
	policy/expand.c policy/expand.h

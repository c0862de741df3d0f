noinst_LIBRARIES += libspcommon.a
libspcommon_a_SOURCES = \
	common/log.c common/log.h \
	common/value.c common/value.h \
	common/hash.c common/hash.h
libspcommon_a_SOURCES += common/audit_chain.c common/audit_chain.h

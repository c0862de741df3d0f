noinst_LIBRARIES += libspcommon.a
libspcommon_a_SOURCES = \
	common/log.c common/log.h

noinst_LIBRARIES += libspcommon.a
libspcommon_a_SOURCES = \
	common/log.c common/log.h \
	common/value.c common/value.h \
	common/hash.c common/hash.h
libspcommon_a_SOURCES += \
	common/utf8.c common/utf8.h \
	common/frame.c common/frame.h \
	common/json.c common/json.h \
	common/jsonrpc.c common/jsonrpc.h

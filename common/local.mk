noinst_LIBRARIES += libspcommon.a
libspcommon_a_SOURCES = \
	common/log.c common/log.h \
	common/value.c common/value.h \
	common/hash.c common/hash.h
libspcommon_a_SOURCES += common/audit_chain.c common/audit_chain.h
libspcommon_a_SOURCES += \
	common/buf.c common/buf.h \
	common/record.c common/record.h common/record_field.h \
	common/record_error.h \
	common/channel.c common/channel.h \
	common/record_action.c common/record_result.c common/record_audit.c \
	common/record_confirm.c
libspcommon_a_SOURCES += \
	common/sandbox.c common/sandbox.h \
	common/sandbox_filter.c common/privdrop.c \
	common/spawn.c common/spawn.h \
	common/secret.c common/secret.h
libspcommon_a_SOURCES += \
	common/utf8.c common/utf8.h \
	common/text_escape.c common/text_escape.h \
	common/frame.c common/frame.h \
	common/json.c common/json.h \
	common/json_tree.c common/json_tree.h \
	common/json_number.c common/json_number.h \
	common/jsonrpc.c common/jsonrpc.h
libspcommon_a_SOURCES += common/hash_const.h common/exit.h
libspcommon_a_SOURCES += common/base64.c common/base64.h
libspcommon_a_SOURCES += common/hex.c common/hex.h
libspcommon_a_SOURCES += common/text_fold.c common/text_fold.h
libspcommon_a_SOURCES += common/clock.c common/clock.h
libspcommon_a_SOURCES += common/http_method.c common/http_method.h

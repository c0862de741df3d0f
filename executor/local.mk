# executor/: see DESIGN.md section 2
noinst_LIBRARIES += libspexecutor.a
libspexecutor_a_SOURCES = \
	executor/http.c executor/http.h \
	executor/http_call.c executor/http_call.h \
	executor/http_easy.c \
	executor/http_build.c executor/http_build.h \
	executor/http_addr.c executor/http_addr.h \
	executor/http_retry.c executor/http_retry.h

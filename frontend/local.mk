# frontend/: see docs/design.md section 2
# the MCP session logic (no I/O): lifecycle, tools, results, sanitizing
noinst_LIBRARIES += libspfrontend.a
libspfrontend_a_SOURCES = \
	frontend/mcp_session.c frontend/mcp_session.h \
	frontend/mcp_session_impl.h frontend/mcp_call.c \
	frontend/mcp_modern.c frontend/mcp_audit.c frontend/mcp_confirm.c \
	frontend/result_render.c frontend/result_render.h \
	frontend/sanitize.c frontend/sanitize.h

# sp-frontend, the frontend role: stdio transport, protocol writer, MCP
# session; it links no libcurl, libssh2 or OpenSSL
pkglibexec_PROGRAMS += sp-frontend
sp_frontend_SOURCES = frontend/main.c frontend/writer.c frontend/writer.h \
	$(CHILD_SOURCES)
sp_frontend_LDADD = libspfrontend.a libsppolicy.a libspcommon.a \
	$(SP_BIN_LIBS)

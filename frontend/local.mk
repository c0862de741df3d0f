# frontend/: see DESIGN.md section 2
# the frontend role: stdio transport, protocol writer, MCP session
FRONTEND_SOURCES = \
	frontend/frontend.h frontend/main.c \
	frontend/writer.c frontend/writer.h \
	frontend/session.c frontend/session.h

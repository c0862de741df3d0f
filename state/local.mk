# state/: what sessions share through state_dir or, for a fleet,
# PostgreSQL: the limits, the idempotency journal, and the rules their
# files must meet.
STATE_SOURCES = \
	state/limits.c state/limits.h state/journal.c state/journal.h \
	state/pg.c state/pg.h state/pq_load.c state/pq_load.h \
	state/state_dir.c state/state_dir.h \
	state/state_summary.c state/state_summary.h
sp_SOURCES += $(STATE_SOURCES)
nodist_sp_SOURCES = state/schema_sql.h

# The schema's SQL is kept as SQL (state/schema.sql, read by operators
# and installed beside the man pages) and compiled into sp as a string
# for sp state init.
dist_pkgdata_DATA = state/schema.sql
BUILT_SOURCES = state/schema_sql.h
CLEANFILES += state/schema_sql.h
state/schema_sql.h: $(srcdir)/state/schema.sql
	$(AM_V_GEN)$(MKDIR_P) state && \
	$(AWK) 'BEGIN { print "/* generated from state/schema.sql */"; \
	    print "static const char pg_schema_sql[] =" } \
	    { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); \
	      print "\"" $$0 "\\n\"" } \
	    END { print ";" }' $(srcdir)/state/schema.sql > $@.tmp && \
	mv $@.tmp $@

# state/: what sessions share through state_dir: the limits, the
# idempotency journal, and the rules their files must meet.
STATE_SOURCES = \
	state/limits.c state/limits.h state/journal.c state/journal.h \
	state/state_dir.c state/state_dir.h
sp_SOURCES += $(STATE_SOURCES)

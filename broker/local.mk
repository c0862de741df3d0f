sp_SOURCES = \
	broker/sp.c broker/commands.h
sp_LDADD = libsppolicy.a libspcommon.a $(SP_LIBS)
sp_SOURCES += broker/cmd_check.c
sp_SOURCES += broker/cmd_catalog.c

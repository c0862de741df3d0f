sp_SOURCES = \
	broker/sp.c broker/commands.h
sp_LDADD = libspcommon.a $(SP_LIBS)

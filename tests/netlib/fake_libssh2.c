/*
 * A stand-in libssh2.so.1 for tests/integration/missing_netlib_function_stops_start.py: it
 * defines every libssh2 function sp binds (executor/netlib_list.h) but
 * one, which the build renames away with -D so the library lacks that
 * symbol.  Nothing here is ever meant to run: the executor must stop at
 * the missing symbol, so each body aborts.
 */
#include <stdlib.h>

#include <libssh2.h>

#include "executor/netlib_list.h"

#define FAKE_FUNCTION(ret, name, params, args) \
ret name params { abort(); }
#define FAKE_FUNCTION_VOID(name, params, args) \
void name params { abort(); }

NETLIB_SSH2_FUNCTIONS(FAKE_FUNCTION, FAKE_FUNCTION_VOID)

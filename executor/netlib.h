/*
 * libcurl and libssh2, loaded at run time by the executor alone.
 *
 * Why: the broker, the frontend and the executor are all fresh images
 * of the same `sp` (docs/design.md invariant 7).  Linked normally, every one
 * of them would map libcurl, libssh2 and their ~30 dependencies (OpenSSL,
 * GnuTLS, Kerberos, LDAP, ...) at start: measured on Debian 12, about
 * 4 ms of CPU (`sp check`: 5.5 ms before, 1.6 ms after) and 4.3 MB of
 * VmRSS per process, in two processes that never make a network call.  So `sp` carries no DT_NEEDED entry for either
 * library, and the executor maps them first thing in its main, before
 * any curl or libssh2 call and before confinement (docs/design.md invariant
 * 5: libraries are initialised before the sandbox).
 *
 * How: netlib.c defines each function sp uses under the library's own
 * name (the list is executor/netlib_list.h), forwarding through a table
 * of pointers that netlib_load() fills with dlsym().  The callers in
 * executor/http*.c and ssh*.c stay written against the ordinary headers
 * and compile unchanged; the unit tests that link libspexecutor.a still
 * link -lcurl -lssh2 and never see netlib.c.  The three variadic
 * functions (curl_easy_setopt, curl_multi_setopt, curl_easy_getinfo)
 * read their single argument by the option's type range and pass it on
 * with that type.
 *
 * What an auditor checks: the libraries are opened by soname
 * ("libssh2.so.1", then "libcurl.so.4") with RTLD_NOW | RTLD_LOCAL, so
 * the dynamic linker's ordinary search decides which file is used,
 * exactly as it would for a DT_NEEDED entry (LD_LIBRARY_PATH, the
 * binary's RUNPATH, ld.so.cache); there is no configurable path.
 * RTLD_NOW makes every missing symbol of the libraries' own dependencies
 * fail here, outside the sandbox, instead of at a first call inside it.
 * After binding, the table is made read-only (mprotect), as RELRO makes
 * the GOT it replaces.  The libraries are never unloaded.
 *
 * A function called before netlib_load() bound it logs one line naming
 * it and aborts; it never jumps through a null pointer.
 */
#ifndef SP_EXECUTOR_NETLIB_H
#define SP_EXECUTOR_NETLIB_H

#include <stdbool.h>

/*
 * Opens libssh2.so.1 and libcurl.so.4 and binds every function of
 * executor/netlib_list.h.  Call once, before any of them and before
 * confinement.  On failure it has logged one line naming the library or
 * the missing symbol and returns false; the executor then exits 70
 * (SP_EXIT_INTERNAL: the installation, not the policy or the sandbox,
 * is at fault), and the broker's supervision ends the session.
 */
bool netlib_load(void);

#endif

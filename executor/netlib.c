/*
 * libcurl and libssh2 bound at run time (executor/netlib.h).
 *
 * This file alone defines the library functions sp calls; it is linked
 * into sp and tests/sp-test only.  The typecheck macros of curl.h are
 * off here: they would wrap the very functions this file defines.
 */
#define CURL_DISABLE_TYPECHECK 1

#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libssh2.h>

#include "common/log.h"
#include "executor/netlib.h"
#include "executor/netlib_list.h"

/* Without the typecheck, curl.h still maps these names onto themselves. */
#undef curl_easy_setopt
#undef curl_multi_setopt
#undef curl_easy_getinfo

/*
 * The definitions below stay out of sp's dynamic symbol table: a shared
 * library that also defines or calls these names (libcurl calling
 * libssh2, or any library linked beside) must bind to the real library,
 * never to these forwarders.
 */
#define NETLIB_HIDDEN __attribute__((visibility("hidden")))

#define NETLIB_SSH2_SONAME "libssh2.so.1"
#define NETLIB_CURL_SONAME "libcurl.so.4"
#define NETLIB_PAGE 4096

#define NETLIB_MEMBER(ret, name, params, args) ret (*name) params;
#define NETLIB_MEMBER_VOID(name, params, args) void (*name) params;
#define NETLIB_MEMBER_VARIADIC(ret, name, params) ret (*name) params;

struct netlib_functions {
	NETLIB_SSH2_FUNCTIONS(NETLIB_MEMBER, NETLIB_MEMBER_VOID)
	NETLIB_CURL_FUNCTIONS(NETLIB_MEMBER, NETLIB_MEMBER_VOID)
	NETLIB_CURL_VARIADIC(NETLIB_MEMBER_VARIADIC)
};

/*
 * Process-wide state, against the rule, because the functions below have
 * the libraries' signatures and no context to carry a pointer.  Written
 * once by netlib_load() before confinement, then read-only like the GOT
 * it stands in for: it fills its own page so that mprotect() covers
 * nothing else.  (On a machine whose pages are not 4 KiB it stays
 * writable.)
 */
static _Alignas(NETLIB_PAGE) union {
	struct netlib_functions fn;
	unsigned char page[NETLIB_PAGE];
} netlib;

_Static_assert(sizeof(struct netlib_functions) <= NETLIB_PAGE,
    "the function table fits its page");

struct netlib_symbol {
	const char *name;
	size_t offset;		/* of its pointer in struct netlib_functions */
};

#define NETLIB_SYMBOL(ret, name, params, args) \
	{ #name, offsetof(struct netlib_functions, name) },
#define NETLIB_SYMBOL_VOID(name, params, args) \
	{ #name, offsetof(struct netlib_functions, name) },
#define NETLIB_SYMBOL_VARIADIC(ret, name, params) \
	{ #name, offsetof(struct netlib_functions, name) },

static const struct netlib_symbol netlib_ssh2_symbols[] = {
	NETLIB_SSH2_FUNCTIONS(NETLIB_SYMBOL, NETLIB_SYMBOL_VOID)
};

static const struct netlib_symbol netlib_curl_symbols[] = {
	NETLIB_CURL_FUNCTIONS(NETLIB_SYMBOL, NETLIB_SYMBOL_VOID)
	NETLIB_CURL_VARIADIC(NETLIB_SYMBOL_VARIADIC)
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Binds each of n symbols of the library at soname, or names the first
 * that fails. */
static bool
netlib_bind(const char *soname, const struct netlib_symbol *syms, size_t n)
{
	void *lib, *fn;
	size_t i;

	if ((lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		log_error("cannot load %s: %s", soname, dlerror());
		return false;
	}
	for (i = 0; i < n; i++) {
		if ((fn = dlsym(lib, syms[i].name)) == NULL) {
			log_error("%s has no symbol %s", soname, syms[i].name);
			return false;
		}
		/* POSIX: a dlsym() result may be stored as a function
		 * pointer; memcpy keeps C from objecting to the cast. */
		memcpy((unsigned char *)&netlib.fn + syms[i].offset, &fn,
		    sizeof(fn));
	}
	return true;
}

bool
netlib_load(void)
{
	/* libssh2 first: libcurl depends on it, so a broken libssh2 is
	 * reported by the symbol sp needs, not by libcurl's relocation. */
	if (!netlib_bind(NETLIB_SSH2_SONAME, netlib_ssh2_symbols,
	    NELEM(netlib_ssh2_symbols)) ||
	    !netlib_bind(NETLIB_CURL_SONAME, netlib_curl_symbols,
	    NELEM(netlib_curl_symbols)))
		return false;
	if (sysconf(_SC_PAGESIZE) == NETLIB_PAGE &&
	    mprotect(&netlib, sizeof(netlib), PROT_READ) == -1) {
		log_error("mprotect: %s", strerror(errno));
		return false;
	}
	return true;
}

/* A library function called before netlib_load() bound it. */
static void __attribute__((noreturn))
netlib_unbound(const char *name)
{
	log_error("%s called before the library was bound", name);
	abort();
}

#define NETLIB_FORWARD(ret, name, params, args) \
NETLIB_HIDDEN ret \
name params \
{ \
	if (netlib.fn.name == NULL) \
		netlib_unbound(#name); \
	return netlib.fn.name args; \
}

#define NETLIB_FORWARD_VOID(name, params, args) \
NETLIB_HIDDEN void \
name params \
{ \
	if (netlib.fn.name == NULL) \
		netlib_unbound(#name); \
	netlib.fn.name args; \
}

NETLIB_SSH2_FUNCTIONS(NETLIB_FORWARD, NETLIB_FORWARD_VOID)
NETLIB_CURL_FUNCTIONS(NETLIB_FORWARD, NETLIB_FORWARD_VOID)

/* Any function pointer: C converts between them without loss. */
typedef void (*netlib_callback)(void);

enum netlib_arg {
	NETLIB_ARG_LONG,
	NETLIB_ARG_POINTER,
	NETLIB_ARG_FUNCTION,
	NETLIB_ARG_OFF_T,
	NETLIB_ARG_UNKNOWN,
};

/*
 * The type of the argument after an easy or multi option, from the
 * range its number lies in (curl.h and multi.h share the bases).
 * A blob option takes a struct curl_blob *.
 */
#define NETLIB_OPTION_RANGE 10000	/* options per type range */
static enum netlib_arg
netlib_option_arg(long option)
{
	if (option < CURLOPTTYPE_LONG)
		return NETLIB_ARG_UNKNOWN;
	if (option < CURLOPTTYPE_OBJECTPOINT)
		return NETLIB_ARG_LONG;
	if (option < CURLOPTTYPE_FUNCTIONPOINT)
		return NETLIB_ARG_POINTER;
	if (option < CURLOPTTYPE_OFF_T)
		return NETLIB_ARG_FUNCTION;
	if (option < CURLOPTTYPE_BLOB)
		return NETLIB_ARG_OFF_T;
	if (option < CURLOPTTYPE_BLOB + NETLIB_OPTION_RANGE)
		return NETLIB_ARG_POINTER;
	return NETLIB_ARG_UNKNOWN;
}

/*
 * curl_easy_setopt and curl_multi_setopt: one argument after the option,
 * read with the type the option's range says and passed on with it.  An
 * option outside every range is refused, as libcurl itself would.
 */
#define NETLIB_FORWARD_SETOPT(ret, name, handle_type, option_type, unknown) \
NETLIB_HIDDEN ret \
name(handle_type *h, option_type opt, ...) \
{ \
	va_list ap; \
	ret rc; \
\
	if (netlib.fn.name == NULL) \
		netlib_unbound(#name); \
	va_start(ap, opt); \
	switch (netlib_option_arg((long)opt)) { \
	case NETLIB_ARG_LONG: \
		rc = netlib.fn.name(h, opt, va_arg(ap, long)); \
		break; \
	case NETLIB_ARG_POINTER: \
		rc = netlib.fn.name(h, opt, va_arg(ap, void *)); \
		break; \
	case NETLIB_ARG_FUNCTION: \
		rc = netlib.fn.name(h, opt, va_arg(ap, netlib_callback)); \
		break; \
	case NETLIB_ARG_OFF_T: \
		rc = netlib.fn.name(h, opt, va_arg(ap, curl_off_t)); \
		break; \
	default: \
		rc = unknown; \
		break; \
	} \
	va_end(ap); \
	return rc; \
}

NETLIB_FORWARD_SETOPT(CURLcode, curl_easy_setopt, CURL, CURLoption,
    CURLE_UNKNOWN_OPTION)
NETLIB_FORWARD_SETOPT(CURLMcode, curl_multi_setopt, CURLM, CURLMoption,
    CURLM_UNKNOWN_OPTION)

/* Every CURLINFO_* takes a pointer to where the answer goes. */
NETLIB_HIDDEN CURLcode
curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	va_list ap;
	CURLcode rc;

	if (netlib.fn.curl_easy_getinfo == NULL)
		netlib_unbound("curl_easy_getinfo");
	va_start(ap, info);
	rc = netlib.fn.curl_easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

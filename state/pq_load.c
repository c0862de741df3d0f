/*
 * libpq.so.5 opened with dlopen() and its functions bound with dlsym()
 * (state/pq_load.h): who calls it, and when.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "state/pq_load.h"

#ifdef SP_HAVE_LIBPQ

static struct pq_table pq_table;
static bool pq_tried;		/* the answer below is final */
static bool pq_loaded;
static char pq_why[256];

/* dlerror()'s text, or what when it has none. */
static const char *
pq_dlerror(const char *what)
{
	const char *e = dlerror();

	return e != NULL ? e : what;
}

static bool
pq_bind(void *lib)
{
	void *fn;

	/* POSIX lets a dlsym() result be used as a function pointer; the
	 * copy keeps -Wpedantic's object/function cast quiet. */
#define PQ_LOAD_BIND(f) \
	if ((fn = dlsym(lib, #f)) == NULL) { \
		snprintf(pq_why, sizeof(pq_why), "cannot load " \
		    PQ_LOAD_SONAME " (%s): install the " PQ_LOAD_PACKAGE \
		    " package (libpq 13 or later)", \
		    pq_dlerror("no " #f)); \
		return false; \
	} \
	memcpy(&pq_table.f, &fn, sizeof(fn));
	PQ_LOAD_FUNCTIONS(PQ_LOAD_BIND)
#undef PQ_LOAD_BIND
	return true;
}

const struct pq_table *
pq_load(char *why, size_t why_size)
{
	void *lib;

	if (!pq_tried) {
		pq_tried = true;
		/* never dlclose()d: libpq's connections and OpenSSL's state
		 * live as long as the process */
		if ((lib = dlopen(PQ_LOAD_SONAME, RTLD_NOW | RTLD_LOCAL)) ==
		    NULL)
			snprintf(pq_why, sizeof(pq_why), "cannot load "
			    PQ_LOAD_SONAME " (%s): install the " PQ_LOAD_PACKAGE
			    " package", pq_dlerror("not found"));
		else
			pq_loaded = pq_bind(lib);
	}
	if (!pq_loaded)
		snprintf(why, why_size, "%s", pq_why);
	return pq_loaded ? &pq_table : NULL;
}

#endif

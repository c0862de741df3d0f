/*
 * The SSH engine's copy of a private key and its passphrase: once a target
 * is added, the secret's bytes are found in no memory a core dump would
 * hold -- only in pages marked MADV_DONTDUMP, like the credential store's.
 */
#include "config.h"

#include <sys/random.h>

#include <criterion/criterion.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/secret.h"
#include "executor/ssh.h"

#define SCAN_CHUNK (1u << 20)
#define SCAN_MAPPING_MAX (1ul << 30)	/* skips sanitizer shadow reserves */

struct scan {
	int mem;			/* /proc/self/mem */
	unsigned char *buf;		/* SCAN_CHUNK bytes, secret memory */
	const unsigned char *needle;
	size_t needle_len;
	size_t hits;
};

/* Counts needle in [lo, hi), read through /proc/self/mem (no faults). */
static void
scan_range(struct scan *s, unsigned long lo, unsigned long hi)
{
	unsigned long at = lo;
	ssize_t n;

	while (at < hi) {
		size_t want = hi - at < SCAN_CHUNK ? hi - at : SCAN_CHUNK;
		const unsigned char *p, *end;

		if ((n = pread(s->mem, s->buf, want, (off_t)at)) <= 0)
			return;
		end = s->buf + n;
		for (p = s->buf; (p = memmem(p, (size_t)(end - p), s->needle,
		    s->needle_len)) != NULL; p++)
			s->hits++;
		/* overlap so a needle across two chunks is seen */
		if ((size_t)n < s->needle_len || at + (size_t)n >= hi)
			return;
		at += (size_t)n - (s->needle_len - 1);
	}
}

/* Hits of needle in every readable mapping not marked "dd". */
static size_t
hits_in_dumpable_memory(const unsigned char *needle, size_t len)
{
	struct secret buf;
	struct scan s = { .needle = needle, .needle_len = len };
	unsigned long lo = 0, hi = 0, a, b;
	char line[512], perms[8] = "", p[8], name[256];
	FILE *f;

	cr_assert(secret_alloc(&buf, SCAN_CHUNK));
	s.buf = buf.ptr;
	cr_assert_geq(s.mem = open("/proc/self/mem", O_RDONLY), 0);
	cr_assert_not_null(f = fopen("/proc/self/smaps", "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		char n[256] = "";


		/* "AnonHugePages:" reads as hex too: parse into temporaries */
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &a, &b, p,
		    n) >= 3) {
			lo = a;
			hi = b;
			memcpy(perms, p, sizeof(perms));
			memcpy(name, n, sizeof(name));
			continue;
		}
		if (strncmp(line, "VmFlags:", 8) != 0 || perms[0] != 'r' ||
		    strstr(line, " dd") != NULL || hi - lo > SCAN_MAPPING_MAX ||
		    strcmp(name, "[vvar]") == 0 ||
		    strcmp(name, "[vsyscall]") == 0)
			continue;
		scan_range(&s, lo, hi);
	}
	fclose(f);
	close(s.mem);
	secret_free(&buf);
	return s.hits;
}

/* n random bytes as hex text into secret memory, so no copy exists yet. */
static void
random_secret(struct secret *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	cr_assert(secret_alloc(s, 2 * n + 1));
	cr_assert_eq(getrandom(s->ptr + n, n, 0), (ssize_t)n);
	for (i = 0; i < n; i++) {
		unsigned char b = s->ptr[n + i];

		s->ptr[2 * i] = (unsigned char)hex[b >> 4];
		s->ptr[2 * i + 1] = (unsigned char)hex[b & 15];
	}
	s->ptr[2 * n] = '\0';
}

Test(ssh_secrets, the_engine_keeps_key_and_passphrase_out_of_core_dumps)
{
	struct ssh_engine_config cfg = { 0 };
	struct event_base *base;
	struct ssh_engine *engine;
	struct secret key, pass;
	struct ssh_target t = { .address = "127.0.0.1", .port = 22,
	    .user = "ops" };

	random_secret(&key, 48);
	random_secret(&pass, 24);
	cr_assert_eq(hits_in_dumpable_memory(key.ptr, 96), 0);
	cr_assert_eq(hits_in_dumpable_memory(pass.ptr, 48), 0);
	cr_assert_not_null(base = event_base_new());
	cr_assert_not_null(engine = ssh_engine_new(base, &cfg));
	t.private_key = (const char *)key.ptr;
	t.private_key_len = 96;
	t.passphrase = (const char *)pass.ptr;
	cr_assert_geq(ssh_engine_add_target(engine, &t), 0);
	cr_assert_geq(ssh_engine_add_target(engine, &t), 1);
	cr_assert_eq(hits_in_dumpable_memory(key.ptr, 96), 0,
	    "the private key was copied to dumpable memory");
	cr_assert_eq(hits_in_dumpable_memory(pass.ptr, 48), 0,
	    "the passphrase was copied to dumpable memory");
	ssh_engine_free(engine);
	event_base_free(base);
	secret_free(&key);
	secret_free(&pass);
}

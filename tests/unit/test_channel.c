/*
 * common/channel.c: one receive path checks each record against the
 * peer table before any handler sees it, takes at most the bound asked
 * per call, and one send path refuses what the sender's table does not
 * list; a body its handler cannot decode is fatal unless the row lists
 * its type as audited (then the undecodable hook has it, once greeted).
 * Over a real SOCK_SEQPACKET socketpair.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/channel.h"

struct seen {
	int hellos, cancels;
	uint64_t last_cancel;
	int refusals;
	enum channel_fault why;
	enum record_role from;
	int undecodable;		/* the undecodable hook's calls */
	enum record_type undecodable_type;
	struct channel *ch;		/* for channel_undecodable() */
};

static bool
on_hello(void *arg, enum record_role from, const uint8_t *rec, size_t len)
{
	struct seen *s = arg;
	struct record_hello h;
	enum record_error e;

	if ((e = record_hello_decode(rec, len, &h)) != RECORD_OK)
		return channel_undecodable(s->ch, from, rec, len, e);
	s->hellos++;
	return true;
}

static bool
on_cancel(void *arg, enum record_role from, const uint8_t *rec, size_t len)
{
	struct seen *s = arg;
	struct record_cancel c;
	enum record_error e;

	if ((e = record_cancel_decode(rec, len, &c)) != RECORD_OK)
		return channel_undecodable(s->ch, from, rec, len, e);
	s->cancels++;
	s->last_cancel = c.call_id;
	return true;
}

static bool
refused(void *arg, enum record_role from, const uint8_t *rec, size_t len,
    enum channel_fault f)
{
	struct seen *s = arg;

	(void)rec;
	(void)len;
	s->refusals++;
	s->why = f;
	s->from = from;
	return true;	/* "ends in order": the test goes on */
}

static bool
undecodable(void *arg, enum record_role from, enum record_type type,
    const uint8_t *rec, size_t len)
{
	struct seen *s = arg;

	cr_assert_eq(from, RECORD_ROLE_FRONTEND);
	cr_assert_gt(len, RECORD_HEADER_LEN);
	cr_assert_not_null(rec);
	s->undecodable++;
	s->undecodable_type = type;
	return true;
}

/* The executor's view of a frontend: hello first, then cancels. */
static const struct channel_peer peers[] = {
	{
		.role = RECORD_ROLE_FRONTEND,
		.start = CHANNEL_HELLO,
		.accept = {
			[CHANNEL_HELLO] = CHANNEL_TYPE(RECORD_HELLO),
			[CHANNEL_READY] = CHANNEL_TYPE(RECORD_CANCEL),
		},
		.sends = CHANNEL_TYPE(RECORD_CANCEL),
		.on = {
			[RECORD_HELLO] = on_hello,
			[RECORD_CANCEL] = on_cancel,
		},
	},
};

struct fixture {
	struct channel *ch;
	struct seen seen;
	struct record_limits limits;
	struct channel_peer table[1];	/* peers, maybe with audited types */
	int sv[2];		/* sv[0] ours, sv[1] the peer's */
};

/* audited: the types whose undecodable body is audited, not fatal. */
static void
fixture_init_audited(struct fixture *f, uint32_t audited, bool with_hook)
{
	struct channel_config cfg = {
		.peers = f->table,
		.peer_count = 1,
		.limits = &f->limits,
		.exit_status = 70,
		.undecodable = undecodable,
	};

	memset(f, 0, sizeof(*f));
	f->table[0] = peers[0];
	f->table[0].audited = audited;
	record_limits_default(&f->limits);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, f->sv), 0);
	cfg.arg = &f->seen;
	cfg.refused = with_hook ? refused : NULL;
	cr_assert_not_null(f->ch = channel_new(&cfg));
	f->seen.ch = f->ch;
	channel_attach(f->ch, RECORD_ROLE_FRONTEND, f->sv[0]);
}

static void
fixture_init(struct fixture *f, bool with_hook)
{
	fixture_init_audited(f, 0, with_hook);
}

static void
fixture_free(struct fixture *f)
{
	channel_free(f->ch);
	(void)close(f->sv[0]);
	(void)close(f->sv[1]);
}

/* What the peer sends: raw bytes, past any table. */
static void
peer_sends(const struct fixture *f, const void *rec, size_t len)
{
	cr_assert_eq(send(f->sv[1], rec, len, 0), (ssize_t)len);
}

static void
peer_sends_cancel(const struct fixture *f, uint64_t id)
{
	struct record_cancel c = { id };
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_cancel_encode(&c, &b), RECORD_OK);
	peer_sends(f, buf_ptr(&b), buf_len(&b));
	buf_free(&b);
}

static void
peer_sends_hello(const struct fixture *f)
{
	struct record_hello h = { .role = RECORD_ROLE_FRONTEND };
	struct buf b;

	buf_init_writer(&b, RECORD_MAX_BYTES);
	cr_assert_eq(record_hello_encode(&h, &b), RECORD_OK);
	peer_sends(f, buf_ptr(&b), buf_len(&b));
	buf_free(&b);
}

Test(channel, before_the_hello_only_the_hello_is_taken)
{
	struct fixture f;

	fixture_init(&f, true);
	peer_sends_cancel(&f, 7);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
	    CHANNEL_STOPPED);
	cr_assert_eq(f.seen.cancels, 0, "no handler saw it");
	cr_assert_eq(f.seen.refusals, 1);
	cr_assert_eq(f.seen.why, CHANNEL_FAULT_TYPE);
	cr_assert_eq(f.seen.from, RECORD_ROLE_FRONTEND);
	fixture_free(&f);
}

Test(channel, once_ready_the_hello_is_no_longer_permitted)
{
	struct fixture f;

	fixture_init(&f, true);
	peer_sends_hello(&f);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
	    CHANNEL_OPEN);
	cr_assert_eq(f.seen.hellos, 1);
	channel_set_state(f.ch, RECORD_ROLE_FRONTEND, CHANNEL_READY);
	peer_sends_cancel(&f, 0xfedcba9876543210ull);
	peer_sends_hello(&f);
	peer_sends_cancel(&f, 3);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
	    CHANNEL_STOPPED);
	cr_assert_eq(f.seen.cancels, 1, "nothing after the refused record");
	cr_assert_eq(f.seen.last_cancel, 0xfedcba9876543210ull);
	cr_assert_eq(f.seen.hellos, 1);
	cr_assert_eq(f.seen.why, CHANNEL_FAULT_TYPE);
	fixture_free(&f);
}

Test(channel, unknown_version_short_and_unknown_type_are_refused)
{
	/* version 2 cancel; three bytes; type 99; version 0 */
	static const uint8_t v2[] = { 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t shortrec[] = { 0, 1, 0 };
	static const uint8_t t99[] = { 0, 1, 0, 99, 0, 0, 0, 0 };
	static const uint8_t v0[] = { 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1 };
	const struct { const uint8_t *rec; size_t len; enum channel_fault e; }
	cases[] = {
		{ v2, sizeof(v2), CHANNEL_FAULT_VERSION },
		{ shortrec, sizeof(shortrec), CHANNEL_FAULT_NO_HEADER },
		{ t99, sizeof(t99), CHANNEL_FAULT_TYPE },
		{ v0, sizeof(v0), CHANNEL_FAULT_VERSION },
	};
	struct fixture f;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_init(&f, true);
		channel_set_state(f.ch, RECORD_ROLE_FRONTEND, CHANNEL_READY);
		peer_sends(&f, cases[i].rec, cases[i].len);
		cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
		    CHANNEL_STOPPED, "case %zu", i);
		cr_assert_eq(f.seen.why, cases[i].e, "case %zu", i);
		cr_assert_eq(f.seen.cancels, 0, "case %zu", i);
		fixture_free(&f);
	}
}

Test(channel, a_refused_record_ends_the_process_without_a_hook,
    .exit_code = 70)
{
	struct fixture f;

	fixture_init(&f, false);
	peer_sends_cancel(&f, 1);
	(void)channel_read(f.ch, RECORD_ROLE_FRONTEND, 8);
	cr_assert_fail("channel_read returned after a refused record");
}

/* Cancels of 7 and 9 bytes: short and trailing; a hello of 3 bytes. */
static const uint8_t cancel_short[] = { 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 7 };
static const uint8_t cancel_long[] = { 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0,
    9, 0x2d };
static const uint8_t hello_short[] = { 0, 1, 0, 1, 0xff, 0xfe, 0x24 };

Test(channel, an_undecodable_body_is_fatal_where_not_audited)
{
	const struct { const uint8_t *rec; size_t len; bool ready; } cases[] = {
		{ cancel_short, sizeof(cancel_short), true },
		{ cancel_long, sizeof(cancel_long), true },
		{ hello_short, sizeof(hello_short), false },
	};
	struct fixture f;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_init(&f, true);
		if (cases[i].ready)
			channel_set_state(f.ch, RECORD_ROLE_FRONTEND,
			    CHANNEL_READY);
		peer_sends(&f, cases[i].rec, cases[i].len);
		peer_sends_cancel(&f, 5);
		cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
		    CHANNEL_STOPPED, "case %zu", i);
		cr_assert_eq(f.seen.refusals, 1, "case %zu", i);
		cr_assert_eq(f.seen.why, CHANNEL_FAULT_BODY, "case %zu", i);
		cr_assert_eq(f.seen.undecodable, 0, "case %zu", i);
		cr_assert_eq(f.seen.cancels, 0, "nothing after, case %zu", i);
		fixture_free(&f);
	}
}

Test(channel, an_undecodable_body_ends_the_process_without_a_hook,
    .exit_code = 70)
{
	struct fixture f;

	fixture_init(&f, false);
	channel_set_state(f.ch, RECORD_ROLE_FRONTEND, CHANNEL_READY);
	peer_sends(&f, cancel_long, sizeof(cancel_long));
	(void)channel_read(f.ch, RECORD_ROLE_FRONTEND, 8);
	cr_assert_fail("channel_read returned after an undecodable body");
}

Test(channel, an_audited_type_goes_to_the_hook_and_reading_goes_on)
{
	struct fixture f;

	fixture_init_audited(&f, CHANNEL_TYPE(RECORD_CANCEL), true);
	channel_set_state(f.ch, RECORD_ROLE_FRONTEND, CHANNEL_READY);
	peer_sends(&f, cancel_short, sizeof(cancel_short));
	peer_sends(&f, cancel_long, sizeof(cancel_long));
	peer_sends_cancel(&f, 11);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
	    CHANNEL_OPEN);
	cr_assert_eq(f.seen.undecodable, 2);
	cr_assert_eq(f.seen.undecodable_type, RECORD_CANCEL);
	cr_assert_eq(f.seen.refusals, 0);
	cr_assert_eq(f.seen.cancels, 1);
	cr_assert_eq(f.seen.last_cancel, 11);
	fixture_free(&f);
}

Test(channel, before_the_hello_even_an_audited_type_is_fatal)
{
	struct fixture f;

	fixture_init_audited(&f, CHANNEL_TYPE(RECORD_CANCEL), true);
	peer_sends(&f, hello_short, sizeof(hello_short));
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 8),
	    CHANNEL_STOPPED);
	cr_assert_eq(f.seen.why, CHANNEL_FAULT_BODY);
	cr_assert_eq(f.seen.undecodable, 0);
	fixture_free(&f);
}

Test(channel, an_audited_row_needs_its_hook)
{
	struct record_limits limits;
	struct channel_peer table[1] = { peers[0] };
	struct channel_config cfg = {
		.peers = table,
		.peer_count = 1,
		.limits = &limits,
		.exit_status = 70,
	};

	table[0].audited = CHANNEL_TYPE(RECORD_CANCEL);
	record_limits_default(&limits);
	cr_assert_null(channel_new(&cfg));
}

Test(channel, at_most_max_records_per_read)
{
	struct fixture f;
	uint64_t id;

	fixture_init(&f, true);
	channel_set_state(f.ch, RECORD_ROLE_FRONTEND, CHANNEL_READY);
	for (id = 1; id <= 5; id++)
		peer_sends_cancel(&f, id);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 2),
	    CHANNEL_OPEN);
	cr_assert_eq(f.seen.cancels, 2);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 2),
	    CHANNEL_OPEN);
	cr_assert_eq(f.seen.cancels, 4);
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 64),
	    CHANNEL_OPEN, "drained: nothing waits, no blocking");
	cr_assert_eq(f.seen.cancels, 5);
	cr_assert_eq(f.seen.last_cancel, 5);
	(void)close(f.sv[1]);
	f.sv[1] = -1;
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 64),
	    CHANNEL_CLOSED);
	fixture_free(&f);
}

Test(channel, send_refuses_what_the_table_does_not_list)
{
	struct record_hello h = { .role = RECORD_ROLE_EXECUTOR };
	struct record_cancel c = { 42 };
	struct record_cancel back;
	uint8_t got[64];
	struct fixture f;
	ssize_t n;

	fixture_init(&f, true);
	cr_assert_not(channel_send(f.ch, RECORD_ROLE_FRONTEND, RECORD_HELLO,
	    &h));
	cr_assert_not(channel_send(f.ch, RECORD_ROLE_BROKER, RECORD_CANCEL,
	    &c), "not a peer of this table");
	n = recv(f.sv[1], got, sizeof(got), MSG_DONTWAIT);
	cr_assert(n == -1 && errno == EAGAIN, "nothing was sent");
	cr_assert(channel_send(f.ch, RECORD_ROLE_FRONTEND, RECORD_CANCEL, &c));
	n = recv(f.sv[1], got, sizeof(got), MSG_DONTWAIT);
	cr_assert_gt(n, 0);
	cr_assert_eq(record_cancel_decode(got, (size_t)n, &back), RECORD_OK);
	cr_assert_eq(back.call_id, 42);
	fixture_free(&f);
}

Test(channel, a_closed_channel_is_not_written)
{
	struct record_cancel c = { 9 };
	struct fixture f;

	fixture_init(&f, true);
	channel_attach(f.ch, RECORD_ROLE_FRONTEND, -1);
	cr_assert_not(channel_send(f.ch, RECORD_ROLE_FRONTEND, RECORD_CANCEL,
	    &c));
	cr_assert_eq(channel_read(f.ch, RECORD_ROLE_FRONTEND, 1),
	    CHANNEL_BROKEN);
	fixture_free(&f);
}

Test(role, one_spelling_per_role)
{
	cr_assert_str_eq(record_role_name(RECORD_ROLE_BROKER), "broker");
	cr_assert_str_eq(record_role_name(RECORD_ROLE_FRONTEND), "frontend");
	cr_assert_str_eq(record_role_name(RECORD_ROLE_EXECUTOR), "executor");
	cr_assert_str_eq(record_role_name((enum record_role)0), "unknown");
	cr_assert_str_eq(record_role_name((enum record_role)4), "unknown");
	cr_assert_str_eq(record_role_program(RECORD_ROLE_FRONTEND),
	    "sp-frontend");
	cr_assert_str_eq(record_role_program(RECORD_ROLE_EXECUTOR),
	    "sp-executor");
	cr_assert_str_eq(record_role_program(RECORD_ROLE_BROKER), "sp");
	cr_assert_null(record_role_program((enum record_role)200));
}

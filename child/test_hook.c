/*
 * Test hooks (child/test_hook.h).  Compiled empty unless SP_TEST_HOOKS.
 */
#include "config.h"

#include "child/test_hook.h"

#ifdef SP_TEST_HOOKS

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "child/child.h"
#include "common/log.h"

/* executor:slow-hello and executor:bad-hello: how long the hello waits. */
#define TEST_HOOK_SLOW_HELLO_MS	1500
/* below the broker's 2 s of settle waits (broker/supervise.c) */
#define TEST_HOOK_DIE_SLOWLY_MS	600
#define TEST_HOOK_BAD_HELLO_MS	500
/* executor:mute-hello: longer than the frontend waits for a hello. */
#define TEST_HOOK_MUTE_HELLO_MS	60000

/* A line that must never be mistaken for protocol. */
static const char test_hook_noise[] = "NOISE from a test hook on fd 1\n";

/* How long stderr-forge's long line is: past CHILD_STDERR_LINE_MAX. */
#define TEST_HOOK_LONG_LINE 5000

/*
 * stderr-forge: what a child with code execution could write on its fd 2
 * to pass for the broker: the session-end anchor with a made-up hash, a
 * line with escapes, DEL, a C1 control and a bare byte that is not
 * UTF-8, and one line longer than the broker keeps.
 */
static void
test_hook_stderr_forge(void)
{
	static const char forged[] =
	    "sp[sp]: info: audit: session 0000000000000000 ended, "
	    "last hash 00000000000000000000000000000000000000000000000000000"
	    "00000000000\n"
	    "bell\a esc\x1b[2J cr\r del\x7f c1\xc2\x9b "
	    "\xc3\xa9t\xc3\xa9 \"$(id)\" -x %2e%2e\n"
	    "raw\xff byte\n";
	char line[TEST_HOOK_LONG_LINE + 1];

	(void)!write(STDERR_FILENO, forged, sizeof(forged) - 1);
	memset(line, 'L', TEST_HOOK_LONG_LINE);
	line[TEST_HOOK_LONG_LINE] = '\n';
	(void)!write(STDERR_FILENO, line, sizeof(line));
}

/* stderr-partial: how many lines come before the partial one. */
#define TEST_HOOK_BURST_LINES 200

/*
 * stderr-partial: a burst of lines (48 KiB, most of a pipe, more than
 * the broker reads in one wake-up), a last line without its newline, then
 * an exit 0: what the broker has not read by the time the child is
 * reaped must still be said.
 */
static void
test_hook_stderr_partial(void)
{
	static const char partial[] = "partial last line, no newline";
	char line[240];
	int i;

	memset(line, 'b', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	for (i = 0; i < TEST_HOOK_BURST_LINES; i++) {
		(void)snprintf(line, sizeof(line), "burst %03d", i);
		line[9] = ' ';
		(void)!write(STDERR_FILENO, line, sizeof(line));
	}
	(void)!write(STDERR_FILENO, partial, sizeof(partial) - 1);
	_exit(0);
}

static void
test_hook_connect(void)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(9);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* fd 0 is not a socket: only the syscall matters. */
	(void)connect(0, (struct sockaddr *)&sin, sizeof(sin));
}

static void
test_hook_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * Dies as exit does, but slowly: every fd but stderr closed first (its
 * peers see EOF and may end at once), then TEST_HOOK_DIE_SLOWLY_MS of
 * being alive without them, then SIGKILL.  What a loaded machine does
 * between an exit closing the fds and the process becoming a zombie.
 */
static void
test_hook_die_slowly(void)
{
	int fd;

	for (fd = 0; fd < 1024; fd++)
		if (fd != STDERR_FILENO)
			(void)close(fd);
	test_hook_sleep_ms(TEST_HOOK_DIE_SLOWLY_MS);
	(void)raise(SIGKILL);
}

static void
test_hook_act(const char *action)
{
	char *const argv[] = { (char *)"/bin/true", NULL };

	log_info("test hook: %s", action);
	if (strcmp(action, "open") == 0)
		(void)open("/etc/passwd", O_RDONLY);
	else if (strcmp(action, "open-write") == 0)
		(void)open("/tmp/sp-test-hook", O_WRONLY | O_CREAT, 0600);
	else if (strcmp(action, "socket") == 0)
		/* Not AF_UNIX: the broker's filter refuses that one softly
		 * for syslog(3) (common/sandbox_filter.c); IP kills in both. */
		(void)socket(AF_INET, SOCK_STREAM, 0);
	else if (strcmp(action, "connect") == 0)
		test_hook_connect();
	else if (strcmp(action, "execve") == 0)
		(void)execve(argv[0], argv, NULL);
	else if (strcmp(action, "noise") == 0)
		(void)!write(1, test_hook_noise, sizeof(test_hook_noise) - 1);
	else if (strcmp(action, "stderr-forge") == 0)
		test_hook_stderr_forge();
	else if (strcmp(action, "stderr-partial") == 0)
		test_hook_stderr_partial();
	else if (strcmp(action, "die-slowly") == 0)
		test_hook_die_slowly();
	else if (strcmp(action, "slow-hello") == 0)
		test_hook_sleep_ms(TEST_HOOK_SLOW_HELLO_MS);
	else if (strcmp(action, "bad-hello") == 0)
		test_hook_sleep_ms(TEST_HOOK_BAD_HELLO_MS);
	else if (strcmp(action, "mute-hello") == 0)
		test_hook_sleep_ms(TEST_HOOK_MUTE_HELLO_MS);
	else if (strncmp(action, "stray-", 6) == 0 ||
	    strncmp(action, "early-", 6) == 0 ||
	    strncmp(action, "version-", 8) == 0 ||
	    strncmp(action, "badbody-", 8) == 0 ||
	    strncmp(action, "badhello-", 9) == 0)
		;	/* test_hook_stray(), on the channel */
	else if (strncmp(action, "stop-before-append-", 19) == 0)
		;	/* test_hook_state_append(), at the append */
	else
		log_error("unknown test hook action '%s'", action);
	log_info("test hook: %s returned", action);
}

bool
test_hook_is(const char *role, const char *action)
{
	const char *hook = getenv("SP_TEST_HOOK");
	size_t n = strlen(role);

	return hook != NULL && strncmp(hook, role, n) == 0 && hook[n] == ':' &&
	    strcmp(hook + n + 1, action) == 0;
}

void
test_hook_run(const char *role)
{
	const char *hook = getenv("SP_TEST_HOOK");
	size_t n = strlen(role);

	if (hook != NULL && strncmp(hook, role, n) == 0 && hook[n] == ':')
		test_hook_act(hook + n + 1);
}

void
test_hook_hello_to_frontend(struct record_hello *h)
{
	if (test_hook_is("executor", "bad-hello"))
		h->fingerprint[0] ^= 0x01;
}

/*
 * By receiver: a type it accepts once greeted (sent early, it is refused
 * for the state), and one it never accepts from that sender then.
 */
static const enum record_type stray_ready[] = {
	[RECORD_ROLE_BROKER] = RECORD_AUDIT_EVENT,
	[RECORD_ROLE_FRONTEND] = RECORD_RESULT,
	[RECORD_ROLE_EXECUTOR] = RECORD_ACTION,
};
static const enum record_type stray_never[] = {
	[RECORD_ROLE_BROKER] = RECORD_ACTION,
	[RECORD_ROLE_FRONTEND] = RECORD_ACTION,
	[RECORD_ROLE_EXECUTOR] = RECORD_HELLO,	/* a second hello */
};

/* The header of the stray record act ("stray-PEER"...) asks for. */
static bool
stray_header(const char *act, enum record_role peer, bool greeted,
    uint16_t *version, uint16_t *type)
{
	const char *name = record_role_name(peer);
	char want[32];

	*version = RECORD_VERSION;
	(void)snprintf(want, sizeof(want), "early-%s", name);
	if (!greeted && strcmp(act, want) == 0) {
		*type = (uint16_t)stray_ready[peer];
		return true;
	}
	(void)snprintf(want, sizeof(want), "stray-%s", name);
	if (greeted && strcmp(act, want) == 0) {
		*type = (uint16_t)stray_never[peer];
		return true;
	}
	/* an approval only the broker may send the executor */
	(void)snprintf(want, sizeof(want), "approval-%s", name);
	if (greeted && strcmp(act, want) == 0) {
		*type = (uint16_t)RECORD_OPERATOR_ANSWER;
		return true;
	}
	(void)snprintf(want, sizeof(want), "version-%s", name);
	if (greeted && strcmp(act, want) == 0) {
		*version = RECORD_VERSION + 1;
		*type = (uint16_t)stray_ready[peer];
		return true;
	}
	return false;
}

/*
 * badbody-PEER: by sender and receiver, a type the receiver takes once
 * greeted, sent with a body that does not decode (the call id
 * STRAY_BADBODY_CALL, then one byte); badhello-PEER (before the
 * sender's hello): a hello with that body.
 */
#define STRAY_BADBODY_CALL 77
static const enum record_type stray_badbody[][RECORD_ROLE_EXECUTOR + 1] = {
	[RECORD_ROLE_BROKER] = {
		[RECORD_ROLE_EXECUTOR] = RECORD_AUDIT_ACK,
	},
	[RECORD_ROLE_FRONTEND] = {
		[RECORD_ROLE_BROKER] = RECORD_AUDIT_EVENT,
		[RECORD_ROLE_EXECUTOR] = RECORD_ACTION,
	},
	[RECORD_ROLE_EXECUTOR] = {
		[RECORD_ROLE_BROKER] = RECORD_AUDIT_EVENT,
		[RECORD_ROLE_FRONTEND] = RECORD_RESULT,
	},
};

/* The type of the bad body act asks role to send peer, or false. */
static bool
stray_badbody_type(const char *role, const char *act, enum record_role peer,
    bool greeted, uint16_t *type)
{
	const char *name = record_role_name(peer);
	char want[32];
	int from;

	(void)snprintf(want, sizeof(want), "badhello-%s", name);
	if (!greeted && strcmp(act, want) == 0) {
		*type = (uint16_t)RECORD_HELLO;
		return true;
	}
	(void)snprintf(want, sizeof(want), "badbody-%s", name);
	if (!greeted || strcmp(act, want) != 0)
		return false;
	for (from = RECORD_ROLE_BROKER; from <= RECORD_ROLE_EXECUTOR; from++)
		if (strcmp(role, record_role_name((enum record_role)from)) == 0)
			break;
	if (from > RECORD_ROLE_EXECUTOR || stray_badbody[from][peer] == 0)
		return false;
	*type = (uint16_t)stray_badbody[from][peer];
	return true;
}

void
test_hook_stray(struct channel *ch, const char *role, bool greeted)
{
	const char *hook = getenv("SP_TEST_HOOK");
	uint8_t rec[RECORD_HEADER_LEN + 9];
	uint16_t version, type;
	size_t n = strlen(role), len;
	int peer;

	if (hook == NULL || strncmp(hook, role, n) != 0 || hook[n] != ':')
		return;
	for (peer = RECORD_ROLE_BROKER; peer <= RECORD_ROLE_EXECUTOR; peer++) {
		memset(rec, 0, sizeof(rec));
		version = RECORD_VERSION;
		len = RECORD_HEADER_LEN + 8;
		if (channel_fd(ch, (enum record_role)peer) >= 0 &&
		    stray_badbody_type(role, hook + n + 1,
		    (enum record_role)peer, greeted, &type)) {
			rec[RECORD_HEADER_LEN + 7] = STRAY_BADBODY_CALL;
			rec[RECORD_HEADER_LEN + 8] = 0xff;
			len++;
		} else if (channel_fd(ch, (enum record_role)peer) < 0 ||
		    !stray_header(hook + n + 1, (enum record_role)peer,
		    greeted, &version, &type))
			continue;
		rec[0] = (uint8_t)(version >> 8);
		rec[1] = (uint8_t)version;
		rec[2] = (uint8_t)(type >> 8);
		rec[3] = (uint8_t)type;
		log_info("test hook: record version %u type %u to the %s",
		    (unsigned)version, (unsigned)type,
		    record_role_name((enum record_role)peer));
		/* Past our own table, as a compromised process would. */
		(void)send(channel_fd(ch, (enum record_role)peer), rec, len,
		    MSG_NOSIGNAL);
	}
}

enum forge_case {
	FORGE_INDEX, FORGE_FINGERPRINT, FORGE_VALUES, FORGE_SCOPE, FORGE_GOOD,
	FORGE_COUNT
};

/* A valid value with quotes, a newline, $() and multibyte text. */
static const char forge_text[] = "it's \"$(id)\"\n%2e%2e \xc3\xa9t\xc3\xa9";

static const char *const forge_names[FORGE_COUNT] = {
	"index", "fingerprint", "values", "scope", "good",
};

/* One action record for case c, call id c + 1. */
static bool
forge_encode(const struct child_context *ctx, enum forge_case c,
    struct buf *out)
{
	char long_value[200];
	struct value v;
	struct record_action a;
	bool ok;

	memset(long_value, 'A', sizeof(long_value));
	memset(&a, 0, sizeof(a));
	memset(&v, 0, sizeof(v));
	a.call_id = (uint64_t)c + 1;
	a.tool_index = c == FORGE_INDEX ? (uint32_t)ctx->policy->tool_count :
	    c == FORGE_SCOPE ? 1 : 0;
	memcpy(a.fingerprint, ctx->fingerprint, HASH_SHA256_LEN);
	if (c == FORGE_FINGERPRINT)
		a.fingerprint[7] ^= 0x20;
	if (c == FORGE_VALUES)
		ok = value_set_string(&v, long_value, sizeof(long_value));
	else
		ok = value_set_string(&v, forge_text, strlen(forge_text));
	if (!ok)
		return false;
	a.args = &v;
	a.arg_count = 1;
	ok = record_action_encode(&a, &ctx->limits, out) == RECORD_OK;
	value_free(&v);
	return ok;
}

static void
forge_reply(const struct child_context *ctx, int fd, const char *name)
{
	uint8_t rec[4096];
	struct record_result r;
	ssize_t n;

	n = recv(fd, rec, sizeof(rec), 0);
	if (n <= 0 || record_result_decode(rec, (size_t)n, &ctx->limits,
	    &r) != RECORD_OK) {
		log_info("forge %s: no result", name);
		return;
	}
	log_info("forge %s: call %llu outcome %d: %s", name,
	    (unsigned long long)r.call_id, (int)r.outcome, r.message.ptr);
	record_result_free(&r);
}

/*
 * frontend:forge-burst: FORGE_BURST well-formed actions for tool 0, all
 * sent before any answer is read, so that only the executor's own limits
 * (calls_per_session, max_inflight) stand between them and the target.
 */
#define FORGE_BURST	5

static void
forge_burst(const struct child_context *ctx, int action_fd)
{
	char id[32];
	struct value v;
	struct record_action a;
	struct buf out;
	int i;

	for (i = 0; i < FORGE_BURST; i++) {
		memset(&a, 0, sizeof(a));
		memset(&v, 0, sizeof(v));
		a.call_id = 100 + (uint64_t)i;
		memcpy(a.fingerprint, ctx->fingerprint, HASH_SHA256_LEN);
		snprintf(id, sizeof(id), "burst-%d \xc3\xa9", i);
		if (!value_set_string(&v, id, strlen(id)))
			return;
		a.args = &v;
		a.arg_count = 1;
		buf_init_writer(&out, RECORD_MAX_BYTES);
		if (record_action_encode(&a, &ctx->limits, &out) == RECORD_OK)
			(void)channel_send_encoded(ctx->chan,
			    RECORD_ROLE_EXECUTOR, buf_ptr(&out), buf_len(&out));
		buf_free(&out);
		value_free(&v);
	}
	for (i = 0; i < FORGE_BURST; i++)
		forge_reply(ctx, action_fd, "burst");
}

void
test_hook_forge(const struct child_context *ctx)
{
	static const uint8_t garbage[] = { 0, 1, 0, 2, 0xff, 0xff };
	const char *hook = getenv("SP_TEST_HOOK");
	int action_fd = channel_fd(ctx->chan, RECORD_ROLE_EXECUTOR);
	struct buf out;
	int c;

	if (hook != NULL && strcmp(hook, "frontend:forge-burst") == 0)
		forge_burst(ctx, action_fd);
	if (hook == NULL || strcmp(hook, "frontend:forge") != 0)
		return;
	for (c = 0; c < FORGE_COUNT; c++) {
		buf_init_writer(&out, RECORD_MAX_BYTES);
		if (forge_encode(ctx, (enum forge_case)c, &out) &&
		    channel_send_encoded(ctx->chan, RECORD_ROLE_EXECUTOR,
		    buf_ptr(&out), buf_len(&out)))
			forge_reply(ctx, action_fd, forge_names[c]);
		buf_free(&out);
	}
	/* Undecodable: no call id, so no answer; only the audit sees it. */
	(void)send(action_fd, garbage, sizeof(garbage), MSG_NOSIGNAL);
}

/* confirm-replay and confirm-stale: the first answer's challenge. */
static struct {
	bool have;
	struct record_confirm_challenge challenge;
} confirm_first;

bool
test_hook_confirm_relay(const struct child_context *ctx, const uint8_t *rec,
    size_t len)
{
	const char *hook = getenv("SP_TEST_HOOK");
	struct record_confirm_answer a;
	enum record_type type;
	struct buf out;
	bool first, keep_back = false;

	if (hook == NULL || strncmp(hook, "frontend:confirm-", 17) != 0 ||
	    record_peek(rec, len, NULL, &type) != RECORD_OK ||
	    type != RECORD_CONFIRM_ANSWER ||
	    record_confirm_answer_decode(rec, len, &ctx->limits, &a) !=
	    RECORD_OK)
		return false;
	first = !confirm_first.have;
	if (first) {
		confirm_first.have = true;
		confirm_first.challenge = a.challenge;
	}
	if (strcmp(hook + 17, "mac") == 0)
		a.challenge.mac[HASH_SHA256_LEN / 2] ^= 0x04;
	else if (strcmp(hook + 17, "replay") == 0 && !first)
		a.challenge = confirm_first.challenge;
	else if (strcmp(hook + 17, "stale") == 0) {
		keep_back = first;
		a.challenge = confirm_first.challenge;
	}
	log_info("test hook: confirmation for call %llu %s",
	    (unsigned long long)a.call_id, keep_back ? "kept back" : "forged");
	buf_init_writer(&out, RECORD_MAX_BYTES);
	if (!keep_back && record_confirm_answer_encode(&a, &ctx->limits,
	    &out) == RECORD_OK)
		(void)channel_send_encoded(ctx->chan, RECORD_ROLE_EXECUTOR,
		    buf_ptr(&out), buf_len(&out));
	buf_free(&out);
	record_confirm_answer_free(&a);
	return true;
}

void
test_hook_heap_report(const char *role)
{
	struct mallinfo2 mi;

	if (!test_hook_is("all", "heap-report"))
		return;
	mi = mallinfo2();
	log_info("heap-report %s %zu", role, mi.uordblks + mi.hblkhd);
}

void
test_hook_state_append(const char *name)
{
	static const char prefix[] = "stop-before-append-";
	char action[sizeof(prefix) + 64];
	int n;

	n = snprintf(action, sizeof(action), "%s%s", prefix, name);
	if (n > 0 && (size_t)n < sizeof(action) &&
	    test_hook_is("broker", action))
		(void)raise(SIGSTOP);
}

unsigned
test_hook_progress_ms(unsigned dflt)
{
	const char *text = getenv("SP_TEST_PROGRESS_MS");
	char *end;
	unsigned long ms;

	if (text == NULL)
		return dflt;
	errno = 0;
	ms = strtoul(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || ms < 10 ||
	    ms > 600000) {
		log_error("SP_TEST_PROGRESS_MS=%.32s ignored", text);
		return dflt;
	}
	return (unsigned)ms;
}

#endif

/*
 * The broken start's one answer (broker/start_refusal.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "broker/start_refusal.h"
#include "common/clock.h"
#include "common/frame.h"
#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"

#define REFUSAL_FRAME_MAX (1024 * 1024)	/* the default max_frame_bytes */
#define REFUSAL_FRAMES_MAX 16		/* notifications before a request */
#define REFUSAL_WAIT_MS 10000		/* for the client's first request */
#define REFUSAL_MESSAGE_MAX 512

static bool
refusal_write(int fd, const char *text)
{
	size_t len = strlen(text), off = 0;
	ssize_t n;

	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		off += (size_t)n;
	}
	return true;
}

/* The error answering id, as one line. */
static void
refusal_send(int out_fd, const struct jsonrpc_id *id, const char *sentence)
{
	char message[REFUSAL_MESSAGE_MAX], *text, *line;
	cJSON *m, *e;

	(void)snprintf(message, sizeof(message), "Sallyport cannot start: %s",
	    sentence);
	if ((m = cJSON_CreateObject()) == NULL)
		return;
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddItemToObject(m, "id", jsonrpc_id_to_json(id));
	if ((e = cJSON_AddObjectToObject(m, "error")) != NULL) {
		cJSON_AddNumberToObject(e, "code", START_REFUSAL_CODE);
		cJSON_AddStringToObject(e, "message", message);
	}
	text = cJSON_PrintUnformatted(m);
	cJSON_Delete(m);
	if (text == NULL)
		return;
	if (asprintf(&line, "%s\n", text) >= 0) {
		if (!refusal_write(out_fd, line))
			log_info("the client left before it was told why");
		free(line);
	}
	cJSON_free(text);
}

/*
 * One frame: true when it was answered (a request, or a frame no request
 * can be read from, answered with id null), false for a notification.
 */
static bool
refusal_frame(const struct frame *f, int out_fd, const char *sentence)
{
	struct jsonrpc_id none = { 0 };
	struct jsonrpc_message msg;
	struct json_doc doc;
	struct json_error err;
	bool answered;

	if (f->status != FRAME_OK || !json_parse_frame(f->bytes, f->len,
	    JSON_DEPTH_DEFAULT, &doc, &err)) {
		refusal_send(out_fd, &none, sentence);
		return true;
	}
	answered = jsonrpc_classify(&doc, &msg) != JSONRPC_NOTIFICATION &&
	    msg.kind != JSONRPC_RESPONSE;
	if (answered)
		refusal_send(out_fd, &msg.id, sentence);
	jsonrpc_message_free(&msg);
	json_doc_free(&doc);
	return answered;
}

/* Reads until a frame is answered, input ends or the budget is spent. */
static void
refusal_read(struct frame_reader *r, int in_fd, int out_fd,
    const char *sentence)
{
	struct pollfd pfd = { .fd = in_fd, .events = POLLIN };
	uint64_t t0 = clock_monotonic_ms();
	struct frame f;
	char buf[4096];
	size_t frames = 0;
	ssize_t n;
	long left;

	for (;;) {
		if ((left = REFUSAL_WAIT_MS -
		    (long)(clock_monotonic_ms() - t0)) <= 0 ||
		    poll(&pfd, 1, (int)left) <= 0)
			return;
		if ((n = read(in_fd, buf, sizeof(buf))) == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (frame_reader_finish(r, &f))
				(void)refusal_frame(&f, out_fd, sentence);
			return;
		}
		frame_reader_feed(r, buf, (size_t)n);
		while (frame_reader_next(r, &f)) {
			if (refusal_frame(&f, out_fd, sentence) ||
			    ++frames >= REFUSAL_FRAMES_MAX)
				return;
		}
	}
}

void
start_refusal_answer(int in_fd, int out_fd, const char *sentence)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct frame_reader r;

	if (isatty(in_fd) || !frame_reader_init(&r, REFUSAL_FRAME_MAX))
		return;
	/* a client gone meanwhile is an EPIPE here, not a signal */
	(void)sigaction(SIGPIPE, &ign, &old);
	refusal_read(&r, in_fd, out_fd, sentence);
	(void)sigaction(SIGPIPE, &old, NULL);
	frame_reader_free(&r);
}

/*
 * The HTTP target of `sp demo`: a child process serving on 127.0.0.1 a
 * free port.  GET /items/N with "Authorization: Bearer <token>" answers
 * an item whose note is text a hostile API might send; anything else is
 * 401 or 404.  Every request it sees is counted, so the demo can say
 * what reached it.
 */
#ifndef SP_CLI_DEMO_TARGET_H
#define SP_CLI_DEMO_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Owned by the demo; zero it and set hits_fd to -1 before start. */
struct demo_target {
	pid_t pid;			/* the child, or 0 */
	uint16_t port;
	int hits_fd;			/* one byte per request seen, or -1 */
	int hits_seen;			/* bytes read from hits_fd so far */
};

/* Forks the target with this token; false after logging.  Whatever was
 * started is released by demo_target_stop() either way. */
bool demo_target_start(struct demo_target *t, const char *token);

/* Requests the target has seen so far. */
int demo_target_count(struct demo_target *t);

/* Ends the child and closes the counter; safe to call twice. */
void demo_target_stop(struct demo_target *t);

#endif

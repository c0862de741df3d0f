/*
 * A session that cannot start still answers its client (docs/design.md
 * section 10): the first request read from the client gets one JSON-RPC
 * error whose message is a sentence naming the problem (never a path or a
 * secret), so a client behind sp connect or socket activation sees why
 * rather than a reset connection.  Written by the broker before any child
 * exists: no frontend is there to own fd 1 yet.
 */
#ifndef SP_BROKER_START_REFUSAL_H
#define SP_BROKER_START_REFUSAL_H

/* The code of that error: JSON-RPC's range for server errors. */
#define START_REFUSAL_CODE (-32000)

/*
 * Reads the client's stream on in_fd (bounded: a few frames, a few
 * seconds) until a request arrives and answers it on out_fd with
 * "Sallyport cannot start: " sentence.  Notifications before it are
 * read and dropped; a terminal on in_fd or the end of input gets nothing.
 */
void start_refusal_answer(int in_fd, int out_fd, const char *sentence);

#endif

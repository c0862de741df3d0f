/*
 * Internals shared by the SSH engine's files (ssh.c: engine, targets and
 * calls; ssh_conn.c: connection state machine and event arming;
 * ssh_channel.c: per-call channel state machine; ssh_hostkey.c: host key
 * verification).  Nothing outside executor/ssh*.c includes this.
 */
#ifndef SP_EXECUTOR_SSH_INT_H
#define SP_EXECUTOR_SSH_INT_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <libssh2.h>
#include <stdarg.h>

#include "common/secret.h"
#include "executor/ssh.h"

/*
 * The engine's own copy of a target.  The key and passphrase live in
 * secret memory, as in the credential store: out of core dumps and swap,
 * zeroed when freed.
 */
struct ssh_target_conf {
	char *address;
	char *host_name;		/* lower case; NULL if the address */
	uint16_t port;
	char *user;
	char *known_hosts;		/* may be NULL */
	size_t known_hosts_len;
	bool has_host_key_sha256;
	uint8_t host_key_sha256[HASH_SHA256_LEN];
	struct secret private_key;	/* private_key_len bytes + NUL */
	size_t private_key_len;
	char *public_key;		/* may be NULL */
	size_t public_key_len;
	struct secret passphrase;	/* NUL-terminated; ptr NULL if none */
	struct ssh_conn *conn;		/* the live connection, or NULL */
};

enum conn_state {
	CONN_CONNECTING,		/* TCP connect in progress */
	CONN_HANDSHAKE,			/* key exchange */
	CONN_AUTH,			/* host key verified; public key auth */
	CONN_READY,
	CONN_FAILED,			/* set up failed: calls end failed/denied */
	CONN_DEAD,			/* was ready, then lost */
};

enum call_state {
	CALL_WAITING,			/* for the connection or a channel slot */
	CALL_OPENING,			/* libssh2 allows one open at a time */
	CALL_EXEC,
	CALL_STDIN,
	CALL_SEND_EOF,
	CALL_READING,
	CALL_CLOSING,
	CALL_WAIT_CLOSED,
	CALL_FREEING,
	CALL_GONE,			/* channel freed; struct may be released */
};

struct ssh_buffer {
	char *data;			/* heap, grown up to limit */
	size_t len;
	size_t cap;
	size_t limit;
	uint64_t total;
};

/*
 * One call.  Owned by its connection's list from start until its channel
 * is freed; the user's handle is valid until done ran (or cancel).  After
 * done ran or cancel, "detached" is set and the channel is only closed.
 */
struct ssh_call {
	TAILQ_ENTRY(ssh_call) entry;
	struct ssh_engine *engine;
	struct ssh_conn *conn;
	int target_id;
	enum call_state state;
	LIBSSH2_CHANNEL *channel;
	char *command;
	char *stdin_data;
	size_t stdin_len;
	size_t stdin_off;
	struct ssh_buffer out;
	struct ssh_buffer err;
	bool exited;
	int exit_status;
	char signal[32];		/* "" unless killed by a signal */
	bool sent;			/* exec was attempted: it may have run */
	bool retried;			/* already moved to a fresh connection */
	bool detached;			/* done ran or cancelled */
	bool resuming_send;		/* this step repeats a partial send */
	uint64_t started_ms;
	uint64_t opened_ms;
	struct event *timer;
	ssh_done_fn done;
	void *arg;
};

TAILQ_HEAD(ssh_call_list, ssh_call);

struct ssh_conn {
	struct ssh_engine *engine;
	struct ssh_target_conf *target;
	enum conn_state state;
	int fd;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	LIBSSH2_SESSION *session;
	struct event *io;		/* re-armed after each pass */
	struct event *kick;		/* run a pass soon, from the loop */
	struct event *keepalive;
	int want;			/* LIBSSH2_SESSION_BLOCK_* seen this pass */
	/*
	 * libssh2 keeps one partly written packet per session and refuses any
	 * other send until the same call is repeated, so the call that left
	 * one is stepped alone until its send completes.
	 */
	struct ssh_call *sender;
	enum ssh_outcome fail_outcome;	/* for CONN_FAILED */
	char fail_message[256];
	struct ssh_call_list calls;
};

struct ssh_engine {
	struct event_base *base;
	struct ssh_engine_config config;
	struct ssh_target_conf **targets;
	size_t target_count;
};

/* Runs done once with outcome and a message, then marks call detached. */
void ssh_call_finish(struct ssh_call *call, enum ssh_outcome outcome,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Frees an unlinked call and what it owns (stdin zeroed first). */
void ssh_call_release(struct ssh_call *call);
/*
 * Unlinks conn from its target and frees it, then ends each of its calls:
 * with a result, or (nothing sent, not yet retried) on a fresh connection.
 */
void ssh_engine_conn_ended(struct ssh_conn *conn);

/* ssh_conn.c */
/* Starts connecting; the target holds the result in target->conn. */
struct ssh_conn *ssh_conn_new(struct ssh_engine *engine,
    struct ssh_target_conf *target);
/* Frees session, socket and events; its calls must be gone already. */
void ssh_conn_free(struct ssh_conn *conn);
/* Schedules a pass from the loop; never steps anything itself. */
void ssh_conn_kick(struct ssh_conn *conn);
/* After EAGAIN: notes the direction; call is NULL during set-up. */
void ssh_conn_note_eagain(struct ssh_conn *conn, struct ssh_call *call);

/*
 * ssh_channel.c: one step of a call's channel.  STEP_BLOCKED: waiting for
 * the socket (direction noted on the connection).  STEP_PROGRESS: moved on,
 * step again.  STEP_CONN_LOST: the session itself failed.
 */
enum step_result { STEP_BLOCKED, STEP_PROGRESS, STEP_CONN_LOST };
enum step_result ssh_channel_step(struct ssh_call *call);
bool ssh_channel_active(const struct ssh_call *call);

/*
 * ssh_hostkey.c: before the key exchange, puts first the host key
 * algorithms of the key types known_hosts holds for target (as OpenSSH
 * orders its offer), so a server with several host keys shows one that can
 * be checked.  Only the order changes; verification still decides.
 */
void ssh_hostkey_prefer(LIBSSH2_SESSION *session,
    const struct ssh_target_conf *target);
/* True if the session's host key verifies against target. */
bool ssh_hostkey_verify(LIBSSH2_SESSION *session,
    const struct ssh_target_conf *target, char *message, size_t size);

#endif

/*
 * The executor's SSH engine: runs one already-quoted command line per call
 * on a remote host over libssh2, without blocking, on the caller's libevent
 * loop.  One connection per target, reused; one channel per call; several
 * calls on one connection at once.
 *
 * The host key is verified before anything is sent (known_hosts bytes
 * and/or a pinned SHA-256 of the key blob); there is no way to accept an
 * unknown key.  Everything the engine needs (keys, known_hosts) is handed
 * over as bytes, so the engine opens no file and may run confined.
 */
#ifndef SP_EXECUTOR_SSH_H
#define SP_EXECUTOR_SSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"

struct event_base;
struct ssh_engine;
struct ssh_call;

/*
 * The longest command line the engine sends, in bytes: libssh2 1.10 sends
 * no packet over 35000 bytes, and refuses a longer exec request only after
 * the call was counted as sent.
 */
#define SSH_COMMAND_MAX 32768

/* "SHA256:" + 43 unpadded base64 characters + NUL, as OpenSSH prints it. */
#define SSH_FINGERPRINT_SIZE 51

/*
 * One remote account.  ssh_engine_add_target() copies every field; the
 * caller keeps ownership of its buffers and may free them afterwards.
 */
struct ssh_target {
	const char *address;		/* numeric IPv4/IPv6, already resolved */
	const char *host_name;		/* as the policy names the host, for
					   known_hosts; NULL: the address only */
	uint16_t port;
	const char *user;
	const char *known_hosts;	/* OpenSSH known_hosts bytes, or NULL */
	size_t known_hosts_len;
	bool has_host_key_sha256;	/* both checks apply when both are set */
	uint8_t host_key_sha256[HASH_SHA256_LEN];	/* of the key blob */
	const char *private_key;	/* PEM or OpenSSH key file bytes */
	size_t private_key_len;
	const char *public_key;		/* .pub bytes, or NULL to derive */
	size_t public_key_len;
	const char *passphrase;		/* NUL-terminated, or NULL */
};

struct ssh_engine_config {
	unsigned keepalive_seconds;	/* 0: no keepalive */
	unsigned max_channels;		/* per connection; more calls queue */
};

/* Borrowed by ssh_call_start() for the duration of that call only. */
struct ssh_request {
	const char *command;		/* run as is by the remote shell;
					   at most SSH_COMMAND_MAX bytes */
	const char *stdin_data;		/* secrets go here, never in command */
	size_t stdin_len;
	size_t output_limit;		/* bytes kept of stdout, and of stderr */
	uint32_t timeout_ms;		/* the whole call, connecting included */
};

/*
 * SSH_OK: the command ran to its end and its exit status or signal is
 * known (a non-zero status is still SSH_OK; the caller judges it).
 * SSH_FAILED: known not to have run.  SSH_UNKNOWN: sent, end not seen.
 * SSH_DENIED: the host key did not verify; nothing was sent.
 */
enum ssh_outcome { SSH_OK, SSH_FAILED, SSH_UNKNOWN, SSH_DENIED };

/* The first len bytes of a stream, and how many bytes it had in all. */
struct ssh_stream {
	const char *data;
	size_t len;
	uint64_t total;
};

/* Valid only while the completion callback runs; the engine owns it. */
struct ssh_result {
	enum ssh_outcome outcome;
	bool exited;
	int exit_status;		/* when exited */
	const char *signal;		/* "TERM" when killed by a signal, else NULL */
	struct ssh_stream out;
	struct ssh_stream err;
	uint64_t wait_ms;		/* from start until the channel was open */
	uint64_t total_ms;
	const char *message;		/* one line for a person; never a secret */
};

typedef void (*ssh_done_fn)(const struct ssh_result *result, void *arg);

/*
 * Creates an engine on base (borrowed; must outlive the engine).  Calls
 * libssh2_init, so do this before confinement.  NULL on failure.
 */
struct ssh_engine *ssh_engine_new(struct event_base *base,
    const struct ssh_engine_config *config);

/*
 * Closes every connection; calls still in flight are dropped without their
 * callback (the caller reports them as unknown).  Never from a callback.
 */
void ssh_engine_free(struct ssh_engine *engine);

/* Copies target into the engine; returns its id (>= 0), or -1. */
int ssh_engine_add_target(struct ssh_engine *engine,
    const struct ssh_target *target);

/*
 * Starts one call; done(result, arg) runs exactly once, later, from the
 * event loop.  The returned handle is owned by the engine and valid until
 * done runs or ssh_call_cancel() returns.  NULL (and no callback) on a bad
 * target id, a command over SSH_COMMAND_MAX or allocation failure.  May be
 * called from a callback.
 */
struct ssh_call *ssh_call_start(struct ssh_engine *engine, int target_id,
    const struct ssh_request *request, ssh_done_fn done, void *arg);

/* Abandons a call: its channel is closed, done never runs. */
void ssh_call_cancel(struct ssh_call *call);

/* Formats a SHA-256 digest the way OpenSSH prints fingerprints. */
void ssh_fingerprint_format(const uint8_t digest[HASH_SHA256_LEN],
    char out[SSH_FINGERPRINT_SIZE]);

#endif

/*
 * Test-only misbehaviour (tests/sp-test, built with SP_TEST_HOOKS): a
 * process told so by SP_TEST_HOOK="ROLE:ACTION" misbehaves once, after its
 * sandbox is on, so a test can see the sandbox or the fd 1 rule hold.
 * ROLE is broker, frontend or executor; ACTION is open (/etc/passwd,
 * read-only), open-write (a file in /tmp), socket, connect, execve or
 * noise (writes to fd 1), stderr-forge (writes a forged broker anchor, a
 * line of control bytes and an over-long line to fd 2, see
 * broker/child_stderr.h) or stderr-partial (writes a line without its
 * newline to fd 2 and exits 0); for the executor also slow-hello (sleeps 1.5 s
 * before it answers the frontend's hello, as a slow library load would)
 * bad-hello (sleeps 0.5 s, then answers the frontend with a wrong
 * fingerprint, see test_hook_hello_to_frontend()) and mute-hello (sleeps
 * 12 s, past the frontend's deadline for a hello); stray records for the
 * channel checks are test_hook_stray().  In every other build each hook
 * is a macro for nothing (the end of this file): the program holds no
 * hook's code or words (checked by
 * tests/integration/product_programs_hold_no_test_hooks.py).
 */
#ifndef SP_CHILD_TEST_HOOK_H
#define SP_CHILD_TEST_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef SP_TEST_HOOKS

struct channel;
struct child_context;
struct record_hello;

/*
 * True when SP_TEST_HOOK is exactly "ROLE:ACTION" (test build only; else
 * always false).  The executor's "hold" leaves actions unanswered, as a
 * slow target would; the broker's "no-ack" leaves intents unacked, as a
 * hung broker would, and its "late-ack" acks execution records late, as
 * a slow disk would ("late-intent-ack": intents).  The executor's
 * "operator-leak" also sends the frontend the challenge of a tool with
 * confirm.via "operator", as a buggy executor might, so a test shows the
 * frontend's relay of even the real challenge is refused.
 */
bool test_hook_is(const char *role, const char *action);

/* role: "broker", "frontend" or "executor". */
void test_hook_run(const char *role);

/*
 * SP_TEST_HOOK="executor:bad-hello": gives the executor's hello h a
 * wrong catalog fingerprint, for the frontend only (the broker got the
 * right one), so a test sees that the frontend alone holds its records
 * back.  Otherwise leaves h alone.
 */
void test_hook_hello_to_frontend(struct record_hello *h);

/*
 * SP_TEST_HOOK="ROLE:stray-PEER", "ROLE:version-PEER" or
 * "ROLE:early-PEER", ROLE the calling process ("broker", "frontend",
 * "executor") and PEER one of its channels (ch): sends PEER, past ROLE's
 * own peer table (common/channel.h), one record PEER must refuse, a
 * header and 8 zero bytes: stray- (greeted true, once ROLE's hello went)
 * a type PEER never takes from ROLE once greeted; version- (greeted
 * true) version RECORD_VERSION + 1; early- (greeted false, before ROLE's
 * hello) a type PEER takes only after the hello; approval- (greeted true)
 * OPERATOR_ANSWER, which the executor takes from the broker alone;
 * badbody- (greeted true) a type PEER takes from ROLE once greeted, with
 * a body that does not decode (call id 77, then one byte); badhello-
 * (greeted false) a hello with that body.  Otherwise does nothing.
 */
void test_hook_stray(struct channel *ch, const char *role, bool greeted);

/*
 * SP_TEST_HOOK="frontend:forge": a compromised frontend.  Right after
 * the hello it sends the executor action records that each break one of
 * its checks (tool index, fingerprint, values, scope, encoding), then
 * one good record, and logs the outcome the executor answered to each.
 * Tool 0 must have a string param of maxLength < 200; tool 1, when
 * present, a scope the profile lacks.
 */
void test_hook_forge(const struct child_context *ctx);

/*
 * SP_TEST_HOOK="all:heap-report": at its clean end, once it has freed
 * what it owns, each of the three processes logs one line
 * "heap-report ROLE N", N the bytes its heap still has in use (glibc
 * mallinfo2(): uordblks + hblkhd), so a test can compare a long session
 * with a short one (tests/integration/long_session_heap_stays_flat.py).  The role "all"
 * names all three, since SP_TEST_HOOK holds one hook and the three
 * processes share it.  Once malloc has been used, mallinfo2() only reads
 * the allocator's counters under its arena locks: no system call (seen
 * with strace; a contended lock would be a futex), so the children call
 * it under their seccomp filter.  Chunks in glibc's per-thread cache
 * count as in use: a test turns the cache off to compare.
 * role: "broker", "frontend" or "executor".  Otherwise does nothing.
 */
void test_hook_heap_report(const char *role);

/*
 * SP_TEST_HOOK="frontend:confirm-MODE": a compromised frontend, for the
 * executor's checks of a confirmation (executor/confirm.h).  Each
 * confirmation answer the frontend is about to send (rec, len bytes) is
 * changed as MODE says and sent by this function (true), or sent as it
 * is by the caller (false, any other hook or build):
 *   mac      one bit of the challenge's MAC flipped;
 *   replay   every answer after the first carries the first answer's
 *            challenge;
 *   stale    the first answer is kept back, never sent; every later one
 *            carries its challenge (issued for the first call's values,
 *            and expired once the first call's timeout passed).
 */
bool test_hook_confirm_relay(const struct child_context *ctx,
    const uint8_t *rec, size_t len);

/*
 * SP_TEST_HOOK="broker:stop-before-append-NAME": each time the broker is
 * about to append to state_dir's file NAME (state/state_dir.h), having
 * read it and decided under its lock, it stops itself (SIGSTOP) until a
 * test sends SIGCONT, so the test sees what a second broker decides
 * meanwhile.  Otherwise does nothing.
 */
void test_hook_state_append(const char *name);

/*
 * The frontend's interval between progress notifications, in ms: dflt,
 * or in the test build SP_TEST_PROGRESS_MS when it holds a number of
 * 10..600000, so a test sees progress without waiting 15 s.
 */
unsigned test_hook_progress_ms(unsigned dflt);

#else

/*
 * The product build: every hook compiles to nothing.  Its arguments are
 * cast to void, so a variable kept only for a hook is still used, and a
 * call site's words (string literals) are never stored; a hook's answer
 * is what the product does without it.
 */
#define test_hook_is(role, action)	((void)(role), (void)(action), false)
#define test_hook_run(role)		((void)(role))
#define test_hook_hello_to_frontend(h)	((void)(h))
#define test_hook_stray(ch, role, greeted) \
	((void)(ch), (void)(role), (void)(greeted))
#define test_hook_forge(ctx)		((void)(ctx))
#define test_hook_heap_report(role)	((void)(role))
#define test_hook_confirm_relay(ctx, rec, len) \
	((void)(ctx), (void)(rec), (void)(len), false)
#define test_hook_state_append(name)	((void)(name))
#define test_hook_progress_ms(dflt)	(dflt)

#endif /* SP_TEST_HOOKS */

#endif

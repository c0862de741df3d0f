/*
 * Test-only misbehaviour (tests/sp-test, built with SP_TEST_HOOKS): a
 * process told so by SP_TEST_HOOK="ROLE:ACTION" misbehaves once, after its
 * sandbox is on, so a test can see the sandbox or the fd 1 rule hold.
 * ROLE is broker, frontend or executor; ACTION is open (/etc/passwd,
 * read-only), open-write (a file in /tmp), socket, connect, execve or
 * noise (writes to fd 1).  In every other build test_hook_run() does
 * nothing and reads no environment.
 */
#ifndef SP_BROKER_TEST_HOOK_H
#define SP_BROKER_TEST_HOOK_H

/* role: "broker", "frontend" or "executor". */
void test_hook_run(const char *role);

#endif

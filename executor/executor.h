/*
 * The executor role (docs/design.md section 1): `sp .executor PROFILE`,
 * started by the broker with the fds of child/child.h.  Trusts no
 * record: each action is checked again against its own copy of the policy
 * before anything is done with it.
 */
#ifndef SP_EXECUTOR_EXECUTOR_H
#define SP_EXECUTOR_EXECUTOR_H

/* Returns 0 when the frontend closed the channel, 70/71 on failure. */
int executor_main(int argc, char **argv);

#endif

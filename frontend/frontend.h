/*
 * The frontend role (docs/design.md section 1): `sp .frontend PROFILE`,
 * started by the broker with the fds of child/child.h.  Reads MCP
 * frames on fd 0, writes the protocol on fd 1, and holds nothing else.
 */
#ifndef SP_FRONTEND_FRONTEND_H
#define SP_FRONTEND_FRONTEND_H

/* Returns the session's exit status: 0, 65, or 70/71 on failure. */
int frontend_main(int argc, char **argv);

#endif

/*
 * Exit statuses of every sp process (docs/design.md section 3, sysexits):
 * the children end with them too, and the broker reads them, so they
 * live where all three processes look.
 */
#ifndef SP_COMMON_EXIT_H
#define SP_COMMON_EXIT_H

#define SP_EXIT_OK 0
#define SP_EXIT_AUDIT_BROKEN 1	/* sp audit verify: the chain is broken */
#define SP_EXIT_USAGE 64
#define SP_EXIT_MALFORMED 65
#define SP_EXIT_NOINPUT 66	/* a file to read cannot be read */
#define SP_EXIT_UNAVAILABLE 69	/* a socket or the shared state cannot be reached */
#define SP_EXIT_INTERNAL 70
#define SP_EXIT_SANDBOX 71
#define SP_EXIT_IOERR 74
#define SP_EXIT_BUDGET 75	/* sp mcp: calls went on past calls_per_session */
#define SP_EXIT_CONFIG 78

#endif

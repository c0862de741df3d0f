/*
 * The `mcp` mode of tests/bench/exec_bench_peer: a C MCP client that
 * times tools/call through a real `sp mcp`, so the sp side of the bench
 * pays for no interpreter.
 */
#ifndef SP_TESTS_BENCH_EXEC_BENCH_MCP_H
#define SP_TESTS_BENCH_EXEC_BENCH_MCP_H

#include <stdint.h>

/* Microseconds on the monotonic clock. */
uint64_t mono_us(void);

/*
 * argv: N K TOOL ARGS_JSON -- SP_ARGV...  Spawns SP_ARGV with pipes on
 * fds 0 and 1 (fd 2 on /dev/null), initializes, then sends N tools/call
 * of TOOL with the arguments object ARGS_JSON, K in flight.  Prints one
 * latency in µs per answer (write of the request to its answer line),
 * then "wall <µs>", then "notok <count>" (answers whose
 * structuredContent.outcome is not "ok").  Returns 0, or 1 after a
 * message on stderr.
 */
int mcp_bench_main(int argc, char **argv);

#endif

/*
 * The monotonic and the wall clock (common/clock.h).
 */
#include "config.h"

#include <time.h>

#include "common/clock.h"

uint64_t
clock_monotonic_us(void)
{
	struct timespec ts;

	/* Cannot fail with a valid clock id and address. */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t
clock_monotonic_ms(void)
{
	return clock_monotonic_us() / 1000u;
}

uint64_t
clock_wall_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

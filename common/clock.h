/*
 * The process's clocks, the one place that reads them: the monotonic
 * clock for durations and deadlines (never the wall clock, which an
 * operator or NTP may step back), and the wall clock for what a person
 * or another session reads as a date (audit "ts", journal entries).
 * Ends in clock_gettime(2), which every child's filter allows.
 */
#ifndef SP_COMMON_CLOCK_H
#define SP_COMMON_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in microseconds. */
uint64_t clock_monotonic_us(void);

/* CLOCK_MONOTONIC in milliseconds (the microseconds, cut). */
uint64_t clock_monotonic_ms(void);

/* CLOCK_REALTIME in milliseconds since the epoch (the nanoseconds, cut). */
uint64_t clock_wall_ms(void);

#endif

/* Clocks: wall time for people, monotonic time for latencies. */

#include <time.h>

#include "core.h"

static int64_t
clock_ns(clockid_t id)
{
	struct timespec	ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds since the epoch. */
int64_t
clock_wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Nanoseconds on a clock that never goes back. */
int64_t
clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

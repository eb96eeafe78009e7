/*
 * latency.c - real time spent to imitate a slow driver call.
 */
#include <time.h>

#include "sim.h"

uint64_t sim_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Short waits spin: nanosleep overshoots by tens of microseconds, which
 * would swamp a 10 us cost. Long ones sleep, then spin off the remainder. */
void sim_spend_us(uint64_t us)
{
	uint64_t end, left;

	if (us == 0)
		return;
	end = sim_monotonic_ns() + us * 1000u;
	if (us > 200) {
		left = (us - 100) * 1000u;
		struct timespec ts = { (time_t)(left / 1000000000u),
				       (long)(left % 1000000000u) };
		nanosleep(&ts, NULL);
	}
	while (sim_monotonic_ns() < end)
		;
}

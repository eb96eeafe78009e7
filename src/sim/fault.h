/*
 * fault.h - deciding which device allocations fail on purpose.
 *
 * Two independent triggers: a countdown ("fail the nth call from now") and
 * a rate drawn from a seeded splitmix64 stream, so a failure pattern is the
 * same on every run with the same seed. The owner locks.
 */
#ifndef NPUSIM_FAULT_H
#define NPUSIM_FAULT_H

#include <stdbool.h>
#include <stdint.h>

struct sim_fault {
	uint64_t countdown; /* 0: off; 1: the next call fails */
	double rate;        /* 0: off */
	uint64_t rng;       /* splitmix64 state */
};

void sim_fault_nth(struct sim_fault *f, uint64_t nth);
void sim_fault_rate(struct sim_fault *f, double rate, uint64_t seed);
/* Called once per attempt; true if this attempt must fail. */
bool sim_fault_fires(struct sim_fault *f);

#endif /* NPUSIM_FAULT_H */

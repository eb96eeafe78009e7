/*
 * fault.c - countdown and seeded-rate failure injection.
 */
#include "fault.h"

void sim_fault_nth(struct sim_fault *f, uint64_t nth)
{
	f->countdown = nth;
}

void sim_fault_rate(struct sim_fault *f, double rate, uint64_t seed)
{
	f->rate = rate;
	f->rng = seed;
}

/* splitmix64 (Steele, Lea, Flood 2014): tiny, and every seed is good. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

bool sim_fault_fires(struct sim_fault *f)
{
	bool fire = false;

	if (f->countdown > 0 && --f->countdown == 0)
		fire = true;
	/* Draw even when the countdown fired, so the rate's pattern does not
	 * depend on whether a countdown was also set. */
	if (f->rate > 0.0) {
		double u = (double)(splitmix64(&f->rng) >> 11) * 0x1.0p-53;

		if (u < f->rate)
			fire = true;
	}
	return fire;
}

/*
 * trace_gen_impl.h - what the trace generators share: a PRNG that gives
 * the same numbers everywhere (splitmix64, integer-only draws) and the
 * generator entry points.
 */
#ifndef NPUMEMFS_TRACE_GEN_IMPL_H
#define NPUMEMFS_TRACE_GEN_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "trace_gen.h"

struct gen_rng {
	uint64_t state;
};

static inline uint64_t rng_next(struct gen_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (multiply-shift: no modulo bias worth noting). */
static inline uint64_t rng_below(struct gen_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* Uniform in [lo, hi]. */
static inline uint64_t rng_range(struct gen_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

int gen_training(const struct wl_gen_options *opt, FILE *out);
int gen_churn(const struct wl_gen_options *opt, FILE *out);
int gen_random(const struct wl_gen_options *opt, FILE *out);
int gen_decode_graphs(const struct wl_gen_options *opt, FILE *out);
int gen_pinned_loader(const struct wl_gen_options *opt, FILE *out);

#endif /* NPUMEMFS_TRACE_GEN_IMPL_H */

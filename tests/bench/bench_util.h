/*
 * bench_util.h - what every benchmark program shares: a clock, a seeded
 * PRNG, a compiler barrier, a simulated device and an allocator set up the
 * same way, and the "met"/"not met" wording.
 *
 * Figures are information, never a verdict: a benchmark exits 0 whatever
 * it measures and fails only when it cannot run at all.
 */
#ifndef NPUMEMFS_BENCH_UTIL_H
#define NPUMEMFS_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc/caching/caching_allocator.h"

#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

uint64_t bench_now_ns(void);

/* Keep `p` alive in the compiler's eyes, so malloc/free pairs are not elided. */
static inline void bench_escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* splitmix64: tiny, seedable, the same sequence on every machine. */
struct bench_rng {
	uint64_t s;
};

static inline uint64_t bench_rand(struct bench_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline uint64_t bench_rand_range(struct bench_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + bench_rand(r) % (hi - lo + 1);
}

/* Median of n values (sorts them in place). */
double bench_median(double *v, size_t n);

/*
 * Start the simulator with one device of `capacity` bytes, 2 MiB pages and
 * no malloc/free latency, so only the allocator's own CPU cost is measured.
 */
int bench_device_up(uint64_t capacity, char *err, size_t errlen);
void bench_device_down(void);

/*
 * An npu-flavor allocator over device 0 with upstream defaults, then
 * `conf` (PYTORCH_NPU_ALLOC_CONF syntax, NULL or "" for none) applied.
 */
int bench_npa_new(const char *conf, struct npa **out, char *err, size_t errlen);
/* The same in another flavor. */
int bench_npa_new_flavor(const struct npa_flavor *flavor, const char *conf,
			 struct npa **out, char *err, size_t errlen);

static inline const char *bench_verdict(bool met)
{
	return met ? "met" : "not met";
}

/* "12.3 GiB" style, into buf. */
const char *bench_fmt_bytes(uint64_t bytes, char *buf, size_t buflen);

#endif /* NPUMEMFS_BENCH_UTIL_H */

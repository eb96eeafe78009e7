/*
 * alloc_fixture.h - a fresh simulated NPU and allocator for each test.
 */
#ifndef ALLOC_FIXTURE_H
#define ALLOC_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "alloc/caching/caching_allocator.h"
#include "alloc/device/mempool.h"
#include <npumemfs/npusim.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

/* The machine's pinned host memory in every test. */
#define FX_HOST_CAPACITY ((uint64_t)1 << 30)

/* The flavor a test runs with, from cmocka's initial state. */
#define FLAVOR(state) ((const struct npa_flavor *)*(state))
/* One test function, run once per flavor. */
#define BOTH_FLAVORS(fn)                                                       \
	{ #fn " (npu)", fn, NULL, NULL, (void *)&npa_flavor_npu },             \
	{ #fn " (cuda)", fn, NULL, NULL, (void *)&npa_flavor_cuda }

/*
 * The whole suite runs a second time with NPA_TEST_EXPANDABLE=1, which turns
 * expandable_segments on before each test's own settings (upstream runs its
 * allocator tests again the same way). Tests whose numbers differ assert
 * the expandable ones when this is true.
 */
bool fx_expandable(void);

/* Start one device of `capacity` bytes (2 MiB pages) and an allocator on it. */
struct npa *fx_start(const struct npa_flavor *flavor, uint64_t capacity);
/* Same, with settings changed by `tweak` after the flavor's defaults. */
struct npa *fx_start_conf(const struct npa_flavor *flavor, uint64_t capacity,
			  void (*tweak)(struct npa_conf *conf));
/*
 * Same as fx_start_conf, but never in expandable mode: for tests whose
 * subject exists only for device-malloc segments (the oversize and GC
 * release paths skip expandable blocks; torch_npu refuses max_split_size_mb
 * and garbage_collection_threshold with expandable_segments) or that
 * replay upstream's worked example of them step by step.
 */
struct npa *fx_start_device_segments(const struct npa_flavor *flavor, uint64_t capacity,
				     void (*tweak)(struct npa_conf *conf));
/* Check invariants, destroy (asserting no leaks) and shut the device down. */
void fx_stop(struct npa *a);

struct npa_stats fx_stats(struct npa *a);
void *fx_malloc(struct npa *a, size_t size, aclrtStream stream);
void fx_free(struct npa *a, void *ptr);
void fx_check(struct npa *a);
/* The pool id of device 0's segment holding `ptr` ((99, 99): none does). */
struct npa_pool_id fx_pool_of(struct npa *a, const void *ptr);
/* Device counters of device 0. */
struct npusim_counters fx_device(void);

/* A seeded pseudo-random sequence (splitmix64): traces that repeat exactly. */
struct fx_rng {
	uint64_t s;
};
uint64_t fx_next(struct fx_rng *r);
/* Uniform enough below `n` (n > 0). */
size_t fx_below(struct fx_rng *r, size_t n);

/*
 * Free a random one of live[0..*nlive) and take it out; one time in three
 * it is first recorded on a random one of `streams`, which is then left
 * busy half the time, so its free waits for an event.
 */
void fx_free_random(struct npa *a, struct fx_rng *r, void **live, size_t *nlive,
		    const aclrtStream *streams, size_t nstreams);

#define ALL NPA_STAT_ALL
#define SMALL NPA_STAT_SMALL_POOL
#define LARGE NPA_STAT_LARGE_POOL

#endif /* ALLOC_FIXTURE_H */

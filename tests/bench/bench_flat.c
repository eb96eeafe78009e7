/*
 * bench_flat - does a cached hit get slower as the allocator holds more?
 *
 * For K = 1k, 10k and 100k: allocate 2K blocks of mixed sizes (mostly
 * small-pool sizes, 1 in 50 a large one), free every second one so that
 * K stay live with about K free cached blocks between them (holes that
 * cannot merge), then time alloc+free pairs that hit the cache: 4 KiB from
 * the small pool and 2 MiB from the large pool. Both the pointer map (K
 * live entries) and the free-block trees (about K entries) are at their
 * full size while the pairs run. Target: 100k costs at most 1.2x of 1k.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define CAPACITY (64 * GiB)
#define PAIRS 200000
#define ROUNDS 7
#define TARGET_RATIO 1.2

static const size_t hit_sizes[] = { 4096, 2 * MiB };
#define NSIZES (sizeof(hit_sizes) / sizeof(hit_sizes[0]))

static uint64_t mixed_size(struct bench_rng *r)
{
	uint64_t base;

	if (bench_rand(r) % 50 == 0)
		return bench_rand_range(r, 1 * MiB + 1, 4 * MiB);
	base = 512ull << bench_rand_range(r, 0, 8);
	return base + bench_rand(r) % base;
}

/*
 * 2K allocations first, then every second one freed: K live, ~K cached
 * holes. Freeing only after all are made keeps later allocations from
 * filling the holes.
 */
static int fill(struct npa *a, size_t k, void **live, char *err, size_t errlen)
{
	struct bench_rng r = { 7 };
	int rc = 0;

	for (size_t i = 0; i < 2 * k && rc == 0; i++)
		rc = npa_malloc(a, 0, mixed_size(&r), NULL, &live[i], err, errlen);
	for (size_t i = 1; i < 2 * k && rc == 0; i += 2)
		rc = npa_free(a, live[i], err, errlen);
	return rc;
}

static int time_pairs(struct npa *a, size_t size, double *ns_per_pair, char *err,
		      size_t errlen)
{
	double v[ROUNDS];
	void *p;
	int rc = 0;

	for (int round = 0; round < ROUNDS && rc == 0; round++) {
		uint64_t t0 = bench_now_ns();

		for (int i = 0; i < PAIRS && rc == 0; i++) {
			rc = npa_malloc(a, 0, size, NULL, &p, err, errlen);
			if (rc == 0)
				rc = npa_free(a, p, err, errlen);
		}
		v[round] = (double)(bench_now_ns() - t0) / PAIRS;
	}
	*ns_per_pair = bench_median(v, ROUNDS);
	return rc;
}

static int measure(size_t k, double out[NSIZES], char *err, size_t errlen)
{
	void **live = calloc(2 * k, sizeof(*live));
	struct npa *a = NULL;
	int rc = live ? 0 : -ENOMEM;

	if (rc == 0)
		rc = bench_device_up(CAPACITY, err, errlen);
	if (rc < 0) {
		free(live);
		return rc;
	}
	rc = bench_npa_new(NULL, &a, err, errlen);
	if (rc == 0)
		rc = fill(a, k, live, err, errlen);
	for (size_t s = 0; s < NSIZES && rc == 0; s++)
		rc = time_pairs(a, hit_sizes[s], &out[s], err, errlen);
	if (a)
		npa_destroy(a, NULL);
	bench_device_down();
	free(live);
	return rc;
}

int main(void)
{
	static const size_t ks[] = { 1000, 10000, 100000 };
	double ns[3][NSIZES];
	char err[NPA_ERRLEN] = "";

	printf("bench_flat: ns per cached alloc+free pair with K live blocks (and ~K cached holes)\n");
	printf("target: 100k/1k <= %.1f\n\n", TARGET_RATIO);
	printf("%-8s %12s %12s\n", "K", "4 KiB", "2 MiB");
	for (size_t i = 0; i < 3; i++) {
		if (measure(ks[i], ns[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_flat: K=%zu: %s\n", ks[i], err);
			return 1;
		}
		printf("%-8zu %12.1f %12.1f\n", ks[i], ns[i][0], ns[i][1]);
	}
	printf("%-8s", "100k/1k");
	for (size_t s = 0; s < NSIZES; s++)
		printf(" %12.2f", ns[2][s] / ns[0][s]);
	printf("\n%-8s", "target");
	for (size_t s = 0; s < NSIZES; s++)
		printf(" %12s", bench_verdict(ns[2][s] / ns[0][s] <= TARGET_RATIO));
	printf("\n");
	return 0;
}

/*
 * bench_flat - does a cached hit get slower as the allocator holds more?
 *
 * For K = 1k, 10k and 100k: allocate 2K blocks of mixed sizes (mostly
 * small-pool sizes, 1 in 50 a large one), free every second one so that
 * K stay live with about K free cached blocks between them (holes that
 * cannot merge), then time alloc+free pairs that hit the cache: 4 KiB from
 * the small pool and 2 MiB from the large pool. Both the pointer map (K
 * live entries) and the free-block trees (about K entries) are at their
 * full size while the pairs run. The three allocators share one device.
 * Target: 100k costs at most 1.2x of 1k.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define CAPACITY (48 * GiB)
#define PAIRS 100000
#define ROUNDS 11
#define TARGET_RATIO 1.2

static const size_t ks[] = { 1000, 10000, 100000 };
#define NKS (sizeof(ks) / sizeof(ks[0]))
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
	uint64_t t0 = bench_now_ns();
	void *p;
	int rc = 0;

	for (int i = 0; i < PAIRS && rc == 0; i++) {
		rc = npa_malloc(a, 0, size, NULL, &p, err, errlen);
		if (rc == 0)
			rc = npa_free(a, p, err, errlen);
	}
	*ns_per_pair = (double)(bench_now_ns() - t0) / PAIRS;
	return rc;
}

/*
 * Rounds go K = 1k, 10k, 100k in turn, so a burst of noise from the rest
 * of the machine lands on every K alike; the median of the rounds is kept.
 */
static int measure(struct npa *a[NKS], double out[NKS][NSIZES], char *err,
		   size_t errlen)
{
	double v[NKS][NSIZES][ROUNDS];
	int rc = 0;

	for (int round = 0; round < ROUNDS && rc == 0; round++)
		for (size_t k = 0; k < NKS && rc == 0; k++)
			for (size_t s = 0; s < NSIZES && rc == 0; s++)
				rc = time_pairs(a[k], hit_sizes[s], &v[k][s][round], err, errlen);
	for (size_t k = 0; k < NKS && rc == 0; k++)
		for (size_t s = 0; s < NSIZES; s++)
			out[k][s] = bench_median(v[k][s], ROUNDS);
	return rc;
}

/* One allocator per K, all on the same (ample) device. */
static int setup(struct npa *a[NKS], void ***live, char *err, size_t errlen)
{
	int rc = 0;

	for (size_t k = 0; k < NKS && rc == 0; k++) {
		live[k] = calloc(2 * ks[k], sizeof(*live[k]));
		rc = live[k] ? bench_npa_new(NULL, &a[k], err, errlen) : -ENOMEM;
		if (rc == 0)
			rc = fill(a[k], ks[k], live[k], err, errlen);
		else if (rc == -ENOMEM)
			snprintf(err, errlen, "out of host memory");
	}
	return rc;
}

static void print(double ns[NKS][NSIZES])
{
	printf("%-8s %12s %12s\n", "K", "4 KiB", "2 MiB");
	for (size_t k = 0; k < NKS; k++)
		printf("%-8zu %12.1f %12.1f\n", ks[k], ns[k][0], ns[k][1]);
	printf("%-8s", "100k/1k");
	for (size_t s = 0; s < NSIZES; s++)
		printf(" %12.2f", ns[NKS - 1][s] / ns[0][s]);
	printf("\n%-8s", "target");
	for (size_t s = 0; s < NSIZES; s++)
		printf(" %12s", bench_verdict(ns[NKS - 1][s] / ns[0][s] <= TARGET_RATIO));
	printf("\n");
}

int main(void)
{
	struct npa *a[NKS] = { 0 };
	void **live[NKS] = { 0 };
	double ns[NKS][NSIZES];
	char err[NPA_ERRLEN] = "";
	int rc;

	printf("bench_flat: ns per cached alloc+free pair with K live blocks (and ~K cached holes)\n");
	printf("median of %d interleaved rounds of %d pairs; target: 100k/1k <= %.1f\n\n",
	       ROUNDS, PAIRS, TARGET_RATIO);
	rc = bench_device_up(CAPACITY, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "bench_flat: %s\n", err);
		return 1;
	}
	rc = setup(a, live, err, sizeof(err));
	if (rc == 0)
		rc = measure(a, ns, err, sizeof(err));
	if (rc == 0)
		print(ns);
	for (size_t k = 0; k < NKS; k++) {
		if (a[k])
			npa_destroy(a[k], NULL);
		free(live[k]);
	}
	bench_device_down();
	if (rc < 0)
		fprintf(stderr, "bench_flat: %s\n", err);
	return rc < 0;
}

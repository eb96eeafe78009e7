/*
 * bench_host - the pinned host allocator's cached hit against glibc.
 *
 * A cached hit is what a data loader's steady state is: a pinned batch
 * is allocated and freed again and again, and every allocation after the
 * first comes from the free list of its power of two. Each row is one
 * size sequence, run as alloc+free pairs against npa_host_malloc /
 * npa_host_free (no stream uses, so a free caches the block at once) and
 * against glibc malloc/free; neither touches the memory. Passes of the
 * two alternate and the median pass of each is kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/host/host_allocator.h"
#include "bench_util.h"

#define CAPACITY (32 * GiB)
#define PAIRS 200000
/* glibc maps and unmaps every block above its mmap threshold: fewer pairs. */
#define BIG_PAIRS 2000
#define PASSES 15
#define NSIZES 64

struct sizes {
	const char *name;
	size_t pairs;
	size_t v[NSIZES];
};

static void fixed(struct sizes *s, const char *name, size_t size)
{
	s->name = name;
	s->pairs = PAIRS;
	for (size_t i = 0; i < NSIZES; i++)
		s->v[i] = size;
}

/* Sizes a loader's batches have: 64 drawn uniformly in [lo, hi]. */
static void varying(struct sizes *s, const char *name, size_t lo, size_t hi)
{
	struct bench_rng rng = { 42 };

	s->name = name;
	s->pairs = hi > 32 * MiB ? BIG_PAIRS : PAIRS;
	for (size_t i = 0; i < NSIZES; i++)
		s->v[i] = bench_rand_range(&rng, lo, hi);
}

static double host_pass(struct npa_host *h, const struct sizes *s)
{
	uint64_t t0 = bench_now_ns();
	void *p;

	for (size_t i = 0; i < s->pairs; i++) {
		if (npa_host_malloc(h, s->v[i % NSIZES], NULL, &p, NULL, 0) != 0)
			return -1;
		bench_escape(p);
		npa_host_free(h, p, NULL, 0);
	}
	return (double)(bench_now_ns() - t0) / (double)s->pairs;
}

static double glibc_pass(const struct sizes *s)
{
	uint64_t t0 = bench_now_ns();

	for (size_t i = 0; i < s->pairs; i++) {
		void *p = malloc(s->v[i % NSIZES]);
		bench_escape(p);
		free(p);
	}
	return (double)(bench_now_ns() - t0) / (double)s->pairs;
}

static int bench_one(struct npa_host *h, const struct sizes *s)
{
	double hv[PASSES], gv[PASSES], host_ns, glibc_ns;

	if (host_pass(h, s) < 0)     /* the cold pass fills the free lists */
		return -1;
	glibc_pass(s);
	for (size_t i = 0; i < PASSES; i++) {
		hv[i] = host_pass(h, s);
		gv[i] = glibc_pass(s);
		if (hv[i] < 0)
			return -1;
	}
	host_ns = bench_median(hv, PASSES);
	glibc_ns = bench_median(gv, PASSES);
	printf("%-22s %8zu %10.1f %10.1f %8.4f\n", s->name, s->pairs, host_ns, glibc_ns,
	       host_ns / glibc_ns);
	fflush(stdout);
	return 0;
}

int main(void)
{
	struct sizes rows[6];
	char err[NPA_ERRLEN] = "";
	struct npa *a = NULL;
	int rc = 0;

	fixed(&rows[0], "512 B", 512);
	fixed(&rows[1], "4 KiB", 4096);
	fixed(&rows[2], "64 KiB", 65536);
	fixed(&rows[3], "1 MiB", MiB);
	varying(&rows[4], "4 KiB..1 MiB varying", 4096, MiB);
	varying(&rows[5], "40..320 MiB varying", 40 * MiB, 320 * MiB);
	if (bench_device_up(CAPACITY, err, sizeof(err)) != 0 ||
	    bench_npa_new(NULL, &a, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_host: %s\n", err);
		return 1;
	}
	printf("bench_host: pinned host allocator (default variant), cached-hit alloc+free vs "
	       "glibc malloc+free\n(pairs a pass as listed, median of %d passes; ns per pair; "
	       "ratio = host / glibc)\n\n", PASSES);
	printf("%-22s %8s %10s %10s %8s\n", "sizes", "pairs", "host ns", "glibc ns", "ratio");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && rc == 0; i++)
		rc = bench_one(npa_host_of(a), &rows[i]);
	npa_destroy(a, NULL);
	bench_device_down();
	if (rc)
		fprintf(stderr, "bench_host: a pin failed\n");
	return rc ? 1 : 0;
}

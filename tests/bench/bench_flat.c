/*
 * bench_flat - does a cached hit get slower as the allocator holds more?
 *
 * For K = 1k, 10k and 100k: allocate 2K blocks of mixed sizes (mostly
 * small-pool sizes, 1 in 50 a large one), free every second one so that
 * K stay live with about K free cached blocks between them (holes that
 * cannot merge), then time alloc+free pairs that hit the cache: 4 KiB from
 * the small pool and 2 MiB from the large pool (each with 512 bytes more
 * every second pair, so that no pair repeats the one before). Both the pointer map (K
 * live entries) and the free-block bins (about K entries) are at their
 * full size while the pairs run. The three allocators share one device.
 * glibc, jemalloc and mimalloc (bench_baseline.h) get the same blocks and
 * the same pairs, in the same rounds. Target: 100k costs at most 1.2x of
 * 1k for the allocator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_baseline.h"
#include "bench_util.h"

#define CAPACITY (48 * GiB)
#define PAIRS 100000
#define ROUNDS 11
#define TARGET_RATIO 1.2
#define ROUND_BUDGET_NS 20000000ull

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

/* The allocator (base == NULL) or a baseline, with one heap per K. */
struct subject {
	const char *name;
	const struct bench_baseline *base;
	struct npa *a[NKS];
	void **live[NKS];
};

static int subject_malloc(struct subject *s, size_t k, size_t size, void **p, char *err,
			  size_t errlen)
{
	if (s->base == NULL)
		return npa_malloc(s->a[k], 0, size, NULL, p, err, errlen);
	*p = s->base->malloc(size);
	bench_escape(*p);
	if (*p != NULL)
		return 0;
	snprintf(err, errlen, "%s: out of memory", s->name);
	return -ENOMEM;
}

static int subject_free(struct subject *s, size_t k, void *p, char *err, size_t errlen)
{
	if (s->base == NULL)
		return npa_free(s->a[k], p, err, errlen);
	s->base->free(p);
	return 0;
}

/*
 * 2K allocations first, then every second one freed: K live, ~K cached
 * holes. Freeing only after all are made keeps later allocations from
 * filling the holes.
 */
static int fill(struct subject *s, size_t k, char *err, size_t errlen)
{
	struct bench_rng r = { 7 };
	void **live = s->live[k];
	int rc = 0;

	for (size_t i = 0; i < 2 * ks[k] && rc == 0; i++)
		rc = subject_malloc(s, k, mixed_size(&r), &live[i], err, errlen);
	for (size_t i = 1; i < 2 * ks[k] && rc == 0; i += 2)
		rc = subject_free(s, k, live[i], err, errlen);
	return rc;
}

/*
 * Pairs of `size` and of 512 bytes more in turn: the allocator takes the
 * block of a pair that repeats the one before straight back without the
 * free-block bins (device_allocator.c, "The last hit, again"), and these
 * pairs are to measure the bins.
 */
static int time_pairs(struct subject *s, size_t k, size_t size, double *ns_per_pair,
		      char *err, size_t errlen)
{
	uint64_t t0 = bench_now_ns(), t = t0;
	void *p;
	int rc = 0, i;

	/* glibc maps and unmaps each 2 MiB block: a time budget keeps it short. */
	for (i = 0; i < PAIRS && rc == 0 && t - t0 < ROUND_BUDGET_NS; i++) {
		rc = subject_malloc(s, k, size + (size_t)(i & 1) * 512, &p, err, errlen);
		if (rc == 0)
			rc = subject_free(s, k, p, err, errlen);
		if (i % 1024 == 1023)
			t = bench_now_ns();
	}
	*ns_per_pair = (double)(bench_now_ns() - t0) / i;
	return rc;
}

#define NSUBJECTS (1 + BENCH_BASELINES)

/*
 * Rounds go K = 1k, 10k, 100k in turn, each through every subject, so a
 * burst of noise from the rest of the machine lands on all alike; the
 * median of the rounds is kept.
 */
static int measure(struct subject *subj, double out[NSUBJECTS][NKS][NSIZES], char *err,
		   size_t errlen)
{
	static double v[NSUBJECTS][NKS][NSIZES][ROUNDS];
	int rc = 0;

	for (int round = 0; round < ROUNDS && rc == 0; round++)
		for (size_t k = 0; k < NKS && rc == 0; k++)
			for (size_t j = 0; j < NSUBJECTS && rc == 0; j++)
				for (size_t s = 0; s < NSIZES && rc == 0 && subj[j].name; s++)
					rc = time_pairs(&subj[j], k, hit_sizes[s],
							&v[j][k][s][round], err, errlen);
	for (size_t j = 0; j < NSUBJECTS && rc == 0; j++)
		for (size_t k = 0; k < NKS; k++)
			for (size_t s = 0; s < NSIZES && subj[j].name; s++)
				out[j][k][s] = bench_median(v[j][k][s], ROUNDS);
	return rc;
}

/* One heap per K and subject; the allocator's all on the same (ample) device. */
static int setup(struct subject *s, char *err, size_t errlen)
{
	int rc = 0;

	for (size_t k = 0; k < NKS && rc == 0; k++) {
		s->live[k] = calloc(2 * ks[k], sizeof(*s->live[k]));
		rc = s->live[k] ? 0 : -ENOMEM;
		if (rc == 0 && s->base == NULL)
			rc = bench_npa_new(NULL, &s->a[k], err, errlen);
		if (rc == 0)
			rc = fill(s, k, err, errlen);
		else if (rc == -ENOMEM)
			snprintf(err, errlen, "out of host memory");
	}
	return rc;
}

/* The live blocks go back; the holes were freed by fill. */
static void teardown(struct subject *s)
{
	for (size_t k = 0; k < NKS; k++) {
		for (size_t i = 0; s->live[k] != NULL && s->base != NULL && i < 2 * ks[k]; i += 2)
			s->base->free(s->live[k][i]);
		if (s->a[k])
			npa_destroy(s->a[k], NULL);
		free(s->live[k]);
	}
}

static void print(const struct subject *subj, double ns[NSUBJECTS][NKS][NSIZES])
{
	for (size_t s = 0; s < NSIZES; s++) {
		printf("%s pairs, ns     ", s == 0 ? "4 KiB" : "2 MiB");
		for (size_t j = 0; j < NSUBJECTS; j++)
			printf(" %9s", subj[j].name ? subj[j].name : "-");
		printf("\n");
		for (size_t k = 0; k < NKS; k++) {
			printf("K = %-14zu", ks[k]);
			for (size_t j = 0; j < NSUBJECTS; j++)
				bench_print_figure(subj[j].name != NULL, ns[j][k][s], 9, 1);
			printf("\n");
		}
		printf("%-18s", "100k/1k");
		for (size_t j = 0; j < NSUBJECTS; j++)
			bench_print_figure(subj[j].name != NULL, ns[j][NKS - 1][s] / ns[j][0][s], 9, 2);
		printf("\n%-18s %9s", "target (npa)",
		       bench_verdict(ns[0][NKS - 1][s] / ns[0][0][s] <= TARGET_RATIO));
		printf("\n%-18s %9s", "npa/baseline at 100k", "");
		for (size_t j = 1; j < NSUBJECTS; j++)
			bench_print_figure(subj[j].name != NULL,
					   ns[0][NKS - 1][s] / ns[j][NKS - 1][s], 9, 2);
		printf("\n\n");
	}
}

int main(int argc, char **argv)
{
	struct bench_baseline base[BENCH_BASELINES];
	struct subject subj[NSUBJECTS] = { { .name = "npa" } };
	static double ns[NSUBJECTS][NKS][NSIZES];
	char err[NPA_ERRLEN] = "";
	int rc;

	(void)argc;
	bench_baseline_prepare(argv);
	bench_baselines_open(base);
	for (int j = 0; j < BENCH_BASELINES; j++) {
		subj[1 + j].base = &base[j];
		subj[1 + j].name = base[j].present ? base[j].name : NULL;
	}
	printf("bench_flat: ns per cached alloc+free pair with K live blocks (and ~K cached holes)\n");
	printf("median of %d interleaved rounds of %d pairs; target: npa's 100k/1k <= %.1f;\n"
	       "glibc, jemalloc, mimalloc get the same blocks and pairs (at most %llu ms of them a round)\n\n",
	       ROUNDS, PAIRS, TARGET_RATIO, ROUND_BUDGET_NS / 1000000);
	rc = bench_device_up(CAPACITY, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "bench_flat: %s\n", err);
		return 1;
	}
	for (size_t j = 0; j < NSUBJECTS && rc == 0; j++)
		if (subj[j].name != NULL)
			rc = setup(&subj[j], err, sizeof(err));
	if (rc == 0)
		rc = measure(subj, ns, err, sizeof(err));
	if (rc == 0)
		print(subj, ns);
	for (size_t j = 0; j < NSUBJECTS; j++)
		teardown(&subj[j]);
	bench_device_down();
	if (rc < 0)
		fprintf(stderr, "bench_flat: %s\n", err);
	return rc < 0;
}

/*
 * bench_pair - N cached-hit malloc+free pairs of one size, after a warm-up.
 *
 *     bench_pair npu|cuda|npu-pool|npu-filter|glibc|jemalloc|mimalloc N [SIZE]
 *
 * npu and cuda are the allocator in that flavor; npu-pool makes every pair
 * inside a MemPool's scope, as inside torch.npu.use_mem_pool(pool) (its
 * filter takes the current stream); npu-filter inside a scope whose
 * filter is a function to call, as a graph capture's (which asks the
 * runtime): the cost of routing through a scope. The last three are the
 * general-purpose baselines (bench_baseline.h); one that is not installed
 * prints "n/a (not installed)" and exits 0.
 *
 * Meant to run under `valgrind --tool=callgrind` twice, with N and 2N: the
 * difference of the two instruction totals divided by N is the cost of one
 * pair, with start-up and warm-up cancelled out (run.sh does this). Run
 * alone it prints the wall time per pair.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/device/mempool.h"
#include "bench_baseline.h"
#include "bench_util.h"

#define WARMUP 1000
#define CAPACITY (1 * GiB)

enum scope { NO_SCOPE, MEMPOOL, FILTER };

static bool every_stream(aclrtStream stream, void *arg)
{
	(void)stream, (void)arg;
	return true;
}

/* A MemPool, and a scope routing the default stream's allocations to it:
 * use_mem_pool's, or one with a filter function. */
static int enter_pool(struct npa *a, enum scope scope, char *err, size_t errlen)
{
	struct npa_pool_id id = npa_graph_pool_handle(a, true);

	if (scope == MEMPOOL)
		return npa_mempool_begin_stream(a, 0, id, NULL, err, errlen);
	return npa_begin_allocate_to_pool(a, 0, id, every_stream, NULL, err, errlen);
}

static int npa_pairs(const struct npa_flavor *flavor, unsigned long n, size_t size,
		     enum scope scope, uint64_t *ns, char *err, size_t errlen)
{
	struct npa *a = NULL;
	void *p;
	uint64_t t0 = 0;
	int rc;

	rc = bench_device_up(CAPACITY, err, errlen);
	if (rc < 0)
		return rc;
	rc = bench_npa_new_flavor(flavor, NULL, &a, err, errlen);
	if (rc == 0 && scope != NO_SCOPE)
		rc = enter_pool(a, scope, err, errlen);
	for (unsigned long i = 0; rc == 0 && i < WARMUP + n; i++) {
		if (i == WARMUP)
			t0 = bench_now_ns();
		rc = npa_malloc(a, 0, size, NULL, &p, err, errlen);
		if (rc == 0)
			rc = npa_free(a, p, err, errlen);
	}
	*ns = bench_now_ns() - t0;
	if (a)
		npa_destroy(a, NULL);
	bench_device_down();
	return rc;
}

static void baseline_pairs(const struct bench_baseline *b, unsigned long n, size_t size,
			   uint64_t *ns)
{
	uint64_t t0 = 0;

	for (unsigned long i = 0; i < WARMUP + n; i++) {
		void *p;

		if (i == WARMUP)
			t0 = bench_now_ns();
		p = b->malloc(size);
		bench_escape(p);
		b->free(p);
	}
	*ns = bench_now_ns() - t0;
}

static int run_npa(const char *mode, unsigned long n, size_t size, uint64_t *ns)
{
	char err[NPA_ERRLEN] = "";
	const struct npa_flavor *flavor =
		strcmp(mode, "cuda") == 0 ? &npa_flavor_cuda : &npa_flavor_npu;
	enum scope scope = strcmp(mode, "npu-pool") == 0     ? MEMPOOL
			   : strcmp(mode, "npu-filter") == 0 ? FILTER
							     : NO_SCOPE;

	if (npa_pairs(flavor, n, size, scope, ns, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_pair: %s\n", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_baseline base;
	char *end;
	unsigned long n;
	size_t size = 4096;
	uint64_t ns = 0;
	const char *mode;

	bench_baseline_prepare(argv);
	if (argc < 3 || argc > 4)
		goto usage;
	mode = argv[1];
	n = strtoul(argv[2], &end, 10);
	if (*end || n == 0)
		goto usage;
	if (argc == 4)
		size = strtoul(argv[3], &end, 10);
	if (*end || size == 0)
		goto usage;
	if (strcmp(mode, "npu") == 0 || strcmp(mode, "cuda") == 0 ||
	    strcmp(mode, "npu-pool") == 0 || strcmp(mode, "npu-filter") == 0) {
		if (run_npa(mode, n, size, &ns) != 0)
			return 1;
	} else if (bench_baseline_open(mode, &base) == 0) {
		if (!base.present) {
			printf("%s: n/a (not installed)\n", mode);
			return 0;
		}
		baseline_pairs(&base, n, size, &ns);
	} else {
		goto usage;
	}
	printf("%s: %lu pairs of %zu bytes, %.1f ns/pair\n", mode, n, size, (double)ns / n);
	return 0;
usage:
	fprintf(stderr,
		"usage: bench_pair npu|cuda|npu-pool|npu-filter|glibc|jemalloc|mimalloc N [SIZE]\n");
	return 2;
}

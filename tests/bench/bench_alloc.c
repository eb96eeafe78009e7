/*
 * bench_alloc - the allocator against glibc, jemalloc and mimalloc on the
 * same size sequences.
 *
 * Each workload's alloc/free events are replayed directly (no trace
 * machinery, no streams) against npa_malloc/npa_free on a device with no
 * malloc cost, and against each baseline's malloc/free (bench_baseline.h).
 * None touches the memory. The first allocator pass is "cold" (it fills
 * the cache from the device); later passes are "warm" and are what the 2x
 * target is about. Warm passes of all of them alternate, and the median
 * pass of each is kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <npumemfs/npusim.h>

#include "bench_baseline.h"
#include "bench_traces.h"
#include "bench_util.h"

#define CAPACITY (32 * GiB)
#define TARGET_RATIO 2.0
#define PASS_BUDGET_NS 800000000ull
#define MAX_PASSES 50

struct op {
	uint32_t slot;
	uint32_t is_free;
	uint64_t size;
};

struct workload {
	struct op *ops;
	size_t nops, pairs;
	void **ptrs;            /* [nslots]: what each slot holds, NULL once freed */
	size_t nslots;
};

static int workload_from_trace(const struct wl_trace *t, struct workload *w)
{
	w->ops = calloc(t->nevents, sizeof(*w->ops));
	w->ptrs = calloc(t->nslots ? t->nslots : 1, sizeof(*w->ptrs));
	if (!w->ops || !w->ptrs)
		return -ENOMEM;
	w->nslots = t->nslots;
	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *e = &t->events[i];

		if (e->op != WL_ALLOC && e->op != WL_FREE)
			continue;
		w->ops[w->nops++] = (struct op){ e->slot, e->op == WL_FREE, e->size };
		w->pairs += e->op == WL_ALLOC;
	}
	return 0;
}

static void workload_release(struct workload *w)
{
	free(w->ops);
	free(w->ptrs);
}

static int npa_pass(struct npa *a, struct workload *w, uint64_t *ns, char *err,
		    size_t errlen)
{
	uint64_t t0 = bench_now_ns();
	int rc;

	for (size_t i = 0; i < w->nops; i++) {
		const struct op *o = &w->ops[i];

		if (o->is_free) {
			rc = npa_free(a, w->ptrs[o->slot], err, errlen);
			w->ptrs[o->slot] = NULL;
		} else {
			rc = npa_malloc(a, 0, o->size, NULL, &w->ptrs[o->slot], err, errlen);
		}
		if (rc < 0)
			return rc;
	}
	*ns = bench_now_ns() - t0;
	/* What the trace keeps to its end (a model's weights) goes too,
	 * untimed: else every pass would add it again. */
	for (size_t i = 0; i < w->nslots; i++) {
		if (w->ptrs[i] != NULL && (rc = npa_free(a, w->ptrs[i], err, errlen)) < 0)
			return rc;
		w->ptrs[i] = NULL;
	}
	return 0;
}

static uint64_t baseline_pass(const struct bench_baseline *b, struct workload *w)
{
	uint64_t t0 = bench_now_ns();

	for (size_t i = 0; i < w->nops; i++) {
		const struct op *o = &w->ops[i];

		if (o->is_free) {
			b->free(w->ptrs[o->slot]);
			w->ptrs[o->slot] = NULL;
		} else {
			w->ptrs[o->slot] = b->malloc(o->size);
			bench_escape(w->ptrs[o->slot]);
		}
	}
	uint64_t ns = bench_now_ns() - t0;

	for (size_t i = 0; i < w->nslots; i++) {
		b->free(w->ptrs[i]);
		w->ptrs[i] = NULL;
	}
	return ns;
}

static size_t passes_for(uint64_t pass_ns)
{
	uint64_t n = PASS_BUDGET_NS / (pass_ns ? pass_ns : 1);

	return n < 3 ? 3 : n > MAX_PASSES ? MAX_PASSES : n;
}

struct result {
	double cold_ns, warm_ns;           /* per alloc+free pair */
	double base_ns[BENCH_BASELINES];
	double frag;                       /* peak reserved / peak allocated */
	uint64_t device_mallocs;
};

static void npa_figures(struct npa *a, struct result *res)
{
	struct npa_stats st;
	struct npusim_counters c;

	npa_get_stats(a, 0, &st);
	npusim_device_counters(0, &c);
	res->frag = (double)st.reserved_bytes[NPA_STAT_ALL].peak /
		    (double)st.allocated_bytes[NPA_STAT_ALL].peak;
	res->device_mallocs = c.malloc_calls;
}

/*
 * One cold allocator pass and a warm-up pass of each baseline, then warm
 * passes of all in turn, so noise from the rest of the machine lands on
 * all alike.
 */
static int measure(const struct bench_baseline base[BENCH_BASELINES], struct workload *w,
		   struct result *res, char *err, size_t errlen)
{
	double npa_v[MAX_PASSES], base_v[BENCH_BASELINES][MAX_PASSES];
	struct npa *a;
	uint64_t ns, slowest;
	size_t n;
	int rc;

	rc = bench_npa_new(NULL, &a, err, errlen);
	if (rc < 0)
		return rc;
	rc = npa_pass(a, w, &ns, err, errlen);
	res->cold_ns = (double)ns / w->pairs;
	slowest = ns;
	for (int j = 0; j < BENCH_BASELINES; j++) {
		uint64_t t = base[j].present ? baseline_pass(&base[j], w) : 0;

		slowest = t > slowest ? t : slowest;
	}
	n = passes_for(slowest);
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = npa_pass(a, w, &ns, err, errlen);
		npa_v[i] = (double)ns / w->pairs;
		for (int j = 0; j < BENCH_BASELINES; j++)
			base_v[j][i] = base[j].present
				? (double)baseline_pass(&base[j], w) / w->pairs : 0;
	}
	if (rc == 0) {
		res->warm_ns = bench_median(npa_v, n);
		for (int j = 0; j < BENCH_BASELINES; j++)
			res->base_ns[j] = bench_median(base_v[j], n);
		npa_figures(a, res);
	}
	npa_destroy(a, NULL);
	return rc;
}

static void print_row(const char *kind, const struct bench_baseline base[BENCH_BASELINES],
		      const struct workload *w, const struct result *r)
{
	double ratio = r->warm_ns / r->base_ns[BENCH_GLIBC];

	printf("%-9s %8zu %9.1f %9.1f", kind, w->pairs, r->cold_ns, r->warm_ns);
	for (int j = 0; j < BENCH_BASELINES; j++)
		bench_print_figure(base[j].present, r->base_ns[j], 9, 1);
	printf(" %9.2f  %-8s", ratio, bench_verdict(ratio <= TARGET_RATIO));
	for (int j = BENCH_JEMALLOC; j < BENCH_BASELINES; j++)
		bench_print_figure(base[j].present, r->warm_ns / r->base_ns[j], 9, 2);
	printf(" %10.3f %12llu\n", r->frag, (unsigned long long)r->device_mallocs);
}

static int bench_one(const struct bench_baseline base[BENCH_BASELINES], const char *kind,
		     char *err, size_t errlen)
{
	struct wl_trace *t = NULL;
	struct workload w = { 0 };
	struct result r = { 0 };
	int rc;

	rc = bench_trace_make(kind, BENCH_SEED, &t, err, errlen);
	if (rc == 0)
		rc = workload_from_trace(t, &w);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of host memory");
	if (rc == 0)
		rc = bench_device_up(CAPACITY, err, errlen);
	if (rc == 0) {
		rc = measure(base, &w, &r, err, errlen);
		bench_device_down();
	}
	if (rc == 0)
		print_row(kind, base, &w, &r);
	workload_release(&w);
	if (t)
		wl_trace_free(t);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "churn", "training", "random" };
	struct bench_baseline base[BENCH_BASELINES];
	char err[NPA_ERRLEN] = "";

	(void)argc;
	bench_baseline_prepare(argv);
	bench_baselines_open(base);
	printf("bench_alloc: alloc+free pairs replayed directly; npa on a device with no malloc cost vs glibc, jemalloc, mimalloc\n");
	printf("ns/pair = time per alloc+free pair; ratio = npa warm / glibc (target <= %.1f); /je, /mi = npa warm / jemalloc, mimalloc;\n"
	       "peak res/alloc = peak reserved / peak allocated; dev mallocs = device mallocs over all passes\n\n",
	       TARGET_RATIO);
	printf("%-9s %8s %9s %9s %9s %9s %9s %9s  %-8s %9s %9s %10s %12s\n", "trace", "pairs",
	       "npa cold", "npa warm", "glibc", "jemalloc", "mimalloc", "ratio", "target", "/je",
	       "/mi", "res/alloc", "dev mallocs");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (bench_one(base, kinds[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_alloc: %s: %s\n", kinds[i], err);
			return 1;
		}
	}
	return 0;
}

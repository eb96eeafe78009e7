/*
 * bench_frag - fragmentation per allocator setting.
 *
 * For the training-like and the RMM-style random trace, and for each
 * setting: peak reserved / peak allocated when the device is ample, and
 * the smallest device that replays the whole trace without one OOM
 * (bisection over capacity in 2 MiB pages, each probe a replay from
 * scratch on a fresh device and allocator). Success need not be monotonic
 * in capacity, so the figure is the boundary bisection finds.
 *
 * Settings: upstream defaults; max_split_size_mb:200 (above the 20 MiB
 * large segments and the bulk of activations, below the largest tensors
 * of the training trace, so only those stop being split) and :32 (half
 * the random trace's largest size; 200 is above all of them, so it cannot
 * change that trace); garbage_collection_threshold:0.6,
 * which upstream honours only under a memory fraction below 1, so with
 * fraction 0.99 (the smallest capacity then includes that 1%);
 * expandable_segments:True once the allocator supports it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/replay.h"

#include "bench_traces.h"
#include "bench_util.h"

#define AMPLE (32 * GiB)
#define PAGE (2 * MiB)

struct setting {
	const char *label;
	const char *conf;
	double fraction; /* 0: none set */
};

static const struct setting settings[] = {
	{ "default", NULL, 0 },
	{ "max_split_size_mb:200", "max_split_size_mb:200", 0 },
	{ "max_split_size_mb:32", "max_split_size_mb:32", 0 },
	{ "gc_threshold:0.6 fraction:0.99", "garbage_collection_threshold:0.6", 0.99 },
	{ "expandable_segments:True", "expandable_segments:True", 0 },
};

struct probe {
	uint64_t ooms;
	int64_t peak_reserved, peak_allocated;
};

static int replay_on(struct npa *a, const struct setting *s, const struct wl_trace *t,
		     struct probe *p, char *err, size_t errlen)
{
	struct wl_replay_counters c;
	struct wl_replay *r = NULL;
	struct npa_stats st;
	atomic_bool stop = false;
	int rc = 0;

	if (s->fraction > 0)
		rc = npa_set_memory_fraction(a, 0, s->fraction, err, errlen);
	if (rc == 0)
		rc = wl_replay_new(a, t, &r, err, errlen);
	if (rc == 0)
		rc = wl_replay_run(r, 0, t->nevents, &stop, err, errlen);
	if (rc == 0) {
		wl_replay_counters(r, &c);
		npa_get_stats(a, 0, &st);
		p->ooms = c.ooms;
		p->peak_reserved = st.reserved_bytes[NPA_STAT_ALL].peak;
		p->peak_allocated = st.allocated_bytes[NPA_STAT_ALL].peak;
	}
	if (r)
		wl_replay_free(r);
	return rc;
}

/* One replay of `t` under `s` on a fresh device of `capacity` bytes. */
static int probe(const struct setting *s, const struct wl_trace *t, uint64_t capacity,
		 struct probe *p, char *err, size_t errlen)
{
	struct npa *a = NULL;
	int rc;

	rc = bench_device_up(capacity, err, errlen);
	if (rc < 0)
		return rc;
	rc = bench_npa_new(s->conf, &a, err, errlen);
	if (rc == 0)
		rc = replay_on(a, s, t, p, err, errlen);
	if (a)
		npa_destroy(a, NULL);
	bench_device_down();
	return rc;
}

static int fits(const struct setting *s, const struct wl_trace *t, uint64_t pages,
		struct probe *p, bool *ok, char *err, size_t errlen)
{
	int rc = probe(s, t, pages * PAGE, p, err, errlen);

	*ok = rc == 0 && p->ooms == 0;
	return rc;
}

/*
 * Below the peak of allocated bytes no replay can succeed; the peak of
 * reserved bytes on an ample device usually does, else double it. *at_min
 * is the replay at the capacity found.
 */
static int min_capacity(const struct setting *s, const struct wl_trace *t,
			const struct probe *ample, uint64_t *pages,
			struct probe *at_min, char *err, size_t errlen)
{
	uint64_t lo = ((uint64_t)ample->peak_allocated + PAGE - 1) / PAGE - 1;
	uint64_t hi = ((uint64_t)ample->peak_reserved + PAGE - 1) / PAGE;
	bool ok = false;
	int rc;

	for (;;) {
		rc = fits(s, t, hi, at_min, &ok, err, errlen);
		if (rc < 0 || ok || hi * PAGE >= AMPLE)
			break;
		lo = hi;
		hi *= 2;
	}
	while (rc == 0 && ok && hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		struct probe p;
		bool mid_ok;

		rc = fits(s, t, mid, &p, &mid_ok, err, errlen);
		if (mid_ok) {
			hi = mid;
			*at_min = p;
		} else {
			lo = mid;
		}
	}
	*pages = ok ? hi : 0;
	return rc;
}

static double frag(const struct probe *p)
{
	return (double)p->peak_reserved / (double)p->peak_allocated;
}

static int row(const char *kind, const struct setting *s, const struct wl_trace *t,
	       char *err, size_t errlen)
{
	struct probe ample, at_min;
	uint64_t pages = 0;
	char b1[32], b2[32];
	int rc;

	rc = probe(s, t, AMPLE, &ample, err, errlen);
	if (rc == -EOPNOTSUPP) {
		printf("%-9s %-31s %12s\n", kind, s->label, "n/a (not supported yet)");
		return 0;
	}
	if (rc == 0 && ample.ooms == 0)
		rc = min_capacity(s, t, &ample, &pages, &at_min, err, errlen);
	if (rc < 0)
		return rc;
	printf("%-9s %-31s %10.3f %11s ", kind, s->label, frag(&ample),
	       bench_fmt_bytes((uint64_t)ample.peak_allocated, b1, sizeof(b1)));
	if (pages)
		printf("%12s %9.3f %9.3f\n", bench_fmt_bytes(pages * PAGE, b2, sizeof(b2)),
		       (double)(pages * PAGE) / (double)ample.peak_allocated,
		       frag(&at_min));
	else
		printf("%12s %9s %9s\n", "> 32 GiB", "-", "-");
	return 0;
}

int main(void)
{
	static const char *const kinds[] = { "training", "random" };
	char err[NPA_ERRLEN] = "";

	printf("bench_frag: fragmentation per setting (npu flavor)\n");
	printf("res/alloc = peak reserved / peak allocated on a 32 GiB device;\n"
	       "min cap = smallest device (2 MiB steps) that replays the trace with no OOM;\n"
	       "cap/alloc = min cap / peak allocated;\n"
	       "at min = peak reserved / peak allocated of the replay at min cap\n\n");
	printf("%-9s %-31s %10s %11s %12s %9s %9s\n", "trace", "setting", "res/alloc",
	       "peak alloc", "min cap", "cap/alloc", "at min");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct wl_trace *t = NULL;
		int rc = bench_trace_make(kinds[i], BENCH_SEED, &t, err, sizeof(err));

		for (size_t j = 0; rc == 0 && j < sizeof(settings) / sizeof(settings[0]); j++)
			rc = row(kinds[i], &settings[j], t, err, sizeof(err));
		if (t)
			wl_trace_free(t);
		if (rc < 0) {
			fprintf(stderr, "bench_frag: %s: %s\n", kinds[i], err);
			return 1;
		}
	}
	return 0;
}

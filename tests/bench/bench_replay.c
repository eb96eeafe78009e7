/*
 * bench_replay - events per second of an in-process trace replay.
 *
 * wl_replay_run over the whole parsed trace, on a device with no malloc
 * cost, after one untimed pass that fills the cache (a replay loops). The
 * baseline is a loop that walks the same parsed events and dispatches on
 * them with no allocator behind: the floor any replay pays. The ratio says
 * how many times the walk's time the replay takes.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/replay.h"

#include "bench_traces.h"
#include "bench_util.h"

#define CAPACITY (32 * GiB)
#define TARGET_EVENTS_PER_S 10e6
#define PASS_BUDGET_NS 500000000ull
#define MAX_PASSES 100

static size_t passes_for(uint64_t pass_ns)
{
	uint64_t n = PASS_BUDGET_NS / (pass_ns ? pass_ns : 1);

	return n < 5 ? 5 : n > MAX_PASSES ? MAX_PASSES : n;
}

static int replay_pass(struct wl_replay *r, const struct wl_trace *t, uint64_t *ns,
		       char *err, size_t errlen)
{
	atomic_bool stop = false;
	uint64_t t0 = bench_now_ns();
	int rc = wl_replay_run(r, 0, t->nevents, &stop, err, errlen);

	*ns = bench_now_ns() - t0;
	wl_replay_release_all(r);
	return rc;
}

static int replay_events_per_s(const struct wl_trace *t, double *eps, uint64_t *ooms,
			       char *err, size_t errlen)
{
	struct wl_replay_counters c;
	struct wl_replay *r = NULL;
	struct npa *a = NULL;
	double v[MAX_PASSES];
	uint64_t ns;
	size_t n = 0;
	int rc;

	rc = bench_npa_new(NULL, &a, err, errlen);
	if (rc == 0)
		rc = wl_replay_new(a, t, &r, err, errlen);
	if (rc == 0)
		rc = replay_pass(r, t, &ns, err, errlen);
	if (rc == 0)
		n = passes_for(ns);
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = replay_pass(r, t, &ns, err, errlen);
		v[i] = (double)t->nevents * 1e9 / (double)ns;
	}
	if (rc == 0) {
		*eps = bench_median(v, n);
		wl_replay_counters(r, &c);
		*ooms = c.ooms;
	} else if (!*err) {
		snprintf(err, errlen, "replay: %s", strerror(-rc));
	}
	if (r)
		wl_replay_free(r);
	if (a)
		npa_destroy(a, NULL);
	return rc;
}

/* What a replay costs without an allocator: read each event, dispatch, keep a slot table. */
static uint64_t walk_pass(const struct wl_trace *t, uintptr_t *slots)
{
	uint64_t t0 = bench_now_ns();
	uintptr_t sink = 0;

	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *e = &t->events[i];

		switch (e->op) {
		case WL_ALLOC:
			slots[e->slot] = (uintptr_t)e->size;
			break;
		case WL_FREE:
			sink ^= slots[e->slot];
			slots[e->slot] = 0;
			break;
		default:
			sink += (uintptr_t)e->stream;
			break;
		}
	}
	bench_escape((void *)sink);
	return bench_now_ns() - t0;
}

static int walk_events_per_s(const struct wl_trace *t, double *eps)
{
	uintptr_t *slots = calloc(t->nslots ? t->nslots : 1, sizeof(*slots));
	double v[MAX_PASSES];
	size_t n;

	if (!slots)
		return -ENOMEM;
	n = passes_for(walk_pass(t, slots));
	for (size_t i = 0; i < n; i++)
		v[i] = (double)t->nevents * 1e9 / (double)walk_pass(t, slots);
	*eps = bench_median(v, n);
	free(slots);
	return 0;
}

static int bench_one(const char *kind, char *err, size_t errlen)
{
	struct wl_trace *t = NULL;
	double replay = 0, walk = 0;
	uint64_t ooms = 0;
	int rc;

	rc = bench_trace_make(kind, BENCH_SEED, &t, err, errlen);
	if (rc == 0)
		rc = bench_device_up(CAPACITY, err, errlen);
	if (rc == 0) {
		rc = replay_events_per_s(t, &replay, &ooms, err, errlen);
		bench_device_down();
	}
	if (rc == 0)
		rc = walk_events_per_s(t, &walk);
	if (rc == 0)
		printf("%-9s %8zu %12.2f %12.2f %10.1f  %-8s %5llu\n", kind, t->nevents,
		       replay / 1e6, walk / 1e6, walk / replay,
		       bench_verdict(replay >= TARGET_EVENTS_PER_S),
		       (unsigned long long)ooms);
	if (t)
		wl_trace_free(t);
	return rc;
}

int main(void)
{
	static const char *const kinds[] = { "training", "random" };
	char err[NPA_ERRLEN] = "";

	printf("bench_replay: wl_replay_run events/s (device malloc cost 0, cache warm)\n");
	printf("walk = the same events walked and dispatched with no allocator;\n"
	       "ratio = replay time / walk time; target >= %.0f M events/s\n\n",
	       TARGET_EVENTS_PER_S / 1e6);
	printf("%-9s %8s %12s %12s %10s  %-8s %5s\n", "trace", "events",
	       "replay M/s", "walk M/s", "ratio", "target", "ooms");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (bench_one(kinds[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_replay: %s: %s\n", kinds[i], err);
			return 1;
		}
	}
	return 0;
}

/*
 * whatif.c - one row of a what-if comparison (whatif.h).
 *
 * The stats are read after every event that may raise a figure (a run of
 * frees and syncs goes through in one call) and before each reset_peak:
 * a peak the allocator keeps is moved by a reset_peak line, and the
 * fragmentation at the peak is only known at the event that made it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay.h"
#include "whatif.h"

static double seconds_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t at_least(uint64_t v, int64_t s)
{
	return s > 0 && (uint64_t)s > v ? (uint64_t)s : v;
}

/* The figures after one event; the peaks are the allocator's own (which
 * see within the event), kept across reset_peak. */
static void sample(const struct npa_stats *st, struct wl_whatif_row *row)
{
	int64_t reserved_peak = st->reserved_bytes[NPA_STAT_ALL].peak;

	if (reserved_peak > 0 && (uint64_t)reserved_peak > row->peak_reserved_bytes) {
		int64_t frag = st->reserved_bytes[NPA_STAT_ALL].current -
			       st->allocated_bytes[NPA_STAT_ALL].current;
		row->peak_reserved_bytes = (uint64_t)reserved_peak;
		row->fragmentation_bytes = frag > 0 ? (uint64_t)frag : 0;
	}
	row->peak_allocated_bytes = at_least(row->peak_allocated_bytes,
					     st->allocated_bytes[NPA_STAT_ALL].peak);
	row->peak_active_bytes = at_least(row->peak_active_bytes,
					  st->active_bytes[NPA_STAT_ALL].peak);
	row->peak_inactive_split_bytes = at_least(row->peak_inactive_split_bytes,
						  st->inactive_split_bytes[NPA_STAT_ALL].peak);
}

static void final_counts(const struct npa_stats *st, struct wl_whatif_row *row)
{
	row->num_device_alloc = (uint64_t)st->num_device_alloc;
	row->num_device_free = (uint64_t)st->num_device_free;
	row->num_alloc_retries = (uint64_t)st->num_alloc_retries;
	row->num_sync_all_streams = (uint64_t)st->num_sync_all_streams;
}

static int add_point(struct wl_whatif_curve *c, size_t event, uint64_t reserved)
{
	size_t k = event / c->every;

	if (k >= c->npoints) {
		uint64_t *p = realloc(c->points, (k + 1) * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		memset(p + c->npoints, 0, (k + 1 - c->npoints) * sizeof(*p));
		c->points = p;
		c->npoints = k + 1;
	}
	if (reserved > c->points[k])
		c->points[k] = reserved;
	return 0;
}

static int after_event(struct allocator a, struct wl_replay *r, size_t i, uint32_t line,
		       const struct wl_whatif_opts *opt, struct wl_whatif_row *row)
{
	struct wl_replay_counters c;
	struct npa_stats st;
	int rc = a.ops->get_stats(a.self, opt->device, &st);

	if (rc)
		return rc;
	wl_replay_counters(r, &c);
	if (c.ooms > row->num_ooms && row->first_oom_line == 0)
		row->first_oom_line = line;
	row->num_ooms = c.ooms;
	sample(&st, row);
	final_counts(&st, row);
	if (opt->curve)
		return add_point(opt->curve, i,
				 (uint64_t)st.reserved_bytes[NPA_STAT_ALL].current);
	return 0;
}

/* Events after which nothing a row shows can have risen and no OOM
 * happened: they only give memory back, or touch none. */
static bool quiet(uint16_t op)
{
	switch ((enum wl_op)op) {
	case WL_FREE:
	case WL_RECORD_STREAM:
	case WL_ERASE_STREAM:
	case WL_COMPLETE:
	case WL_SYNC:
	case WL_EMPTY_CACHE:
	case WL_EMPTY_VIRT_ADDR_CACHE:
	case WL_RESET_ACCUMULATED:
	case WL_UNPIN:
	case WL_HOST_EMPTY_CACHE:
		return true;
	default:
		return false;
	}
}

/*
 * Where the stretch of events from i ends: just after the next event that
 * may raise a figure or run out of memory (its OOM is then the stretch's
 * last event), just before a reset_peak (the peaks are read first), or at
 * the end of the curve's point.
 */
static size_t stretch_end(const struct wl_trace *t, size_t i, const struct wl_whatif_opts *opt)
{
	size_t end = opt->curve ? (i / opt->curve->every + 1) * opt->curve->every : t->nevents;

	if (end > t->nevents)
		end = t->nevents;
	for (size_t k = i; k < end; k++) {
		if (t->events[k].op == WL_RESET_PEAK && k > i)
			return k;
		if (!quiet(t->events[k].op))
			return k + 1;
	}
	return end;
}

static int run_events(struct allocator a, struct wl_replay *r, const struct wl_trace *t,
		      const struct wl_whatif_opts *opt, struct wl_whatif_row *row,
		      char *err, size_t errlen)
{
	size_t i = 0, end;
	int rc = 0;

	for (; i < t->nevents; i = end) {
		end = stretch_end(t, i, opt);
		if ((rc = wl_replay_run(r, i, end, NULL, err, errlen)) != 0)
			break;
		if ((rc = after_event(a, r, end - 1, t->events[end - 1].line, opt, row)) != 0) {
			snprintf(err, errlen, "%s:%u: cannot read the stats: %s", t->name,
				 t->events[end - 1].line, strerror(-rc));
			break;
		}
		if (opt->stop_at_oom && row->num_ooms) {
			i = end;
			break;
		}
	}
	row->events = i;
	return rc;
}

int wl_whatif_measure(struct allocator a, const struct wl_trace *t,
		      const struct wl_whatif_opts *opt, struct wl_whatif_row *row,
		      char *err, size_t errlen)
{
	struct wl_replay *r;
	double start = seconds_now();
	int rc;

	memset(row, 0, sizeof(*row));
	if ((rc = wl_replay_new_target(a, t, &r, err, errlen)) != 0)
		return rc;
	rc = run_events(a, r, t, opt, row, err, errlen);
	wl_replay_release_all(r);
	wl_replay_free(r);
	row->seconds = seconds_now() - start;
	return rc;
}

uint64_t wl_whatif_largest_request(const struct wl_trace *t, uint32_t *line)
{
	uint64_t most = 0;

	*line = 0;
	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *ev = &t->events[i];
		if ((ev->op == WL_ALLOC || ev->op == WL_LAUNCH_OP) && ev->size > most) {
			most = ev->size;
			*line = ev->line;
		}
	}
	return most;
}

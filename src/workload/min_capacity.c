/*
 * min_capacity.c - bisection over device capacity (min_capacity.h).
 *
 * Capacities are counted in pages. Invariant of the bisection: `lo` fails
 * (or is below the floor, where nothing can run) and `hi` runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "min_capacity.h"

/* Capacities tried below the answer for a sign of non-monotonic OOM. */
#define SMALLER_TRIES 4
/* Answers kept, so that no capacity is replayed twice (the verification
 * excepted). Enough for a bisection over 2^64 bytes and the tries. */
#define MEMO 96

struct search {
	const struct wl_capacity_probe *p;
	uint64_t page;
	uint64_t tried[MEMO];
	int ran[MEMO];
	unsigned ntried;
	struct wl_min_capacity *out;
	char *err;
	size_t errlen;
};

/* Whether `pages` pages run: 1, 0, or the probe's error. */
static int runs(struct search *s, uint64_t pages)
{
	int rc;

	if (pages == 0)
		return 0;
	for (unsigned i = 0; i < s->ntried; i++)
		if (s->tried[i] == pages)
			return s->ran[i];
	rc = s->p->runs(s->p->ctx, pages * s->page, s->err, s->errlen);
	s->out->probes++;
	if (rc >= 0 && s->ntried < MEMO) {
		s->tried[s->ntried] = pages;
		s->ran[s->ntried++] = rc;
	}
	return rc;
}

/* The first power-of-two multiple of `start` that runs, in *hi; *lo the
 * last that failed. 0 in *hi if none up to `limit`. */
static int bracket(struct search *s, uint64_t start, uint64_t limit, uint64_t *lo,
		   uint64_t *hi)
{
	int rc;

	*hi = start > *lo ? start : *lo + 1;
	while ((rc = runs(s, *hi)) == 0) {
		*lo = *hi;
		if (*hi > limit / 2) {
			*hi = 0;
			return 0;
		}
		*hi *= 2;
	}
	return rc < 0 ? rc : 0;
}

/* The hint, where it falls between the two: one probe that may spare the
 * halvings from hi down to it. */
static int try_hint(struct search *s, uint64_t hint, uint64_t *lo, uint64_t *hi)
{
	uint64_t pages = (hint + s->page - 1) / s->page;
	int rc;

	if (hint == 0 || pages <= *lo || pages >= *hi)
		return 0;
	if ((rc = runs(s, pages)) < 0)
		return rc;
	if (rc)
		*hi = pages;
	else
		*lo = pages;
	return 0;
}

static int bisect(struct search *s, uint64_t lo, uint64_t *hi)
{
	while (*hi - lo > 1) {
		uint64_t mid = lo + (*hi - lo) / 2;
		int rc = runs(s, mid);
		if (rc < 0)
			return rc;
		if (rc)
			*hi = mid;
		else
			lo = mid;
	}
	return 0;
}

/* A run at the answer itself, not taken from the memo. */
static int verify(struct search *s, uint64_t hi)
{
	int rc = s->p->runs(s->p->ctx, hi * s->page, s->err, s->errlen);

	s->out->probes++;
	if (rc == 0) {
		snprintf(s->err, s->errlen, "%llu bytes ran once and then ran out of memory: "
			 "the replay is not deterministic", (unsigned long long)(hi * s->page));
		return -EPROTO;
	}
	return rc < 0 ? rc : 0;
}

/* The floor and evenly spaced capacities up to just below the answer;
 * the smallest that runs goes to out->smaller. */
static int try_smaller(struct search *s, uint64_t floor, uint64_t hi)
{
	for (int k = 0; k <= SMALLER_TRIES && floor < hi; k++) {
		uint64_t pages = floor + (hi - 1 - floor) * (uint64_t)k / SMALLER_TRIES;
		int rc = runs(s, pages);
		if (rc < 0)
			return rc;
		if (rc) {
			s->out->smaller = pages * s->page;
			return 0;
		}
	}
	return 0;
}

int wl_min_capacity_find(const struct wl_capacity_probe *p,
			 const struct wl_capacity_search *sr, struct wl_min_capacity *out,
			 char *err, size_t errlen)
{
	struct search s = { .p = p, .page = sr->page, .out = out, .err = err, .errlen = errlen };
	uint64_t floor = (sr->floor + sr->page - 1) / sr->page;
	uint64_t lo = floor > 0 ? floor - 1 : 0, hi;
	int rc;

	memset(out, 0, sizeof(*out));
	/* The caller's replay at a start on a page answers for it. */
	if (sr->start_result != WL_START_UNKNOWN && sr->start % sr->page == 0 &&
	    sr->start / sr->page > 0) {
		s.tried[0] = sr->start / sr->page;
		s.ran[s.ntried++] = sr->start_result == WL_START_RUNS;
	}
	rc = bracket(&s, (sr->start + sr->page - 1) / sr->page, sr->limit / sr->page, &lo, &hi);
	if (rc || hi == 0)
		return rc;
	if ((rc = try_hint(&s, sr->hint, &lo, &hi)) != 0)
		return rc;
	if ((rc = bisect(&s, lo, &hi)) != 0 || (rc = verify(&s, hi)) != 0)
		return rc;
	out->bytes = hi * sr->page;
	return try_smaller(&s, floor > 0 ? floor : 1, hi);
}

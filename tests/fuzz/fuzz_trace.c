/*
 * fuzz_trace.c - wl_trace_parse over arbitrary files.
 *
 * A trace that parses must be one a replay can trust without checking:
 * every event on a line the input has, in order, naming slots, streams and
 * devices that exist, and every free or record_stream naming an ID that is
 * live at that point (pin, unpin and copy: a pinned ID, the same way);
 * every graph and pool index below the trace's counts,
 * and every capture_end ending a capture of its stream begun earlier. A
 * refused trace must say which line, and that line must exist too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workload/trace.h"

#define NAME "t"

static unsigned line_count(const uint8_t *data, size_t size)
{
	unsigned n = 0;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n + (size && data[size - 1] != '\n');
}

/* What the events say of a slot so far. */
enum { LIVE = 1, USED = 2, PENDING = 4 };

static void check_event(const struct wl_trace *t, const struct wl_event *ev,
			unsigned char *state)
{
	if (ev->op == WL_ALLOC || ev->op == WL_FREE || ev->op == WL_RECORD_STREAM ||
	    ev->op == WL_COMPLETE) {
		if (ev->slot >= t->nslots)
			abort();
		if (!(state[ev->slot] & LIVE) != (ev->op == WL_ALLOC || ev->op == WL_COMPLETE))
			abort();
	}
	/* complete names a freed ID whose free waits on a record_stream's stream */
	if (ev->op == WL_COMPLETE && !(state[ev->slot] & PENDING))
		abort();
	if (ev->op == WL_ALLOC)
		state[ev->slot] = LIVE;
	else if (ev->op == WL_RECORD_STREAM)
		state[ev->slot] |= USED;
	else if (ev->op == WL_FREE)
		state[ev->slot] = state[ev->slot] & USED ? PENDING : 0;
	else if (ev->op == WL_COMPLETE)
		state[ev->slot] = 0;
	if (ev->device < 0 || ev->device > t->max_device)
		abort();
	if (ev->stream >= (int32_t)t->nstreams || ev->stream < -(ev->op == WL_SYNC))
		abort();
	if (ev->op == WL_FRACTION && !(ev->fraction >= 0.0 && ev->fraction <= 1.0))
		abort();
}

/* Pinned IDs: pin of one not pinned, unpin and copy of one pinned. */
static void check_pin(const struct wl_trace *t, const struct wl_event *ev, bool *pinned)
{
	if (ev->op != WL_PIN && ev->op != WL_UNPIN && ev->op != WL_COPY)
		return;
	if (ev->slot >= t->npins || pinned[ev->slot] != (ev->op != WL_PIN))
		abort();
	if (ev->op != WL_COPY)
		pinned[ev->slot] = ev->op == WL_PIN;
}

static bool names_a_graph(uint16_t op)
{
	return op == WL_CAPTURE_BEGIN || op == WL_CAPTURE_END || op == WL_GRAPH_REPLAY ||
	       op == WL_GRAPH_RESET;
}

/* capture_begin with pool=graph:G names G's graph index instead. */
static bool names_a_pool(const struct wl_event *ev)
{
	return (ev->op == WL_CAPTURE_BEGIN && ev->pool != WL_NO_POOL &&
		!(ev->flags & WL_POOL_OF_GRAPH)) ||
	       (ev->op >= WL_MEMPOOL_CREATE && ev->op <= WL_MEMPOOL_RELEASE);
}

static bool names_a_graphs_pool(const struct wl_event *ev)
{
	return ev->op == WL_CAPTURE_BEGIN && (ev->flags & WL_POOL_OF_GRAPH);
}

/* The graph capturing on each dense stream (UINT32_MAX: none). */
static void check_capture(const struct wl_event *ev, uint32_t *capturing)
{
	if (ev->op == WL_CAPTURE_BEGIN) {
		if (capturing[ev->stream] != UINT32_MAX)
			abort();
		capturing[ev->stream] = ev->slot;
	} else if (ev->op == WL_CAPTURE_END) {
		if (capturing[ev->stream] != ev->slot)
			abort();
		capturing[ev->stream] = UINT32_MAX;
	} else if (ev->op == WL_SYNC && ev->stream >= 0 && capturing[ev->stream] != UINT32_MAX) {
		abort();
	}
}

static void check_pools(const struct wl_trace *t, const struct wl_event *ev,
			uint32_t *capturing)
{
	if (names_a_graph(ev->op) && ev->slot >= t->ngraphs)
		abort();
	if (names_a_pool(ev) && ev->pool >= t->npools)
		abort();
	if (names_a_graphs_pool(ev) && ev->pool >= t->ngraphs)
		abort();
	if (ev->op == WL_MEMPOOL_CREATE && (ev->flags & ~(WL_POOL_USE_ON_OOM | WL_POOL_NO_SPLIT)))
		abort();
	check_capture(ev, capturing);
}

static void check_accepted(const struct wl_trace *t, unsigned lines)
{
	unsigned char *live = calloc(t->nslots + 1, sizeof(*live));
	bool *pinned = calloc(t->npins + 1, sizeof(*pinned));
	uint32_t *capturing = malloc(t->nstreams * sizeof(*capturing));
	uint32_t prev = 0;

	if (live == NULL || pinned == NULL || capturing == NULL) {
		free(live);
		free(pinned);
		free(capturing);
		return;
	}
	memset(capturing, 0xff, t->nstreams * sizeof(*capturing));
	if (t->max_device >= NPA_MAX_DEVICES || t->nstreams == 0 ||
	    t->stream_number[0] != 0)
		abort();
	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *ev = &t->events[i];
		if (ev->line == 0 || ev->line > lines || ev->line <= prev)
			abort();
		prev = ev->line;
		check_event(t, ev, live);
		check_pin(t, ev, pinned);
		check_pools(t, ev, capturing);
	}
	for (uint32_t s = 0; s < t->nstreams; s++)
		if (t->stream_number[s] < 0 || t->stream_number[s] > t->max_stream)
			abort();
	free(live);
	free(pinned);
	free(capturing);
}

static void check_refused(const char *err, unsigned lines)
{
	unsigned long line;
	char *end;

	if (strncmp(err, NAME ":", 2) != 0)
		abort();
	line = strtoul(err + 2, &end, 10);
	if (end == err + 2 || *end != ':' || line == 0 || line > lines)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wl_trace *t = NULL;
	char err[WL_ERRLEN] = "";
	FILE *f;
	int rc;

	if (size == 0)
		return 0; /* fmemopen refuses an empty buffer */
	f = fmemopen((void *)data, size, "r");
	if (f == NULL)
		return 0;
	rc = wl_trace_parse(f, NAME, &t, err, sizeof(err));
	fclose(f);
	if (rc == 0) {
		check_accepted(t, line_count(data, size));
		wl_trace_free(t);
	} else if (rc == -EINVAL) {
		check_refused(err, line_count(data, size));
	}
	return 0;
}

/*
 * fuzz_trace.c - wl_trace_parse over arbitrary files.
 *
 * A trace that parses must be one a replay can trust without checking:
 * every event on a line the input has, in order, naming slots, streams and
 * devices that exist, and every free or record_stream naming an ID that is
 * live at that point. A refused trace must say which line, and that line
 * must exist too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workload/replay.h"

#define NAME "t"

static unsigned line_count(const uint8_t *data, size_t size)
{
	unsigned n = 0;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n + (size && data[size - 1] != '\n');
}

static void check_event(const struct wl_trace *t, const struct wl_event *ev,
			bool *live)
{
	if (ev->op == WL_ALLOC || ev->op == WL_FREE || ev->op == WL_RECORD_STREAM) {
		if (ev->slot >= t->nslots)
			abort();
		if (live[ev->slot] != (ev->op != WL_ALLOC))
			abort();
		if (ev->op != WL_RECORD_STREAM)
			live[ev->slot] = ev->op == WL_ALLOC;
	}
	if (ev->device < 0 || ev->device > t->max_device)
		abort();
	if (ev->stream >= (int32_t)t->nstreams || ev->stream < -(ev->op == WL_SYNC))
		abort();
	if (ev->op == WL_FRACTION && !(ev->fraction >= 0.0 && ev->fraction <= 1.0))
		abort();
}

static void check_accepted(const struct wl_trace *t, unsigned lines)
{
	bool *live = calloc(t->nslots + 1, sizeof(*live));
	uint32_t prev = 0;

	if (live == NULL)
		return;
	if (t->max_device >= WL_MAX_DEVICES || t->nstreams == 0 ||
	    t->stream_number[0] != 0)
		abort();
	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *ev = &t->events[i];
		if (ev->line == 0 || ev->line > lines || ev->line <= prev)
			abort();
		prev = ev->line;
		check_event(t, ev, live);
	}
	for (uint32_t s = 0; s < t->nstreams; s++)
		if (t->stream_number[s] < 0 || t->stream_number[s] > t->max_stream)
			abort();
	free(live);
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

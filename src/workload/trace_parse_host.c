/*
 * trace_parse_host.c - the pinned host lines of a trace (torch_npu's
 * pinned host allocator):
 *
 *     pin ID SIZE [stream=S] [device=D]   pin_memory() while stream S of
 *                                         device D is current
 *     unpin ID                            the pinned tensor's deleter
 *     copy ID STREAM [device=D]           a non-blocking copy between
 *                                         pinned ID and device memory on
 *                                         STREAM (either direction)
 *     host_empty_cache
 *
 * Pinned IDs are a namespace of their own: a pinned tensor and a device
 * tensor are different things even when a trace names them alike. As for
 * device IDs, the whole order is checked here: a pin of a live pinned ID,
 * an unpin or copy of one that is not live, are bad lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/size_parse.h"
#include "trace_parse_impl.h"

struct pin_entry {
	UT_hash_handle hh;
	uint32_t slot;
	bool live;
	bool live_at_loop;
	unsigned line;  /* where it was last pinned or unpinned */
	char key[];
};

static struct pin_entry *find_pin(struct parser *p, const char *key)
{
	struct pin_entry *e;

	HASH_FIND_STR(p->pins, key, e);
	return e;
}

static int new_pin(struct parser *p, const char *key, struct pin_entry **out)
{
	size_t len = strlen(key);
	struct pin_entry *e;

	if (p->t->npins == UINT32_MAX)
		return wl_parse_bad(p, "too many pinned ids");
	e = calloc(1, sizeof(*e) + len + 1);
	if (e == NULL)
		return -ENOMEM;
	memcpy(e->key, key, len + 1);
	e->slot = p->t->npins++;
	HASH_ADD_KEYPTR(hh, p->pins, e->key, len, e);
	*out = e;
	return 0;
}

static int live_pin(struct parser *p, const char *cmd, const char *key,
		    struct pin_entry **out)
{
	struct pin_entry *e = find_pin(p, key);

	if (e == NULL)
		return wl_parse_bad(p, "%s of unknown pinned id '%s'", cmd, key);
	if (!e->live)
		return wl_parse_bad(p, "%s of pinned id '%s', unpinned on line %u", cmd, key,
				    e->line);
	*out = e;
	return 0;
}

int wl_parse_pin(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	struct pin_entry *e;
	int rc = wl_parse_check_fields(p, f, nf, 3, 3 + 2, nf < 2 ? "ID SIZE" : "SIZE");

	if (rc == 0 && npa_parse_size(f[2], &ev->size) != 0)
		rc = wl_parse_bad(p, "bad size '%s'", f[2]);
	if (rc == 0)
		rc = wl_parse_options(p, f + 3, nf - 3, OPT_STREAM | OPT_DEVICE, &o);
	if (rc == 0 && o.stream > 0) {
		struct stream_entry *s;
		if ((rc = wl_parse_stream_entry(p, o.stream, &s)) == 0)
			ev->stream = s->index;
	}
	if (rc)
		return rc;
	e = find_pin(p, f[1]);
	if (e && e->live)
		return wl_parse_bad(p, "pinned id '%s' is already pinned (line %u)", f[1], e->line);
	if (e == NULL && (rc = new_pin(p, f[1], &e)) != 0)
		return rc;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	ev->slot = e->slot;
	e->live = true;
	e->line = p->line;
	return 0;
}

int wl_parse_unpin(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct pin_entry *e = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "ID");

	if (rc == 0)
		rc = live_pin(p, "unpin", f[1], &e);
	if (rc)
		return rc;
	ev->slot = e->slot;
	e->live = false;
	e->line = p->line;
	return 0;
}

int wl_parse_copy(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	struct pin_entry *e = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 3, 4, nf < 2 ? "ID STREAM" : "STREAM");

	if (rc == 0)
		rc = wl_parse_stream(p, f[2], &ev->stream);
	if (rc == 0)
		rc = wl_parse_options(p, f + 3, nf - 3, OPT_DEVICE, &o);
	if (rc == 0)
		rc = live_pin(p, "copy", f[1], &e);
	if (rc)
		return rc;
	ev->slot = e->slot;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	return 0;
}

void wl_parse_host_loop_start(struct parser *p)
{
	struct pin_entry *e, *tmp;

	HASH_ITER(hh, p->pins, e, tmp)
		e->live_at_loop = e->live;
}

int wl_parse_host_check_loop(struct parser *p)
{
	struct pin_entry *e, *tmp;

	HASH_ITER(hh, p->pins, e, tmp) {
		if (e->live == e->live_at_loop)
			continue;
		p->line = p->loop_line;
		return wl_parse_bad(p, "the lines after loop_start must leave pinned what they "
				    "found pinned: pinned id '%s' is %s at the end (line %u)",
				    e->key, e->live ? "pinned" : "unpinned", e->line);
	}
	return 0;
}

void wl_parse_host_release(struct parser *p)
{
	struct pin_entry *e, *tmp;

	WL_HASH_FREE_ALL(p->pins, e, tmp);
}

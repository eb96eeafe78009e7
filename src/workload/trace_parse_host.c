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

#include "trace_parse_impl.h"

static int live_pin(struct parser *p, const char *cmd, const char *key, uint32_t *out)
{
	int64_t i = wl_ids_find(&p->pins, key);
	unsigned line;

	if (i >= 0 && !p->pins.st[i].live)
		return wl_parse_bad(p, "%s of pinned id '%s', unpinned on line %u", cmd, key,
				    p->pins.st[i].line);
	if (i >= 0) {
		*out = (uint32_t)i;
		return 0;
	}
	if (wl_ids_forgotten_line(p, &p->pins, key, &line) != 0)
		return wl_parse_bad(p, "%s of pinned id '%s', which is not pinned: unknown, or "
				    "unpinned before the last %d unpins (a trace read from a "
				    "pipe remembers no more)", cmd, key, WL_FREED_KEPT);
	if (line == 0)
		return wl_parse_bad(p, "%s of unknown pinned id '%s'", cmd, key);
	return wl_parse_bad(p, "%s of pinned id '%s', unpinned on line %u", cmd, key, line);
}

int wl_parse_pin(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	uint32_t i;
	int rc = wl_parse_sized(p, f, nf, ev, &o);

	if (rc == 0)
		rc = wl_ids_take(p, &p->pins, f[1], "pinned id", "pinned", &i);
	if (rc)
		return rc;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	ev->slot = (uint32_t)i;
	p->pins.st[i].live = true;
	p->pins.st[i].line = p->line;
	return 0;
}

int wl_parse_unpin(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	uint32_t i = 0;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "ID");

	if (rc == 0)
		rc = live_pin(p, "unpin", f[1], &i);
	if (rc)
		return rc;
	ev->slot = i;
	p->pins.st[i].live = false;
	p->pins.st[i].line = p->line;
	wl_ids_died(&p->pins, i);
	return 0;
}

int wl_parse_copy(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct options o;
	uint32_t i = 0;
	int rc = wl_parse_check_fields(p, f, nf, 3, 4, nf < 2 ? "ID STREAM" : "STREAM");

	if (rc == 0)
		rc = wl_parse_stream(p, f[2], &ev->stream);
	if (rc == 0)
		rc = wl_parse_options(p, f + 3, nf - 3, OPT_DEVICE, &o);
	if (rc == 0)
		rc = live_pin(p, "copy", f[1], &i);
	if (rc)
		return rc;
	ev->slot = i;
	ev->device = (int16_t)(o.device < 0 ? 0 : o.device);
	return 0;
}

void wl_parse_host_loop_start(struct parser *p)
{
	wl_ids_loop_start(&p->pins);
}

int wl_parse_host_check_loop(struct parser *p)
{
	uint32_t i;

	if (wl_ids_loop_mismatch(p, &p->pins, &i) != 0)
		return 0;
	p->line = p->loop_line;
	return wl_parse_bad(p, "the lines after loop_start must leave pinned what they "
			    "found pinned: pinned id '%s' is %s at the end (line %u)",
			    str_table_key(&p->pins.names, i),
			    p->pins.st[i].live ? "pinned" : "unpinned", p->pins.st[i].line);
}

void wl_parse_host_release(struct parser *p)
{
	wl_ids_release(&p->pins);
}

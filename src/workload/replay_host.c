/*
 * replay_host.c - the pinned host lines of a replay (pin, unpin, copy,
 * host_empty_cache), against the target's pinned host allocator.
 *
 * The host allocator is the caching allocator's, whatever device
 * allocator is current: torch_npu keeps its pinned allocator when a
 * plug-in takes device allocations. A copy does what the mount's ctl/copy
 * does: open-ended work on the stream (the copy in flight until a sync),
 * then the block records the stream, so an unpin before the sync leaves
 * the block pending. A pin the host cannot hold is counted, as a device
 * OOM is, and its later lines are skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <npumemfs/npusim.h>

#include "alloc/host/host_allocator.h"
#include "replay_impl.h"

static const char pin_oom_marker;
#define PIN_OOMED ((void *)&pin_oom_marker)

int wl_replay_host_grow(struct wl_replay *r)
{
	uint32_t cap = r->pin_cap;
	int rc = wl_replay_grow(&r->pinned, &r->pin_cap, r->t->npins, sizeof(*r->pinned));

	/* pinned_size follows pinned's capacity; if it cannot, pin_cap goes
	 * back to what both hold (the walks over the pins trust it). */
	if (rc == 0)
		rc = wl_replay_grow(&r->pinned_size, &cap, r->pin_cap, sizeof(*r->pinned_size));
	if (rc != 0)
		r->pin_cap = cap;
	return rc;
}

static struct npa_host *host(struct wl_replay *r)
{
	return r->a.ops->host(r->a.self);
}

static int host_fail(struct wl_replay *r, const struct wl_event *ev, aclError e,
		     const char *call, char *err, size_t errlen)
{
	snprintf(r->msg, sizeof(r->msg), "%s failed with ACL error %d", call, e);
	return wl_replay_fail(r, ev, -EIO, err, errlen, r->msg);
}

static void requested_add(struct wl_replay *r, int64_t bytes)
{
	r->c.pinned_requested += (uint64_t)bytes;
	if (r->c.pinned_requested > r->c.pinned_requested_peak)
		r->c.pinned_requested_peak = r->c.pinned_requested;
}

void wl_replay_on_pin(struct wl_replay *r, wl_pin_fn fn, void *arg)
{
	r->on_pin = fn;
	r->on_pin_arg = arg;
}

/* Serials grow as blocks are made, so a pin's block is new if none
 * before it had as high a number. */
static void tell_pin(struct wl_replay *r, const struct wl_event *ev, void *p)
{
	struct wl_pin_served s = { .line = ev->line, .size = ev->size,
				   .refused = p == PIN_OOMED };

	if (r->on_pin == NULL)
		return;
	if (p != NULL && !s.refused) {
		s.block = npa_host_block_serial(host(r), p);
		s.block_size = npa_host_block_size(host(r), p);
		s.fresh = s.block > r->newest_block;
		if (s.fresh)
			r->newest_block = s.block;
	}
	r->on_pin(r->on_pin_arg, &s);
}

static int do_pin(struct wl_replay *r, const struct wl_event *ev, char *err, size_t errlen)
{
	aclrtStream s;
	aclError e;
	int rc = wl_replay_stream(r, ev, ev->device, ev->stream, &s, err, errlen);

	if (rc)
		return rc;
	if ((e = aclrtSetDevice(ev->device)) != ACL_SUCCESS)
		return host_fail(r, ev, e, "aclrtSetDevice", err, errlen);
	rc = npa_host_malloc(host(r), ev->size, s, &r->pinned[ev->slot], r->msg, sizeof(r->msg));
	if (rc == -ENOMEM) {
		r->pinned[ev->slot] = PIN_OOMED;
		r->c.pin_ooms++;
		tell_pin(r, ev, PIN_OOMED);
		return 0;
	}
	if (rc)
		return wl_replay_fail(r, ev, rc, err, errlen, r->msg);
	r->pinned_size[ev->slot] = ev->size;
	requested_add(r, (int64_t)ev->size);
	r->c.pins++;
	tell_pin(r, ev, r->pinned[ev->slot]);
	return 0;
}

static void unpin_slot(struct wl_replay *r, uint32_t slot)
{
	void *p = r->pinned[slot];

	r->pinned[slot] = NULL;
	if (p == NULL || p == PIN_OOMED)
		return;
	npa_host_free(host(r), p, NULL, 0);
	r->c.pinned_requested -= r->pinned_size[slot];
	r->pinned_size[slot] = 0;
}

/* The copy is work on the stream until it syncs, then the block records
 * the stream (CachingHostAllocator_recordEvent). */
static int do_copy(struct wl_replay *r, const struct wl_event *ev, char *err, size_t errlen)
{
	void *p = r->pinned[ev->slot];
	aclrtStream s;
	aclError e;
	int rc;

	if (p == NULL || p == PIN_OOMED)
		return 0;
	if ((rc = wl_replay_stream(r, ev, ev->device, ev->stream, &s, err, errlen)) != 0)
		return rc;
	if ((e = aclrtSetDevice(ev->device)) != ACL_SUCCESS)
		return host_fail(r, ev, e, "aclrtSetDevice", err, errlen);
	if ((e = npusim_launch_open(s)) != ACL_SUCCESS)
		return host_fail(r, ev, e, "npusim_launch_open", err, errlen);
	if (npa_host_record_event(host(r), p, s) < 0)
		return wl_replay_fail(r, ev, -ENOMEM, err, errlen, "record_event: out of memory");
	r->c.copies++;
	return 0;
}

int wl_replay_host_event(struct wl_replay *r, const struct wl_event *ev, char *err,
			 size_t errlen)
{
	switch ((enum wl_op)ev->op) {
	case WL_PIN:
		return do_pin(r, ev, err, errlen);
	case WL_UNPIN:
		unpin_slot(r, ev->slot);
		return 0;
	case WL_COPY:
		return do_copy(r, ev, err, errlen);
	case WL_HOST_EMPTY_CACHE:
		npa_host_empty_cache(host(r));
		return 0;
	default:
		return wl_replay_fail(r, ev, -EINVAL, err, errlen, "not a pinned host event");
	}
}

void wl_replay_host_release(struct wl_replay *r)
{
	for (uint32_t i = 0; r->pinned != NULL && i < r->pin_cap; i++)
		unpin_slot(r, i);
}

void wl_replay_host_free(struct wl_replay *r)
{
	free(r->pinned);
	free(r->pinned_size);
}

/*
 * replay.c - carrying out a checked trace against an allocator (a target:
 * the caching allocator, or the allocator switch).
 *
 * The loop does no allocation, formatting or lookup per event: IDs are
 * slots in an array of pointers, streams an array indexed by (device,
 * dense stream). Messages are made only when something fails.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl_rt.h>
#include <npumemfs/npusim.h>
#include "base/mem_populate.h"
#include "replay_impl.h"

/* How many events run between two looks at the stop flag. */
#define STOP_CHECK_INTERVAL 1024

/* The slot of an ID whose allocation was refused: its free is skipped. */
static const char oom_marker;
#define OOMED ((void *)&oom_marker)

int wl_replay_fail(struct wl_replay *r, const struct wl_event *ev, int rc, char *err,
		   size_t errlen, const char *what)
{
	if (err)
		snprintf(err, errlen, "%s:%u: %s", r->t->name, ev->line, what);
	return rc;
}

static int acl_fail(struct wl_replay *r, const struct wl_event *ev, aclError e,
		    const char *call, char *err, size_t errlen)
{
	snprintf(r->msg, sizeof(r->msg), "%s failed with ACL error %d", call, e);
	return wl_replay_fail(r, ev, -EIO, err, errlen, r->msg);
}

/* An allocator call that gives no message of its own: 0, or rc with one. */
static int refused(struct wl_replay *r, const struct wl_event *ev, int rc,
		   const char *what, char *err, size_t errlen)
{
	if (rc == 0)
		return 0;
	snprintf(r->msg, sizeof(r->msg), "%s failed: %s", what, npa_control_strerror(rc));
	return wl_replay_fail(r, ev, rc, err, errlen, r->msg);
}

/* The events that choose a device; the others inherit theirs. */
static bool names_a_device(uint16_t op)
{
	return op == WL_ALLOC || op == WL_FRACTION || op == WL_CAPTURE_BEGIN ||
	       op == WL_MEMPOOL_CREATE || op == WL_LAUNCH_OP ||
	       op == WL_PIN || op == WL_COPY;
}

static int check_devices(struct allocator a, const struct wl_trace *t, char *err,
			 size_t errlen)
{
	int count = a.ops->device_count(a.self);

	/* The highest device of every line read so far: mostly no event to look at. */
	if (t->max_device < count)
		return 0;
	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *ev = &t->events[i];
		if (names_a_device(ev->op) && ev->device >= count) {
			if (err)
				snprintf(err, errlen, "%s:%u: device %d does not exist (%d device%s)",
					 t->name, ev->line, ev->device, count,
					 count == 1 ? "" : "s");
			return -EINVAL;
		}
	}
	return 0;
}

int wl_replay_new(struct npa *a, const struct wl_trace *t, struct wl_replay **out,
		  char *err, size_t errlen)
{

	return wl_replay_new_target(npa_allocator(a), t, out, err, errlen);
}

int wl_replay_grow(void *a, uint32_t *cap, uint32_t need, size_t size)
{
	void **arr = a;
	uint32_t n = *cap;
	char *grown;

	if (need <= n && *arr != NULL)
		return 0;
	n = need > 2 * n ? need : 2 * n;
	if (n == 0)
		n = 1;
	if (mem_grow(a, (size_t)*cap * size, (size_t)n * size) != 0)
		return -ENOMEM;
	grown = *arr;
	memset(grown + (size_t)*cap * size, 0, (size_t)(n - *cap) * size);
	*cap = n;
	return 0;
}

/* Room for every ID, stream, graph, pool and pinned ID the trace named. */
static int grow_all(struct wl_replay *r)
{
	const struct wl_trace *t = r->t;
	uint32_t old = r->slot_cap, cap = old, ncap = r->stream_cap * NPA_MAX_DEVICES;
	int rc = wl_replay_grow(&r->ptr, &r->slot_cap, t->nslots, sizeof(*r->ptr));

	/* The other per-slot arrays follow ptr's capacity. One that cannot
	 * takes slot_cap back to what they all hold: every walk over the
	 * slots (release_all, free) trusts it for each of them. */
	if (rc == 0)
		rc = wl_replay_grow(&r->last_use, &cap, r->slot_cap, sizeof(*r->last_use));
	if (rc == 0 && t->has_complete) {
		cap = r->done ? old : 0;
		rc = wl_replay_grow(&r->done, &cap, r->slot_cap, sizeof(*r->done));
	}
	if (rc != 0)
		r->slot_cap = old;
	if (rc == 0 && t->nstreams > r->stream_cap) {
		rc = wl_replay_grow(&r->streams, &ncap, t->nstreams * NPA_MAX_DEVICES,
				    sizeof(*r->streams));
		r->stream_cap = ncap / NPA_MAX_DEVICES;
	}
	if (rc == 0)
		rc = wl_replay_pools_grow(r);
	if (rc == 0)
		rc = wl_replay_host_grow(r);
	if (t->max_device + 1 > r->ndevices)
		r->ndevices = t->max_device + 1;
	return rc;
}

/* A replay without the memory it needs: "TRACE: reason", and rc back. */
static int no_room(const struct wl_trace *t, int rc, char *err, size_t errlen)
{
	if (err)
		snprintf(err, errlen, "%s: %s", t->name, strerror(-rc));
	return rc;
}

int wl_replay_follow(struct wl_replay *r, char *err, size_t errlen)
{
	int rc = check_devices(r->a, r->t, err, errlen);

	if (rc == 0 && (rc = grow_all(r)) != 0)
		return no_room(r->t, rc, err, errlen);
	return rc;
}

int wl_replay_new_target(struct allocator target, const struct wl_trace *t,
			 struct wl_replay **out, char *err, size_t errlen)
{
	struct wl_replay *r;
	int rc = check_devices(target, t, err, errlen);

	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return no_room(t, -ENOMEM, err, errlen);
	r->a = target;
	r->t = t;
	for (int op = 0; op < WL_NOPS; op++)
		r->op_names[op] = wl_op_name(op);
	if ((rc = grow_all(r)) != 0) {
		wl_replay_free(r);
		return no_room(t, rc, err, errlen);
	}
	*out = r;
	return 0;
}

void wl_replay_set_check(struct wl_replay *r, bool check)
{
	r->check = check && r->a.ops->check != NULL;
}

/* The stream for (device, dense index), created on first use; index 0 is
 * the device's default stream, a handle of its own as torch_npu's. */
static aclError get_stream(struct wl_replay *r, int device, int32_t index,
			   aclrtStream *out)
{
	aclrtStream *s = wl_replay_stream_at(r, device, index);
	aclError e;

	if (index == 0) {
		*out = npusim_default_stream(device);
		return *out != NULL ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
	}
	if (*s != NULL) {
		*out = *s;
		return ACL_SUCCESS;
	}
	if ((e = aclrtSetDevice(device)) != ACL_SUCCESS || (e = aclrtCreateStream(s)) != ACL_SUCCESS)
		return e;
	/* Trace stream S is the S-th stream a fresh process takes from the
	 * pool; the allocator orders pending events by that stream's hash. */
	if (allocator_set_stream_number(r->a, *s, device, r->t->stream_number[index]) != 0)
		return ACL_ERROR_BAD_ALLOC;
	*out = *s;
	return ACL_SUCCESS;
}

int wl_replay_stream(struct wl_replay *r, const struct wl_event *ev, int device,
		     int32_t index, aclrtStream *out, char *err, size_t errlen)
{
	aclError e = get_stream(r, device, index, out);

	return e == ACL_SUCCESS ? 0 : acl_fail(r, ev, e, "aclrtCreateStream", err, errlen);
}

static int do_alloc(struct wl_replay *r, const struct wl_event *ev, char *err,
		    size_t errlen)
{
	/* The default stream, most allocations', without the calls that
	 * make a stream or say why one cannot be had. */
	aclrtStream s = ev->stream == 0 ? npusim_default_stream(ev->device) : NULL;
	int rc = s ? 0 : wl_replay_stream(r, ev, ev->device, ev->stream, &s, err, errlen);

	if (rc)
		return rc;
	rc = r->a.ops->malloc(r->a.self, ev->device, ev->size, s, &r->ptr[ev->slot],
			    r->msg, sizeof(r->msg));
	if (rc == 0) {
		r->c.allocs++;
		return 0;
	}
	r->ptr[ev->slot] = NULL;
	if (rc != -ENOMEM)
		return wl_replay_fail(r, ev, rc, err, errlen, r->msg);
	r->ptr[ev->slot] = OOMED;
	r->c.ooms++;
	return 0;
}

/* The events a complete line will wait on, one per stream of the free. */
static void drop_done(struct wl_replay *r, uint32_t slot)
{
	aclrtEvent *ev = r->done[slot];

	if (ev == NULL) /* most frees: no call */
		return;
	for (size_t i = 0; ev[i] != NULL; i++)
		aclrtDestroyEvent(ev[i]);
	free(ev);
	r->done[slot] = NULL;
}

/* Event n of the slot's free, recorded on `s` now (after its open work). */
static aclError mark_done_point(struct wl_replay *r, uint32_t slot, unsigned n,
				aclrtStream s)
{
	aclrtEvent *ev = realloc(r->done[slot], (n + 2) * sizeof(*ev));
	aclError e;

	if (ev == NULL)
		return ACL_ERROR_BAD_ALLOC;
	ev[n] = ev[n + 1] = NULL;
	r->done[slot] = ev;
	if ((e = aclrtCreateEvent(&ev[n])) != ACL_SUCCESS)
		return e;
	if ((e = aclrtRecordEvent(ev[n], s)) != ACL_SUCCESS) {
		aclrtDestroyEvent(ev[n]);
		ev[n] = NULL;
	}
	return e;
}

/*
 * complete ID: the work the ID's free waits for is done. Synchronizing the
 * event recorded behind it ends that open work (and what came before it
 * on the stream), so the next alloc returns the block, as the allocator
 * would process its events there.
 */
static int do_complete(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	aclrtEvent *done = r->done[ev->slot];
	aclError e = ACL_SUCCESS;

	for (size_t i = 0; done != NULL && done[i] != NULL && e == ACL_SUCCESS; i++)
		e = aclrtSynchronizeEvent(done[i]);
	drop_done(r, ev->slot);
	return e == ACL_SUCCESS ? 0 : acl_fail(r, ev, e, "aclrtSynchronizeEvent", err, errlen);
}

/*
 * Work on a stream is outstanding until that stream is synchronized: open
 * work launched on each stream the ID was record_stream'ed to, just before
 * its free records events there, makes those events wait for the next
 * sync. A stream that captures now is left alone (the free's events wait
 * for the capture's end, and captured work is not real work). Kernel work
 * has no ACL call, so this is the one place workload asks the simulator
 * itself (npusim.h).
 */
static int launch_uses(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	const struct wl_stream_use *use;
	aclrtStream s;
	aclError e;
	unsigned n = 0;

	if (r->done != NULL)
		drop_done(r, ev->slot); /* an earlier life's, never completed */
	for (uint32_t k = r->last_use[ev->slot]; k != 0; k = use->prev) {
		use = &r->uses[k - 1];
		s = *wl_replay_stream_at(r, use->device, use->stream);
		if ((e = aclrtSetDevice(use->device)) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "aclrtSetDevice", err, errlen);
		if (npusim_stream_capture_id(s) != 0)
			continue;
		if ((e = npusim_launch_open(s)) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "npusim_launch_open", err, errlen);
		if (r->done != NULL && (e = mark_done_point(r, ev->slot, n++, s)) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "aclrtRecordEvent", err, errlen);
	}
	return 0;
}

/* The slot's record_streams go back for others. */
static void forget_uses(struct wl_replay *r, uint32_t slot)
{
	uint32_t k = r->last_use[slot];

	while (k != 0) {
		uint32_t prev = r->uses[k - 1].prev;
		r->uses[k - 1].prev = r->free_use;
		r->free_use = k;
		k = prev;
	}
	r->last_use[slot] = 0;
}

/* Remember that the slot's free launches work on the event's stream. */
static int note_use(struct wl_replay *r, const struct wl_event *ev)
{
	uint32_t k = r->free_use;

	if (k == 0) {
		uint32_t old = r->nuses, cap = old;
		if (old == UINT32_MAX - 1 ||
		    wl_replay_grow(&r->uses, &cap, old + 1, sizeof(*r->uses)) != 0)
			return -ENOMEM;
		/* uses[old] is taken now; the rest of the new room is free. */
		for (uint32_t i = cap; i > old + 1; i--) {
			r->uses[i - 1].prev = r->free_use;
			r->free_use = i;
		}
		r->nuses = cap;
		k = old + 1;
	} else {
		r->free_use = r->uses[k - 1].prev;
	}
	r->uses[k - 1] = (struct wl_stream_use){ .stream = ev->stream, .device = ev->device,
						 .prev = r->last_use[ev->slot] };
	r->last_use[ev->slot] = k;
	return 0;
}

static int do_free(struct wl_replay *r, const struct wl_event *ev, char *err,
		   size_t errlen)
{
	void *p = r->ptr[ev->slot];
	int rc;

	r->ptr[ev->slot] = NULL;
	if (p == OOMED) {
		r->c.skipped_frees++;
		return 0;
	}
	/* A size-0 allocation is NULL, and freeing NULL does nothing upstream. */
	rc = p != NULL ? launch_uses(r, ev, err, errlen) : 0;
	forget_uses(r, ev->slot);
	if (rc)
		return rc;
	if (p != NULL && (rc = r->a.ops->free(r->a.self, p, r->msg, sizeof(r->msg))) != 0)
		return wl_replay_fail(r, ev, rc, err, errlen, r->msg);
	r->c.frees++;
	return 0;
}

/*
 * The live pointer and the stream of a record_stream or erase_stream line:
 * 1 when there is nothing to do (the ID's allocation failed, or it is
 * NULL), 0 with *p and *s set, or an error.
 */
static int stream_use_of(struct wl_replay *r, const struct wl_event *ev, void **p,
			 aclrtStream *s, char *err, size_t errlen)
{
	*p = r->ptr[ev->slot];
	if (*p == OOMED) {
		r->c.skipped_record_streams++;
		return 1;
	}
	if (*p == NULL)
		return 1;
	return wl_replay_stream(r, ev, ev->device, ev->stream, s, err, errlen);
}

static int do_record_stream(struct wl_replay *r, const struct wl_event *ev,
			    char *err, size_t errlen)
{
	void *p;
	aclrtStream s;
	aclError e;
	int rc = stream_use_of(r, ev, &p, &s, err, errlen);

	if (rc != 0)
		return rc > 0 ? 0 : rc;
	if ((e = aclrtSetDevice(ev->device)) != ACL_SUCCESS)
		return acl_fail(r, ev, e, "aclrtSetDevice", err, errlen);
	if (note_use(r, ev) != 0)
		return wl_replay_fail(r, ev, -ENOMEM, err, errlen, "out of memory");
	return refused(r, ev, r->a.ops->record_stream(r->a.self, p, s), "record_stream",
		       err, errlen);
}

/* No work is launched: erasing says the stream's use of it is over. */
static int do_erase_stream(struct wl_replay *r, const struct wl_event *ev,
			   char *err, size_t errlen)
{
	void *p;
	aclrtStream s;
	int rc = stream_use_of(r, ev, &p, &s, err, errlen);

	if (rc != 0)
		return rc > 0 ? 0 : rc;
	return refused(r, ev, r->a.ops->erase_stream(r->a.self, p, s), "erase_stream",
		       err, errlen);
}

static int sync_all_devices(struct wl_replay *r, const struct wl_event *ev,
			    char *err, size_t errlen)
{
	int count = r->a.ops->device_count(r->a.self);
	aclError e;

	for (int d = 0; d < count; d++) {
		if ((e = aclrtSetDevice(d)) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "aclrtSetDevice", err, errlen);
		if ((e = aclrtSynchronizeDevice()) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "aclrtSynchronizeDevice", err, errlen);
	}
	return 0;
}

/* A stream number names one stream per device: synchronize each that exists. */
static int sync_stream(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	aclrtStream s;
	aclError e;

	for (int d = 0; d < r->ndevices; d++) {
		s = *wl_replay_stream_at(r, d, ev->stream);
		if (ev->stream != 0 && s == NULL)
			continue;
		if ((e = aclrtSetDevice(d)) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "aclrtSetDevice", err, errlen);
		if ((e = aclrtSynchronizeStream(ev->stream == 0 ? NULL : s)) != ACL_SUCCESS)
			return acl_fail(r, ev, e, "aclrtSynchronizeStream", err, errlen);
	}
	return 0;
}

/* A sync also frees the workspace of the operators it completed. */
static int do_sync(struct wl_replay *r, const struct wl_event *ev, char *err, size_t errlen)
{
	int rc = ev->stream < 0 ? sync_all_devices(r, ev, err, errlen)
				: sync_stream(r, ev, err, errlen);

	if (rc == 0)
		wl_replay_reap_ops(r);
	return rc;
}

static int do_fraction(struct wl_replay *r, const struct wl_event *ev, char *err,
		       size_t errlen)
{
	int rc = r->a.ops->set_fraction(r->a.self, ev->device, ev->fraction, r->msg,
				      sizeof(r->msg));

	return rc ? wl_replay_fail(r, ev, rc, err, errlen, r->msg) : 0;
}

/* The built-in allocator's, current or not, as ctl/empty_virt_addr_cache;
 * without expandable segments it refuses with upstream's text. A replay
 * into a plug-in alone has no caching allocator to empty. */
static int do_empty_virt_addr_cache(struct wl_replay *r, const struct wl_event *ev,
				    char *err, size_t errlen)
{
	struct npa *a = r->a.ops->builtin(r->a.self);
	int rc = -ENOTSUP;

	if (a != NULL)
		rc = npa_empty_virt_addr_cache(a, -1, r->msg, sizeof(r->msg));
	else
		snprintf(r->msg, sizeof(r->msg), "empty_virt_addr_cache: no caching allocator "
			 "behind the plug-in");
	return rc ? wl_replay_fail(r, ev, rc, err, errlen, r->msg) : 0;
}

static int do_event(struct wl_replay *r, const struct wl_event *ev, char *err,
		    size_t errlen)
{
	switch ((enum wl_op)ev->op) {
	case WL_ALLOC:
		return do_alloc(r, ev, err, errlen);
	case WL_FREE:
		return do_free(r, ev, err, errlen);
	case WL_RECORD_STREAM:
		return do_record_stream(r, ev, err, errlen);
	case WL_COMPLETE:
		return do_complete(r, ev, err, errlen);
	case WL_ERASE_STREAM:
		return do_erase_stream(r, ev, err, errlen);
	case WL_SYNC:
		return do_sync(r, ev, err, errlen);
	case WL_EMPTY_CACHE:
		return refused(r, ev, r->a.ops->empty_cache(r->a.self, -1), "empty_cache",
			       err, errlen);
	case WL_EMPTY_VIRT_ADDR_CACHE:
		return do_empty_virt_addr_cache(r, ev, err, errlen);
	case WL_RESET_PEAK:
		return refused(r, ev, r->a.ops->reset_peak(r->a.self, -1), "reset_peak",
			       err, errlen);
	case WL_RESET_ACCUMULATED:
		return refused(r, ev, r->a.ops->reset_accumulated(r->a.self, -1),
			       "reset_accumulated", err, errlen);
	case WL_FRACTION:
		return do_fraction(r, ev, err, errlen);
	case WL_CAPTURE_BEGIN:
	case WL_CAPTURE_END:
	case WL_GRAPH_REPLAY:
	case WL_GRAPH_RESET:
	case WL_MEMPOOL_CREATE:
	case WL_MEMPOOL_BEGIN:
	case WL_MEMPOOL_END:
	case WL_MEMPOOL_RELEASE:
		return wl_replay_pool_event(r, ev, err, errlen);
	case WL_LAUNCH_OP:
		return wl_replay_launch_op(r, ev, err, errlen);
	case WL_PIN:
	case WL_UNPIN:
	case WL_COPY:
	case WL_HOST_EMPTY_CACHE:
		return wl_replay_host_event(r, ev, err, errlen);
	}
	return wl_replay_fail(r, ev, -EINVAL, err, errlen, "unknown event");
}

static int check_all(struct wl_replay *r, const struct wl_event *ev, char *err,
		     size_t errlen)
{
	char what[NPA_ERRLEN + 32];

	for (int d = 0; d < r->ndevices; d++) {
		int rc = r->a.ops->check(r->a.self, d, r->msg, sizeof(r->msg));
		if (rc) {
			snprintf(what, sizeof(what), "after this event: %s", r->msg);
			return wl_replay_fail(r, ev, rc, err, errlen, what);
		}
	}
	return 0;
}

static bool stop_requested(const atomic_bool *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed);
}

int wl_replay_run(struct wl_replay *r, size_t from, size_t to,
		  const atomic_bool *stop, char *err, size_t errlen)
{
	const struct wl_event *ev = r->t->events;
	size_t i = from;
	int rc = 0;
	/* Each event's allocator calls come from its line: two stores an
	 * event, read only while a history is recorded. */
	struct npa_frame origin = { .filename = r->t->name };
	const struct npa_frame *caller = npa_origin();

	npa_set_origin(&origin);
	if (to > r->t->nevents)
		to = r->t->nevents;
	while (i < to && rc == 0) {
		size_t end = to - i > STOP_CHECK_INTERVAL ? i + STOP_CHECK_INTERVAL : to;
		if (stop_requested(stop)) {
			rc = -ECANCELED;
			break;
		}
		for (; i < end; i++) {
			origin.line = ev[i].line;
			origin.name = r->op_names[ev[i].op];
			rc = do_event(r, &ev[i], err, errlen);
			if (rc == 0 && r->check)
				rc = check_all(r, &ev[i], err, errlen);
			if (rc)
				break;
		}
	}
	npa_set_origin(caller);
	r->c.events += i - from;
	r->c.position = i;
	return rc;
}

void wl_replay_release_all(struct wl_replay *r)
{
	const struct npa_frame origin = { .filename = r->t->name, .name = "end_of_trace" };
	const struct npa_frame *caller = npa_origin();

	npa_set_origin(&origin);
	for (uint32_t i = 0; i < r->slot_cap; i++) {
		void *p = r->ptr[i];
		r->ptr[i] = NULL;
		if (p != NULL && p != OOMED)
			r->a.ops->free(r->a.self, p, NULL, 0);
		if (r->done != NULL)
			drop_done(r, i);
		forget_uses(r, i);
	}
	wl_replay_pools_release(r);
	wl_replay_ops_release(r);
	wl_replay_host_release(r);
	npa_set_origin(caller);
}

void wl_replay_counters(const struct wl_replay *r, struct wl_replay_counters *out)
{
	*out = r->c;
}

void wl_replay_free(struct wl_replay *r)
{
	if (r == NULL)
		return;
	/* A graph still capturing holds its stream, which could not go. */
	wl_replay_pools_free(r);
	wl_replay_ops_free(r);
	wl_replay_host_free(r);
	for (int d = 0; r->streams && d < r->ndevices; d++) {
		for (uint32_t k = 1; k < r->stream_cap; k++) {
			aclrtStream s = *wl_replay_stream_at(r, d, (int32_t)k);
			if (s == NULL)
				continue;
			allocator_set_stream_number(r->a, s, d, -1);
			aclrtSetDevice(d);
			aclrtSynchronizeStream(s);
			aclrtDestroyStream(s);
		}
	}
	for (uint32_t i = 0; r->done != NULL && i < r->slot_cap; i++)
		drop_done(r, i);
	free(r->done);
	free(r->last_use);
	free(r->uses);
	free(r->streams);
	free(r->ptr);
	free(r);
}

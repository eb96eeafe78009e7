/*
 * memory_history.c - upstream's _record_memory_history: a ring of trace
 * entries per device, written under the device lock and copied out whole.
 *
 * The ring is allocated when recording starts, so recording itself never
 * allocates; with recording off there is no ring and nothing is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc/allocator.h"
#include "alloc/core/stream_id.h"

#include "devices.h"

/* upstream getApproximateTime converted to µs since the epoch. */
static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct npa_frame npa_history_frame(struct npa_device *dev, const struct npa_frame *fallback)
{
	const struct npa_frame *o = npa_origin();
	struct npa_history *h = &dev->history;

	if (o == NULL || o->filename == NULL)
		return fallback != NULL ? *fallback : (struct npa_frame){ 0 };
	if (h->last_file == NULL || strcmp(h->last_file, o->filename) != 0)
		h->last_file = npa_frame_names_intern(dev->names, o->filename);
	return (struct npa_frame){ .filename = h->last_file, .name = o->name, .line = o->line };
}

struct npa_frame npa_history_add(struct npa_device *dev, enum npa_trace_action action,
				 uint64_t addr, uint64_t size, aclrtStream stream,
				 struct npa_pool_id pool, const struct npa_frame *fallback)
{
	struct npa_history *h = &dev->history;
	struct npa_frame frame = npa_history_frame(dev, fallback);

	h->ring[h->recorded % h->cap] = (struct npa_trace_entry){
		.action = action, .addr = addr, .size = size,
		.stream = npa_stream_id(stream), .pool_id = { pool.first, pool.second },
		.time_us = now_us(), .frame = frame,
	};
	__atomic_store_n(&h->recorded, h->recorded + 1, __ATOMIC_RELEASE);
	return frame;
}

void npa_history_fini(struct npa_device *dev)
{
	free(dev->history.ring);
	memset(&dev->history, 0, sizeof(dev->history));
}

/* Recording off forgets where blocks and segments came from, so a block
 * made while off never shows a frame left from an earlier allocation. */
static void forget_frames(struct npa_device *dev)
{
	struct npa_segment *seg;

	RB_FOREACH(seg, npa_segment_tree, &dev->segments) {
		seg->frame = (struct npa_frame){ 0 };
		for (struct npa_block *b = seg->head; b != NULL; b = b->next)
			b->frame = (struct npa_frame){ 0 };
	}
}

/* A new ring for one device. Its entries start afresh: the numbers readers
 * wait on must not run backwards into a ring of another size. */
static void history_set(struct npa_device *dev, struct npa_trace_entry *ring, size_t cap,
			bool all)
{
	npa_device_lock(dev);
	struct npa_trace_entry *old = dev->history.ring;

	if (ring == NULL)
		forget_frames(dev);
	dev->history.ring = ring;
	dev->history.cap = cap;
	dev->history.all = all;
	__atomic_store_n(&dev->history.recorded, 0, __ATOMIC_RELEASE);
	npa_lock_release(&dev->lock);
	free(old);
}

static int parse_enabled(const char *enabled, bool *on, bool *all)
{
	*on = enabled != NULL;
	*all = *on && strcmp(enabled, "all") == 0;
	if (*on && !*all && strcmp(enabled, "state") != 0)
		return -EINVAL;
	return 0;
}

int npa_record_memory_history(struct npa *a, int device, const char *enabled,
			      size_t max_entries)
{
	bool on, all;

	if (device < -1 || device >= a->ndev)
		return -ENODEV;
	if (parse_enabled(enabled, &on, &all) < 0 || (all && max_entries == 0))
		return -EINVAL;
	size_t cap = !on ? 0 : all ? max_entries : 1;
	if (cap > SIZE_MAX / sizeof(struct npa_trace_entry))
		return -EINVAL;
	int lo = device < 0 ? 0 : device, hi = device < 0 ? a->ndev : device + 1;
	struct npa_trace_entry *rings[NPA_MAX_DEVICES] = { 0 };

	for (int i = lo; i < hi && cap > 0; i++) {
		rings[i] = malloc(cap * sizeof(*rings[i]));
		if (rings[i] == NULL) {
			for (int j = lo; j < i; j++)
				free(rings[j]);
			return -ENOMEM;
		}
	}
	for (int i = lo; i < hi; i++)
		history_set(&a->dev[i], rings[i], cap, all);
	return 0;
}

int npa_history_state(struct npa *a, int device, struct npa_history_state *out)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (dev == NULL)
		return -ENODEV;
	npa_device_lock(dev);
	const struct npa_history *h = &dev->history;

	out->enabled = h->ring == NULL ? NULL : h->all ? "all" : "state";
	out->max_entries = h->cap;
	out->recorded = h->recorded;
	out->kept = h->recorded < h->cap ? h->recorded : h->cap;
	npa_lock_release(&dev->lock);
	return 0;
}

uint64_t npa_history_recorded(struct npa *a, int device)
{
	struct npa_device *dev = npa_device_of(a, device);

	return dev ? __atomic_load_n(&dev->history.recorded, __ATOMIC_ACQUIRE) : 0;
}

/* Under the lock: entries [from, recorded) of the ring into t. */
static int copy_locked(const struct npa_history *h, uint64_t since, struct npa_trace *t)
{
	uint64_t oldest = h->recorded > h->cap ? h->recorded - h->cap : 0;
	uint64_t from = since > oldest ? since : oldest;

	t->recorded = h->recorded;
	t->first = from < h->recorded ? from : h->recorded;
	t->n = (size_t)(h->recorded - t->first);
	if (t->n == 0)
		return 0;
	t->entries = malloc(t->n * sizeof(*t->entries));
	if (t->entries == NULL) {
		t->n = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n; i++)
		t->entries[i] = h->ring[(t->first + i) % h->cap];
	return 0;
}

int npa_history_copy(struct npa *a, int device, uint64_t since, struct npa_trace *out)
{
	struct npa_device *dev = npa_device_of(a, device);

	memset(out, 0, sizeof(*out));
	if (dev == NULL)
		return -ENODEV;
	out->device = device;
	npa_device_lock(dev);
	int rc = copy_locked(&dev->history, since, out);
	npa_lock_release(&dev->lock);
	return rc;
}

const char *npa_segment_action_name(enum npa_segment_action action)
{
	return npa_trace_action_name(action + NPA_TRACE_SEGMENT_ALLOC);
}

static bool is_segment_action(enum npa_trace_action action)
{
	return action >= NPA_TRACE_SEGMENT_ALLOC && action <= NPA_TRACE_SEGMENT_UNMAP;
}

int npa_segment_events(struct npa *a, int device, struct npa_segment_event *out, size_t max)
{
	struct npa_trace t;
	int rc = npa_history_copy(a, device, 0, &t);
	size_t total = 0, k = 0;

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < t.n; i++)
		total += is_segment_action(t.entries[i].action);
	size_t skip = total > max ? total - max : 0; /* the oldest ones */
	for (size_t i = 0; i < t.n; i++) {
		const struct npa_trace_entry *e = &t.entries[i];

		if (!is_segment_action(e->action) || (skip > 0 && skip--))
			continue;
		out[k++] = (struct npa_segment_event){
			.action = (enum npa_segment_action)(e->action - NPA_TRACE_SEGMENT_ALLOC),
			.address = e->addr, .size = e->size, .stream = e->stream,
		};
	}
	npa_trace_release(&t);
	return (int)k;
}

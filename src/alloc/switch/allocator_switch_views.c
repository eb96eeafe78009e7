/*
 * allocator_switch_views.c - stats, controls and the listing across the
 * allocators a switch holds.
 *
 * Whatever runs on an allocator runs on a pinned entry without the
 * switch's lock, so a reader listing the allocators or reading a stats
 * file never waits for a plug-in, and a plug-in never waits for a reader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_switch.h"

#include "allocator_switch_impl.h"

/* A get_device_stats hook that faults retires its plug-in, whose own
 * bookkeeping is then what there is to show. */
static int entry_stats(struct sw *sw, struct sw_entry *e, int device,
		       struct npa_stats *out)
{
	int rc = e->a.ops->get_stats(e->a.self, device, out);
	if (rc != -EFAULT)
		return rc;
	sw_note_fault(sw, e);
	return e->a.ops->get_stats(e->a.self, device, out);
}

int sw_get_stats(struct sw *sw, int device, struct npa_stats *out)
{
	struct sw_entry *e = sw_pin_current(sw);
	int rc = entry_stats(sw, e, device, out);
	sw_release(sw, e);
	return rc;
}

int sw_snapshot(struct sw *sw, int device, struct npa_snapshot *out)
{
	struct sw_entry *e = sw_pin_current(sw);
	int rc = e->a.ops->snapshot(e->a.self, device, out);
	sw_release(sw, e);
	return rc;
}

static struct sw_entry *pin_by_id(struct sw *sw, unsigned id)
{
	struct sw_entry *e = id == 0 ? &sw->caching : NULL;

	pthread_mutex_lock(&sw->lock);
	for (struct sw_entry *p = sw->plugins; p && !e; p = p->next)
		if (p->id == id)
			e = p;
	if (e)
		sw_pin(e);
	pthread_mutex_unlock(&sw->lock);
	return e;
}

int sw_get_stats_of(struct sw *sw, unsigned id, int device,
		    struct npa_stats *out)
{
	struct sw_entry *e = pin_by_id(sw, id);
	if (!e)
		return -ENOENT;
	int rc = entry_stats(sw, e, device, out);
	sw_release(sw, e);
	return rc;
}

/* Every entry, pinned: for the controls that act on all allocators. */
static int pin_all(struct sw *sw, struct sw_entry ***out, size_t *n)
{
	pthread_mutex_lock(&sw->lock);
	size_t count = 1;
	for (struct sw_entry *p = sw->plugins; p; p = p->next)
		count++;
	struct sw_entry **all = malloc(count * sizeof(*all));
	if (all) {
		all[0] = &sw->caching;
		count = 1;
		for (struct sw_entry *p = sw->plugins; p; p = p->next)
			all[count++] = p;
		for (size_t i = 0; i < count; i++)
			sw_pin(all[i]);
	}
	pthread_mutex_unlock(&sw->lock);
	*out = all;
	*n = all ? count : 0;
	return all ? 0 : -ENOMEM;
}

static void release_all(struct sw *sw, struct sw_entry **all, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sw_release(sw, all[i]);
	free(all);
}

enum control { EMPTY_CACHE, RESET_PEAK, RESET_ACCUMULATED };

static int entry_control(struct sw_entry *e, enum control c, int device)
{
	const struct allocator_ops *ops = e->a.ops;
	char what[8];

	/* An allocator retired by a fault has nothing to empty or reset. */
	if (allocator_faulted(e->a, what, sizeof(what)))
		return 0;

	switch (c) {
	case EMPTY_CACHE:
		return ops->empty_cache(e->a.self, device);
	case RESET_PEAK:
		return ops->reset_peak(e->a.self, device);
	case RESET_ACCUMULATED:
		return ops->reset_accumulated(e->a.self, device);
	}
	return -EINVAL;
}

static int control_one(struct sw *sw, struct sw_entry *e, enum control c, int device)
{
	int rc = entry_control(e, c, device);

	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	return rc;
}

/*
 * The caching allocator, whose cache and counters stay the daemon's, and
 * the current plug-in: upstream calls the current allocator alone, so a
 * plug-in loaded beside it or retired hears nothing (no reset hook, no
 * warning).
 */
static int control_all(struct sw *sw, enum control c, int device)
{
	int rc = control_one(sw, &sw->caching, c, device);
	struct sw_entry *e = sw_pin_current(sw);

	if (e != &sw->caching) {
		int r = control_one(sw, e, c, device);
		rc = rc ? rc : r;
	}
	sw_release(sw, e);
	return rc;
}

int sw_empty_cache(struct sw *sw, int device)
{
	return control_all(sw, EMPTY_CACHE, device);
}

int sw_reset_peak_stats(struct sw *sw, int device)
{
	return control_all(sw, RESET_PEAK, device);
}

int sw_reset_accumulated_stats(struct sw *sw, int device)
{
	return control_all(sw, RESET_ACCUMULATED, device);
}

/* The caching allocator keeps the fraction for when it is current again. */
int sw_set_memory_fraction(struct sw *sw, int device, double fraction,
			   char *err, size_t errlen)
{
	struct allocator caching = sw->caching.a;
	int rc = caching.ops->set_fraction(caching.self, device, fraction, err, errlen);
	if (rc)
		return rc;
	struct sw_entry *e = sw_pin_current(sw);
	if (e != &sw->caching)
		rc = e->a.ops->set_fraction(e->a.self, device, fraction, err, errlen);
	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	sw_release(sw, e);
	return rc;
}

double sw_get_memory_fraction(struct sw *sw, int device)
{
	struct sw_entry *e = sw_pin_current(sw);
	double f = e->a.ops->get_fraction(e->a.self, device);
	sw_release(sw, e);
	return f;
}

static void fill_hooks(const struct plugin *p, struct sw_info *info)
{
	info->nhooks = 0;
	for (int h = 0; h < PLUGIN_NHOOKS; h++) {
		if (!p->hook_name[h][0])
			continue;
		struct sw_hook *k = &info->hooks[info->nhooks++];
		k->hook = plugin_hook_name(h);
		snprintf(k->fn, sizeof(k->fn), "%s", p->hook_name[h]);
	}
}

/* Lock held. What every allocator of the switch shows. */
static void fill_info(struct sw *sw, struct sw_entry *e, struct sw_info *info)
{
	info->id = e->id;
	info->kind = SW_CACHING;
	info->current = e == sw->current;
	info->kept = e->kept;
	info->faulted = e->fault_told;
	info->mempools = e->mempools;
	snprintf(info->name, sizeof(info->name), "%s", e->name);
	info->since = e->since;
	info->live_blocks = e->live_blocks;
	info->live_bytes = e->live_bytes;
}

/* Lock held (npl's own lock nests inside the switch's). What a plug-in
 * shows besides: where it came from, its hooks, its guards' counts. */
static void fill_plugin_info(struct sw *sw, struct sw_entry *e, struct sw_info *info)
{
	const struct plugin *p = npl_plugin(e->npl);

	fill_info(sw, e, info);
	info->kind = SW_PLUGIN;
	snprintf(info->path, sizeof(info->path), "%s", p->path);
	snprintf(info->alloc_name, sizeof(info->alloc_name), "%s", p->alloc_name);
	snprintf(info->free_name, sizeof(info->free_name), "%s", p->free_name);
	fill_hooks(p, info);
	npl_guard_counts(e->npl, &info->guard);
}

/* The built-in allocator, then the plug-ins oldest first; the current one
 * is moved to the front. */
int sw_list(struct sw *sw, struct sw_info **out, size_t *n)
{
	uint64_t blocks, bytes;

	/* Before the switch's lock: the devices' locks are not taken inside it. */
	npa_live(sw->npa, &blocks, &bytes);
	pthread_mutex_lock(&sw->lock);
	size_t count = 1;
	for (struct sw_entry *p = sw->plugins; p; p = p->next)
		count++;
	struct sw_info *info = calloc(count, sizeof(*info));
	if (!info) {
		pthread_mutex_unlock(&sw->lock);
		return -ENOMEM;
	}
	size_t i = 0, current = 0;
	fill_info(sw, &sw->caching, &info[i]);
	info[i].live_blocks = blocks;
	info[i++].live_bytes = bytes;
	for (struct sw_entry *p = sw->plugins; p; p = p->next) {
		if (p == sw->current)
			current = i;
		fill_plugin_info(sw, p, &info[i++]);
	}
	pthread_mutex_unlock(&sw->lock);
	struct sw_info first = info[current];
	memmove(&info[1], &info[0], current * sizeof(*info));
	info[0] = first;
	*out = info;
	*n = i;
	return 0;
}

uint64_t sw_refused_frees(struct sw *sw)
{
	pthread_mutex_lock(&sw->lock);
	uint64_t refused = sw->refused_frees;
	pthread_mutex_unlock(&sw->lock);
	return refused;
}

/* One allocator's memory on a device, named for messages. */
struct owned {
	struct npa_range r;
	const char *owner;
};

static int owned_cmp(const void *x, const void *y)
{
	const struct owned *a = x, *b = y;

	return a->r.lo < b->r.lo ? -1 : a->r.lo > b->r.lo;
}

static int add_ranges(struct sw_entry *e, int device, struct owned **all, size_t *n)
{
	struct npa_range *r;
	size_t k;
	int rc = e->a.ops->ranges(e->a.self, device, &r, &k);
	struct owned *grown = rc || k == 0 ? NULL : realloc(*all, (*n + k) * sizeof(**all));

	if (rc == 0 && k != 0 && grown == NULL)
		rc = -ENOMEM;
	for (size_t i = 0; grown != NULL && i < k; i++)
		grown[(*n)++] = (struct owned){ r[i], e->name };
	if (grown != NULL)
		*all = grown;
	free(r);
	return rc;
}

int sw_check(struct sw *sw, int device, char *err, size_t errlen)
{
	struct sw_entry **entries;
	struct owned *all = NULL;
	size_t ne, n = 0;
	int rc = pin_all(sw, &entries, &ne);

	for (size_t i = 0; rc == 0 && i < ne; i++)
		rc = add_ranges(entries[i], device, &all, &n);
	if (rc == 0 && n > 1)
		qsort(all, n, sizeof(*all), owned_cmp);
	for (size_t i = 1; rc == 0 && i < n; i++) {
		if (all[i].r.lo >= all[i - 1].r.hi)
			continue;
		snprintf(err, errlen, "memory of %s at %#lx-%#lx overlaps memory of %s at %#lx-%#lx",
			 all[i].owner, (unsigned long)all[i].r.lo, (unsigned long)all[i].r.hi,
			 all[i - 1].owner, (unsigned long)all[i - 1].r.lo,
			 (unsigned long)all[i - 1].r.hi);
		rc = -EFAULT;
	}
	free(all);
	if (entries != NULL)
		release_all(sw, entries, ne);
	return rc;
}

/*
 * alloc_settings.c - reading and changing PYTORCH_*_ALLOC_CONF at run time
 * (upstream _set_allocator_settings).
 *
 * The string is parsed over a copy with every device locked, so no
 * allocation sees half a change. Options that shape segments already made
 * (their size, kind or alignment) may only change while no device holds a
 * segment; the others apply from the next request on.
 */
#include <errno.h>
#include <stdio.h>

#include "caching_allocator_impl.h"

static void lock_all(struct npa *a)
{
	for (int i = 0; i < a->ndev; i++)
		pthread_mutex_lock(&a->dev[i].lock);
}

static void unlock_all(struct npa *a)
{
	for (int i = a->ndev - 1; i >= 0; i--)
		pthread_mutex_unlock(&a->dev[i].lock);
}

void npa_get_conf(struct npa *a, struct npa_conf *out)
{
	lock_all(a);
	*out = a->conf;
	unlock_all(a);
}

/* The first option that shapes segments and differs, or NULL. */
static const char *structural_change(const struct npa_conf *old, const struct npa_conf *new)
{
	if (old->large_segment_size != new->large_segment_size)
		return "large_segment_size_mb";
	if (old->base_addr_aligned != new->base_addr_aligned)
		return "base_addr_aligned_kb";
	if (old->page_size_1g != new->page_size_1g)
		return "page_size";
	if (old->multi_stream_lazy_reclaim != new->multi_stream_lazy_reclaim)
		return "multi_stream_lazy_reclaim";
	return NULL;
}

static bool holds_segments(const struct npa *a)
{
	for (int i = 0; i < a->ndev; i++)
		if (!RB_EMPTY(&a->dev[i].segments))
			return true;
	return false;
}

static int check_change(struct npa *a, const struct npa_conf *next, char *err, size_t errlen)
{
	const char *key = structural_change(&a->conf, next);

	if (next->expandable_segments) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "expandable_segments is not supported yet");
		return -EOPNOTSUPP;
	}
	if (key != NULL && holds_segments(a)) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen,
				 "%s can only change while no device holds memory: free every "
				 "block and empty the cache first", key);
		return -EBUSY;
	}
	return 0;
}

static int apply(struct npa *a, const struct npa_conf *next)
{
	bool fraction_changed =
		next->per_process_memory_fraction != a->conf.per_process_memory_fraction;
	bool split_changed = next->max_split_size != a->conf.max_split_size;

	for (int i = 0; i < a->ndev; i++) {
		/* Oversize counters keep upstream's drift from here on. */
		if (split_changed)
			a->dev[i].oversize_exact = false;
		if (fraction_changed) {
			int rc = npa_device_set_fraction(&a->dev[i],
							 next->per_process_memory_fraction);
			if (rc < 0)
				return rc;
		}
	}
	a->conf = *next;
	return 0;
}

int npa_set_conf(struct npa *a, const char *str, enum npa_conf_origin origin, char *err,
		 size_t errlen)
{
	struct npa_conf next;
	int rc;

	lock_all(a);
	next = a->conf;
	rc = npa_conf_parse(&next, a->flavor, str, origin, err, errlen);
	if (rc == 0)
		rc = check_change(a, &next, err, errlen);
	if (rc == 0)
		rc = apply(a, &next);
	unlock_all(a);
	return rc;
}

/*
 * alloc_settings.c - reading and changing PYTORCH_*_ALLOC_CONF at run time
 * (upstream _set_allocator_settings).
 *
 * The string is parsed over a copy with every device locked, so no
 * allocation sees half a change. Options that shape segments already made
 * (their size, page or alignment) may only change while no device holds a
 * segment, multi_stream_lazy_reclaim never; the others (expandable_segments
 * included: blocks already expandable stay so) apply from the next request.
 */
#include <errno.h>
#include <stdio.h>

#include "alloc/device/devices.h"
#include "alloc/host/host_allocator.h"

static void lock_all(struct npa *a)
{
	for (int i = 0; i < a->ndev; i++)
		npa_device_lock(&a->dev[i]);
}

static void unlock_all(struct npa *a)
{
	for (int i = a->ndev - 1; i >= 0; i--)
		npa_lock_release(&a->dev[i].lock);
}

void npa_get_conf(struct npa *a, struct npa_conf *out)
{
	lock_all(a);
	*out = a->conf;
	unlock_all(a);
}

static bool holds_segments(const struct npa *a)
{
	for (int i = 0; i < a->ndev; i++)
		if (!RB_EMPTY(&a->dev[i].segments))
			return true;
	return false;
}

/* The pinned host allocator reads these once: its variant when it is
 * made, the reserve segment with its first block. */
static int check_host_change(struct npa *a, enum npa_conf_key key, char *err, size_t errlen)
{
	const char *why = NULL;

	if (key == NPA_CONF_pin_memory_expandable_segments)
		why = "the pinned host allocator is chosen once, when it starts";
	else if (key == NPA_CONF_pinned_reserve_segment_size_mb && npa_host_reserve_decided(a->host))
		why = "the reserve segment was set up with the first pinned block";
	if (why == NULL)
		return 0;
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s cannot change at run time: %s",
			 npa_conf_key_name(key, a->flavor), why);
	return -EBUSY;
}

/* Options that shape segments or addresses may change only with none held. */
static int check_change(struct npa *a, const struct npa_conf *next, char *err, size_t errlen)
{
	enum npa_conf_key keys[NPA_CONF_NKEYS];
	int n = npa_conf_diff(&a->conf, next, keys, NPA_CONF_NKEYS);

	for (int i = 0; i < n; i++) {
		int rc = check_host_change(a, keys[i], err, errlen);

		if (rc)
			return rc;
		if (npa_conf_key_runtime_safe(keys[i]))
			continue;
		if (keys[i] != NPA_CONF_multi_stream_lazy_reclaim && !holds_segments(a))
			continue;
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, keys[i] == NPA_CONF_multi_stream_lazy_reclaim
				 ? "%s cannot change at run time: it is read once when the "
				   "allocator starts"
				 : "%s cannot change while the allocator holds memory: segments "
				   "already made keep the old value; free every block and empty "
				   "the cache first",
				 npa_conf_key_name(keys[i], a->flavor));
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
	for (int i = 0; i < a->ndev; i++)
		a->dev[i].rounds_by_divisions = npa_conf_rounds_by_divisions(&a->conf);
	struct host_limits limits = npa_host_limits_of(&a->conf);
	npa_host_set_limits(a->host, &limits);
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

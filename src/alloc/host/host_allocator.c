/*
 * host_allocator.c - the pinned host allocator's entry points. The
 * algorithm chosen at creation (host_caching.c or host_expandable.c) does
 * the work under the lock; what both upstream variants share stays here:
 * the size check before it, the invalid-pointer text and the timings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_impl.h"

uint64_t npa_host_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Log2_64_Ceil. */
unsigned npa_host_bucket(size_t size)
{
	return size <= 1 ? 0 : 64u - (unsigned)__builtin_clzll((unsigned long long)size - 1);
}

struct host_limits npa_host_limits_of(const struct npa_conf *conf)
{
	return (struct host_limits){
		.round_threshold = conf->pinned_max_round_threshold,
		.cached_max = conf->pinned_max_cached_size,
		.reserve_size = conf->pinned_reserve_segment_size,
	};
}

int npa_host_create(struct npa_host **out, enum npa_host_variant variant,
		    const struct host_limits *limits, uint64_t host_capacity)
{
	struct npa_host *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (h == NULL)
		return -ENOMEM;
	h->ops = variant == NPA_HOST_EXPANDABLE ? &host_expandable_ops : &host_caching_ops;
	h->host_capacity = host_capacity;
	h->limits = *limits;
	host_pools_init(h);
	TAILQ_INIT(&h->events);
	if (h->ops->init != NULL && h->ops->init(h) < 0) {
		free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

void npa_host_destroy(struct npa_host *h)
{
	if (h == NULL)
		return;
	host_events_fini(h);
	h->ops->fini(h);
	host_pools_fini(h);
	free(h);
}

enum npa_host_variant npa_host_variant(const struct npa_host *h)
{
	return h->ops->variant;
}

void npa_host_set_limits(struct npa_host *h, const struct host_limits *limits)
{
	npa_lock_acquire(&h->lock);
	h->limits = *limits;
	npa_lock_release(&h->lock);
}

bool npa_host_reserve_decided(struct npa_host *h)
{
	npa_lock_acquire(&h->lock);
	bool decided = h->reserve.decided;
	npa_lock_release(&h->lock);
	return decided;
}

int npa_host_malloc(struct npa_host *h, size_t size, aclrtStream stream, void **ptr,
		    char *err, size_t errlen)
{
	int rc;

	*ptr = NULL;
	if (size == 0)
		return 0;
	if (size >= (size_t)1 << 60) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "NPU function error: aclrtMallocHost, error code is %d",
				 ACL_ERROR_RT_MEMORY_ALLOCATION);
		return -ENOMEM;
	}
	npa_lock_acquire(&h->lock);
	rc = h->ops->allocate(h, size, stream, ptr, err, errlen);
	npa_lock_release(&h->lock);
	return rc;
}

int npa_host_free(struct npa_host *h, void *ptr, char *err, size_t errlen)
{
	int rc;

	if (ptr == NULL)
		return 0;
	npa_lock_acquire(&h->lock);
	rc = h->ops->free(h, ptr);
	npa_lock_release(&h->lock);
	if (rc && err != NULL && errlen > 0)
		snprintf(err, errlen, "invalid pinned pointer: %p", ptr);
	return rc;
}

int npa_host_record_event(struct npa_host *h, const void *ptr, aclrtStream stream)
{
	int rc;

	npa_lock_acquire(&h->lock);
	rc = h->ops->record_event(h, ptr, stream);
	npa_lock_release(&h->lock);
	return rc;
}

size_t npa_host_block_size(struct npa_host *h, const void *ptr)
{
	size_t size;

	npa_lock_acquire(&h->lock);
	size = h->ops->block_size(h, ptr);
	npa_lock_release(&h->lock);
	return size;
}

uint64_t npa_host_block_serial(struct npa_host *h, const void *ptr)
{
	uint64_t serial = 0;

	npa_lock_acquire(&h->lock);
	if (h->ops->block_serial != NULL)
		serial = h->ops->block_serial(h, ptr);
	npa_lock_release(&h->lock);
	return serial;
}

void npa_host_empty_cache(struct npa_host *h)
{
	npa_lock_acquire(&h->lock);
	h->ops->empty_cache(h);
	npa_lock_release(&h->lock);
}

void npa_host_get_stats(struct npa_host *h, struct npa_host_stats *out)
{
	memset(out, 0, sizeof(*out));
	npa_lock_acquire(&h->lock);
	h->ops->stats(h, out);
	out->host_alloc_time = h->alloc_time;
	out->host_free_time = h->free_time;
	npa_lock_release(&h->lock);
}

static void reset(struct npa_host *h, bool peak)
{
	void (*dur)(struct npa_duration_stat *) =
		peak ? npa_duration_reset_peak : npa_duration_reset_accumulated;

	npa_lock_acquire(&h->lock);
	h->ops->reset(h, peak);
	dur(&h->alloc_time);
	dur(&h->free_time);
	npa_lock_release(&h->lock);
}

void npa_host_reset_peak_stats(struct npa_host *h)
{
	reset(h, true);
}

void npa_host_reset_accumulated_stats(struct npa_host *h)
{
	reset(h, false);
}

int npa_host_blocks(struct npa_host *h, struct npa_host_block_info **out, size_t *n)
{
	int rc;

	*out = NULL;
	*n = 0;
	npa_lock_acquire(&h->lock);
	rc = h->ops->blocks(h, out, n);
	npa_lock_release(&h->lock);
	return rc;
}

int npa_host_check(struct npa_host *h, char *err, size_t errlen)
{
	int rc;

	npa_lock_acquire(&h->lock);
	rc = h->ops->check(h, err, errlen);
	npa_lock_release(&h->lock);
	return rc;
}

const char *npa_host_capture_refusal(const struct npa_host *h)
{
	return h->ops->capture_refusal;
}

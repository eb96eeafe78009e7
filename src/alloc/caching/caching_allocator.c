/*
 * caching_allocator.c - the allocator over all devices (upstream
 * NativeCachingAllocator): argument checks, the device locks, and finding
 * which device a pointer belongs to.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/device/devices.h"
#include "caching_allocator.h"
#include "alloc/host/host_allocator.h"

int npa_create(const struct npa_options *opt, struct npa **out)
{
	return npa_create_err(opt, out, NULL, 0);
}

/* call_once in setAllocator: the variant is fixed from here on. */
static int create_host(struct npa *a, const struct npa_options *opt)
{
	struct host_limits limits = npa_host_limits_of(&a->conf);
	uint64_t capacity = opt->host_capacity ? opt->host_capacity : (uint64_t)64 << 30;

	return npa_host_create(&a->host, a->conf.pin_memory_expandable_segments
				       ? NPA_HOST_EXPANDABLE : NPA_HOST_CACHING,
			       &limits, capacity);
}

struct npa_host *npa_host_of(struct npa *a)
{
	return a->host;
}

int npa_create_err(const struct npa_options *opt, struct npa **out, char *err,
		   size_t errlen)
{
	const struct npa_flavor *flavor = opt->flavor ? opt->flavor : &npa_flavor_npu;

	*out = NULL;
	if (opt->device_count <= 0 || opt->device_count > NPA_MAX_DEVICES) {
		npa_set_err(err, errlen, "the allocator needs 1 to 16 devices");
		return -EINVAL;
	}
	struct npa *a = calloc(1, sizeof(*a) + (size_t)opt->device_count * sizeof(a->dev[0]));
	if (a == NULL)
		return -ENOMEM;
	a->flavor = flavor;
	a->conf = opt->conf;
	a->no_caching = opt->no_caching;
	a->cached_below = opt->no_caching ? 0 : ((size_t)1 << 60) - 1;
	a->next_user_pool = 1;
	a->next_graph_pool = 1;
	a->ndev = opt->device_count;
	if (create_host(a, opt) < 0) {
		free(a);
		return -ENOMEM;
	}
	npa_frame_names_init(&a->names);
	for (int i = 0; i < a->ndev; i++) {
		int rc = npa_device_init(&a->dev[i], i, flavor, &a->conf);
		a->dev[i].names = &a->names;
		if (rc < 0) {
			npa_set_err(err, errlen, "cannot read the device's memory size");
			a->ndev = i + 1;
			npa_destroy(a, NULL);
			return rc;
		}
	}
	*out = a;
	return 0;
}

size_t npa_destroy(struct npa *a, uint64_t *leaked_bytes)
{
	size_t leaks = 0;

	if (leaked_bytes != NULL)
		*leaked_bytes = 0;
	if (a == NULL)
		return 0;
	for (int i = 0; i < a->ndev; i++)
		leaks += npa_device_fini(&a->dev[i], leaked_bytes);
	npa_host_destroy(a->host);
	npa_frame_names_fini(&a->names);
	free(a);
	return leaks;
}

const struct npa_flavor *npa_get_flavor(const struct npa *a)
{
	return a->flavor;
}

int npa_device_count(const struct npa *a)
{
	return a->ndev;
}

/* A stream's use of a live block, added or dropped. torch_npu skips a
 * tensor whose deleter is uncached_delete (and warns once on erase; the
 * daemon need not). */
static int stream_use(struct npa *a, void *ptr, aclrtStream stream, bool record)
{
	struct npa_ptr_slot *slot;
	struct npa_device *dev;
	int rc = 0;

	if (a->no_caching)
		return 0;
	dev = npa_lock_owner(a, ptr, &slot);
	if (dev == NULL)
		return -EINVAL;
	if (record)
		rc = npa_record_stream_use(dev, slot->block, stream);
	else
		npa_erase_stream_use(slot->block, stream);
	npa_lock_release(&dev->lock);
	return rc;
}

int npa_record_stream(struct npa *a, void *ptr, aclrtStream stream)
{
	return stream_use(a, ptr, stream, true);
}

int npa_set_stream_number(struct npa *a, aclrtStream stream, int device, long number)
{
	int rc = 0;

	for (int d = 0; d < a->ndev && rc == 0; d++) {
		npa_device_lock(&a->dev[d]);
		rc = npa_event_queues_name(&a->dev[d].events, stream, device, number);
		npa_lock_release(&a->dev[d].lock);
	}
	return rc;
}

int npa_erase_stream(struct npa *a, void *ptr, aclrtStream stream)
{
	return stream_use(a, ptr, stream, false);
}

bool npa_range_reserved(struct npa *a, int device, const void *ptr, size_t size)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (dev == NULL || size == 0)
		return false;
	npa_device_lock(dev);
	bool reserved = npa_device_segments_overlap(dev, (uintptr_t)ptr, (uintptr_t)ptr + size);
	npa_lock_release(&dev->lock);
	return reserved;
}

bool npa_range_reserved_held(struct npa *a, int device, const void *ptr, size_t size)
{
	struct npa_device *dev = npa_device_of(a, device);

	return dev != NULL && size != 0 &&
	       npa_device_segments_overlap(dev, (uintptr_t)ptr, (uintptr_t)ptr + size);
}

int npa_segment_ranges(struct npa *a, int device, struct npa_range **out, size_t *n)
{
	struct npa_device *dev = npa_device_of(a, device);
	struct npa_segment *seg;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	if (dev == NULL)
		return -ENODEV;
	npa_device_lock(dev);
	RB_FOREACH(seg, npa_segment_tree, &dev->segments)
		count++;
	struct npa_range *r = count ? malloc(count * sizeof(*r)) : NULL;
	if (r != NULL)
		RB_FOREACH(seg, npa_segment_tree, &dev->segments)
			r[(*n)++] = (struct npa_range){ (uintptr_t)seg->ptr,
							(uintptr_t)seg->ptr + seg->size };
	npa_lock_release(&dev->lock);
	*out = r;
	return count == 0 || r != NULL ? 0 : -ENOMEM;
}

size_t npa_block_size(struct npa *a, const void *ptr)
{
	struct npa_ptr_slot *slot;
	struct npa_device *dev = npa_lock_owner(a, ptr, &slot);

	if (dev == NULL)
		return 0;
	size_t size = slot->block->size;
	npa_lock_release(&dev->lock);
	return size;
}

/* Run `fn` on one device, or on each with device = -1. */
/* fn on each device in turn; the first that fails stops the walk, as the
 * exception of upstream's per-device loop does. */
static int for_devices(struct npa *a, int device, int (*fn)(struct npa_device *))
{
	int first = device < 0 ? 0 : device;
	int last = device < 0 ? a->ndev - 1 : device;
	int rc = 0;

	if (npa_device_of(a, first) == NULL || device < -1)
		return -ENODEV;
	for (int i = first; i <= last && rc == 0; i++) {
		npa_device_lock(&a->dev[i]);
		rc = fn(&a->dev[i]);
		npa_lock_release(&a->dev[i].lock);
	}
	return rc;
}

static int empty_cache(struct npa_device *dev)
{
	return npa_release_cached_blocks(dev, false);
}

static int empty_virt_addr_cache(struct npa_device *dev)
{
	return npa_release_cached_blocks(dev, true);
}

static int reset_peak(struct npa_device *dev)
{
	npa_stats_reset_peak(&dev->stats);
	return 0;
}

static int reset_accumulated(struct npa_device *dev)
{
	npa_stats_reset_accumulated(&dev->stats);
	return 0;
}

/* cuda asserts that no pool routes allocations (captures_underway.empty()). */
static bool empty_cache_refused(struct npa *a, int device)
{
	bool refused = false;

	for (int i = 0; i < a->ndev && !refused; i++) {
		if (device >= 0 && i != device)
			continue;
		npa_device_lock(&a->dev[i]);
		refused = a->flavor->any_scope_is_capture && npa_capture_underway(&a->dev[i], NULL);
		npa_lock_release(&a->dev[i].lock);
	}
	return refused;
}

int npa_empty_cache(struct npa *a, int device)
{
	if (empty_cache_refused(a, device))
		return -EBUSY;
	return for_devices(a, device, empty_cache);
}

const char *npa_control_strerror(int rc)
{
	if (rc == -EBUSY)
		return "refused while a capture is under way on the device";
	return strerror(-rc);
}

int npa_empty_virt_addr_cache(struct npa *a, int device, char *err, size_t errlen)
{
	struct npa_conf conf;

	npa_get_conf(a, &conf);
	if (!conf.expandable_segments) {
		npa_set_err(err, errlen, "Unsupported config for empty_virt_addr_cache, please "
			"enable expandable_segments.");
		return -EINVAL;
	}
	return for_devices(a, device, empty_virt_addr_cache);
}

int npa_last_oom(struct npa *a, int device, char *buf, size_t len, struct npa_oom_why *why)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (dev == NULL)
		return -ENODEV;
	npa_device_lock(dev);
	if (len > 0)
		snprintf(buf, len, "%s", dev->last_oom);
	if (why != NULL)
		*why = dev->last_oom_why;
	npa_lock_release(&dev->lock);
	return 0;
}

int npa_reset_peak_stats(struct npa *a, int device)
{
	return for_devices(a, device, reset_peak);
}

int npa_reset_accumulated_stats(struct npa *a, int device)
{
	return for_devices(a, device, reset_accumulated);
}

int npa_set_memory_fraction(struct npa *a, int device, double fraction, char *err,
			    size_t errlen)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (dev == NULL)
		return -ENODEV;
	if (!(fraction >= 0.0 && fraction <= 1.0)) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "Invalid fraction value: %g. Allowed range: 0~1",
				 fraction);
		return -EINVAL;
	}
	npa_device_lock(dev);
	int rc = npa_device_set_fraction(dev, fraction);
	npa_lock_release(&dev->lock);
	return rc;
}

/*
 * The fraction as set. Upstream's getMemoryFraction divides the limit in
 * bytes by the device's total, which after the truncation to bytes is not
 * the number written (0.123456789 of 4 GiB would read back
 * 0.12345678894780576).
 */
double npa_get_memory_fraction(struct npa *a, int device)
{
	struct npa_device *dev = npa_device_of(a, device);
	double f = 1.0;

	if (dev == NULL)
		return 1.0;
	npa_device_lock(dev);
	if (dev->set_fraction)
		f = dev->fraction;
	npa_lock_release(&dev->lock);
	return f;
}

int npa_get_stats(struct npa *a, int device, struct npa_stats *out)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (dev == NULL)
		return -ENODEV;
	npa_stats_copy(&dev->lock, npa_device_complete_stats, &dev->stats, &dev->published, out);
	return 0;
}

void npa_live(struct npa *a, uint64_t *blocks, uint64_t *bytes)
{
	struct npa_stats st;

	*blocks = *bytes = 0;
	for (int d = 0; d < a->ndev; d++) {
		npa_get_stats(a, d, &st);
		*blocks += (uint64_t)st.allocation[NPA_STAT_ALL].current;
		*bytes += (uint64_t)st.requested_bytes[NPA_STAT_ALL].current;
		npa_device_lock(&a->dev[d]);
		*blocks += npa_uncached_live(&a->dev[d], bytes);
		npa_lock_release(&a->dev[d].lock);
	}
}

int npa_snapshot(struct npa *a, int device, struct npa_snapshot *out)
{
	int first = device < 0 ? 0 : device;
	int last = device < 0 ? a->ndev - 1 : device;

	memset(out, 0, sizeof(*out));
	if (npa_device_of(a, first) == NULL || device < -1)
		return -ENODEV;
	for (int i = first; i <= last; i++) {
		npa_device_lock(&a->dev[i]);
		int rc = npa_device_snapshot(&a->dev[i], out);
		npa_lock_release(&a->dev[i].lock);
		if (rc < 0) {
			npa_snapshot_release(out);
			return rc;
		}
	}
	return 0;
}

int npa_check(struct npa *a, int device, char *err, size_t errlen)
{
	struct npa_device *dev = npa_device_of(a, device);

	if (dev == NULL)
		return -ENODEV;
	npa_device_lock(dev);
	int rc = npa_device_check(dev, err, errlen);
	npa_lock_release(&dev->lock);
	return rc;
}

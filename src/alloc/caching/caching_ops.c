/*
 * caching_ops.c - the built-in caching allocator behind the allocator
 * contract (allocator.h): each operation is the npa_ call of that name.
 */
#include "alloc/allocator.h"
#include "caching_allocator.h"
#include "alloc/host/host_allocator.h"
#include "alloc/device/mempool.h"

static int c_malloc(void *self, int device, size_t size, aclrtStream stream, void **ptr,
		    char *err, size_t errlen)
{
	return npa_malloc(self, device, size, stream, ptr, err, errlen);
}

static int c_free(void *self, void *ptr, char *err, size_t errlen)
{
	return npa_free(self, ptr, err, errlen);
}

static int c_record_stream(void *self, void *ptr, aclrtStream stream)
{
	return npa_record_stream(self, ptr, stream);
}

static int c_erase_stream(void *self, void *ptr, aclrtStream stream)
{
	return npa_erase_stream(self, ptr, stream);
}

static size_t c_block_size(void *self, const void *ptr)
{
	return npa_block_size(self, ptr);
}

static int c_empty_cache(void *self, int device)
{
	return npa_empty_cache(self, device);
}

static int c_set_fraction(void *self, int device, double fraction, char *err,
			  size_t errlen)
{
	return npa_set_memory_fraction(self, device, fraction, err, errlen);
}

static double c_get_fraction(void *self, int device)
{
	return npa_get_memory_fraction(self, device);
}

static int c_reset_peak(void *self, int device)
{
	return npa_reset_peak_stats(self, device);
}

static int c_reset_accumulated(void *self, int device)
{
	return npa_reset_accumulated_stats(self, device);
}

static int c_get_stats(void *self, int device, struct npa_stats *out)
{
	return npa_get_stats(self, device, out);
}

static int c_snapshot(void *self, int device, struct npa_snapshot *out)
{
	return npa_snapshot(self, device, out);
}

static int c_ranges(void *self, int device, struct npa_range **out, size_t *n)
{
	return npa_segment_ranges(self, device, out, n);
}

static int c_begin_pool(void *self, int device, struct npa_pool_id id, npa_pool_filter filter,
			void *arg, char *err, size_t errlen)
{
	return npa_begin_allocate_to_pool(self, device, id, filter, arg, err, errlen);
}

static int c_end_pool(void *self, int device, struct npa_pool_id id, char *err, size_t errlen)
{
	return npa_end_allocate_to_pool(self, device, id, err, errlen);
}

static int c_release_pool(void *self, int device, struct npa_pool_id id, char *err,
			  size_t errlen)
{
	return npa_release_pool(self, device, id, err, errlen);
}

static int c_device_count(void *self)
{
	return npa_device_count(self);
}

static int c_set_stream_number(void *self, aclrtStream stream, int device, long number)
{
	return npa_set_stream_number(self, stream, device, number);
}

static int c_check(void *self, int device, char *err, size_t errlen)
{
	return npa_check(self, device, err, errlen);
}

static struct npa *c_caching(void *self)
{
	return self;
}

static struct npa_host *c_host(void *self)
{
	return npa_host_of(self);
}

static const struct allocator_ops caching_ops = {
	.malloc = c_malloc,
	.free = c_free,
	.record_stream = c_record_stream,
	.erase_stream = c_erase_stream,
	.block_size = c_block_size,
	.empty_cache = c_empty_cache,
	.set_fraction = c_set_fraction,
	.get_fraction = c_get_fraction,
	.reset_peak = c_reset_peak,
	.reset_accumulated = c_reset_accumulated,
	.get_stats = c_get_stats,
	.snapshot = c_snapshot,
	.ranges = c_ranges,
	.begin_allocate_to_pool = c_begin_pool,
	.end_allocate_to_pool = c_end_pool,
	.release_pool = c_release_pool,
	.device_count = c_device_count,
	.set_stream_number = c_set_stream_number,
	.check = c_check,
	.caching = c_caching,
	.builtin = c_caching,
	.host = c_host,
};

struct allocator npa_allocator(struct npa *a)
{
	return (struct allocator){ .ops = &caching_ops, .self = a };
}

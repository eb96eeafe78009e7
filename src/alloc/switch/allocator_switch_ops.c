/*
 * allocator_switch_ops.c - the switch behind the allocator contract
 * (allocator.h): whatever is current allocates, each block is freed by
 * the allocator that made it. What drives "the allocator" (a replay, the
 * mount's tensors) holds the switch this way like any other allocator.
 */
#include "alloc/allocator.h"
#include "allocator_switch.h"
#include "allocator_switch_impl.h"

static int s_malloc(void *self, int device, size_t size, aclrtStream stream, void **ptr,
		    char *err, size_t errlen)
{
	return sw_malloc(self, device, size, stream, ptr, err, errlen);
}

static int s_free(void *self, void *ptr, char *err, size_t errlen)
{
	return sw_free(self, ptr, err, errlen);
}

static int s_record_stream(void *self, void *ptr, aclrtStream stream)
{
	return sw_record_stream(self, ptr, stream);
}

static int s_erase_stream(void *self, void *ptr, aclrtStream stream)
{
	return sw_erase_stream(self, ptr, stream);
}

static size_t s_block_size(void *self, const void *ptr)
{
	return sw_block_size(self, ptr);
}

static int s_empty_cache(void *self, int device)
{
	return sw_empty_cache(self, device);
}

static int s_set_fraction(void *self, int device, double fraction, char *err,
			  size_t errlen)
{
	return sw_set_memory_fraction(self, device, fraction, err, errlen);
}

static double s_get_fraction(void *self, int device)
{
	return sw_get_memory_fraction(self, device);
}

static int s_reset_peak(void *self, int device)
{
	return sw_reset_peak_stats(self, device);
}

static int s_reset_accumulated(void *self, int device)
{
	return sw_reset_accumulated_stats(self, device);
}

static int s_get_stats(void *self, int device, struct npa_stats *out)
{
	return sw_get_stats(self, device, out);
}

static int s_snapshot(void *self, int device, struct npa_snapshot *out)
{
	return sw_snapshot(self, device, out);
}

static int s_device_count(void *self)
{
	return sw_device_count(self);
}

static int s_set_stream_number(void *self, aclrtStream stream, int device, long number)
{
	return sw_set_stream_number(self, stream, device, number);
}

static struct npa *s_caching(void *self)
{
	return sw_current_caching(self);
}

static struct npa *s_builtin(void *self)
{
	return sw_caching(self);
}

static struct npa_host *s_host(void *self)
{
	return sw_host(self);
}

/* No check: the caching allocator's invariants do not cover a plug-in's
 * blocks (sw_check compares owners instead). No ranges: the switch holds
 * no memory of its own. */
static const struct allocator_ops switch_ops = {
	.malloc = s_malloc,
	.free = s_free,
	.record_stream = s_record_stream,
	.erase_stream = s_erase_stream,
	.block_size = s_block_size,
	.empty_cache = s_empty_cache,
	.set_fraction = s_set_fraction,
	.get_fraction = s_get_fraction,
	.reset_peak = s_reset_peak,
	.reset_accumulated = s_reset_accumulated,
	.get_stats = s_get_stats,
	.snapshot = s_snapshot,
	.begin_allocate_to_pool = sw_begin_pool,
	.end_allocate_to_pool = sw_end_pool,
	.release_pool = sw_release_pool,
	.device_count = s_device_count,
	.set_stream_number = s_set_stream_number,
	.caching = s_caching,
	.builtin = s_builtin,
	.host = s_host,
};

struct allocator sw_allocator(struct sw *sw)
{
	return (struct allocator){ .ops = &switch_ops, .self = sw };
}

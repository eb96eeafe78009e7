/*
 * plugin_ops.c - a plug-in wrapper behind the allocator contract
 * (allocator.h): each operation is the npl_ call of that name. A plug-in
 * has no graphs, MemPools or host allocator of its own.
 */
#include "alloc/allocator.h"
#include "pluggable_allocator.h"

static int p_malloc(void *self, int device, size_t size, aclrtStream stream, void **ptr,
		    char *err, size_t errlen)
{
	return npl_malloc(self, device, size, stream, ptr, err, errlen);
}

static int p_free(void *self, void *ptr, char *err, size_t errlen)
{
	return npl_free(self, ptr, err, errlen);
}

static int p_record_stream(void *self, void *ptr, aclrtStream stream)
{
	return npl_record_stream(self, ptr, stream);
}

static int p_erase_stream(void *self, void *ptr, aclrtStream stream)
{
	return npl_erase_stream(self, ptr, stream);
}

static size_t p_block_size(void *self, const void *ptr)
{
	return npl_block_size(self, ptr);
}

static int p_empty_cache(void *self, int device)
{
	return npl_empty_cache(self, device);
}

static int p_set_fraction(void *self, int device, double fraction, char *err,
			  size_t errlen)
{
	return npl_set_memory_fraction(self, device, fraction, err, errlen);
}

static double p_get_fraction(void *self, int device)
{
	return npl_get_memory_fraction(self, device);
}

static int p_reset_peak(void *self, int device)
{
	return npl_reset_peak_stats(self, device);
}

static int p_reset_accumulated(void *self, int device)
{
	return npl_reset_accumulated_stats(self, device);
}

static int p_get_stats(void *self, int device, struct npa_stats *out)
{
	return npl_get_stats(self, device, out);
}

static int p_snapshot(void *self, int device, struct npa_snapshot *out)
{
	return npl_snapshot(self, device, out);
}

static int p_ranges(void *self, int device, struct npa_range **out, size_t *n)
{
	return npl_block_ranges(self, device, out, n);
}

static struct npumemfs_mempool_id abi_id(struct npa_pool_id id)
{
	return (struct npumemfs_mempool_id){ id.first, id.second };
}

/* The hooks have no way to refuse (upstream's are void): err stays empty. */
static int p_begin_pool(void *self, int device, struct npa_pool_id id, npa_pool_filter filter,
			void *arg, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return npl_begin_allocate_to_pool(self, device, abi_id(id), filter, arg);
}

static int p_end_pool(void *self, int device, struct npa_pool_id id, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return npl_end_allocate_to_pool(self, device, abi_id(id));
}

static int p_release_pool(void *self, int device, struct npa_pool_id id, char *err,
			  size_t errlen)
{
	(void)err, (void)errlen;
	return npl_release_pool(self, device, abi_id(id));
}

static int p_device_count(void *self)
{
	return npl_device_count(self);
}

static bool p_faulted(void *self, char *buf, size_t len)
{
	return npl_fault(self, buf, len);
}

static struct npa *p_caching(void *self)
{
	(void)self;
	return NULL;
}

static struct npa_host *p_host(void *self)
{
	(void)self;
	return NULL;
}

static const struct allocator_ops plugin_ops = {
	.malloc = p_malloc,
	.free = p_free,
	.record_stream = p_record_stream,
	.erase_stream = p_erase_stream,
	.block_size = p_block_size,
	.empty_cache = p_empty_cache,
	.set_fraction = p_set_fraction,
	.get_fraction = p_get_fraction,
	.reset_peak = p_reset_peak,
	.reset_accumulated = p_reset_accumulated,
	.get_stats = p_get_stats,
	.snapshot = p_snapshot,
	.ranges = p_ranges,
	.begin_allocate_to_pool = p_begin_pool,
	.end_allocate_to_pool = p_end_pool,
	.release_pool = p_release_pool,
	.device_count = p_device_count,
	.faulted = p_faulted,
	.caching = p_caching,
	.host = p_host,
};

struct allocator npl_allocator(struct npl *p)
{
	return (struct allocator){ .ops = &plugin_ops, .self = p };
}

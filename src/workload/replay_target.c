/*
 * replay_target.c - the two allocators a replay can drive: the caching
 * allocator itself, and the allocator switch (whatever is current there).
 *
 * Each function only adapts the argument list; the npa ones are a single
 * direct call, so replaying against the caching allocator costs one
 * indirect call per event over calling it by name.
 */
#include "alloc/allocator_switch.h"
#include "alloc/host_allocator.h"
#include "replay.h"

static int npa_t_malloc(void *ctx, int device, size_t size, aclrtStream stream,
			void **ptr, char *err, size_t errlen)
{
	return npa_malloc(ctx, device, size, stream, ptr, err, errlen);
}

static int npa_t_free(void *ctx, void *ptr, char *err, size_t errlen)
{
	return npa_free(ctx, ptr, err, errlen);
}

static int npa_t_record_stream(void *ctx, void *ptr, aclrtStream stream)
{
	return npa_record_stream(ctx, ptr, stream);
}

static int npa_t_set_stream_number(void *ctx, aclrtStream stream, int device, long number)
{
	return npa_set_stream_number(ctx, stream, device, number);
}

static int npa_t_erase_stream(void *ctx, void *ptr, aclrtStream stream)
{
	return npa_erase_stream(ctx, ptr, stream);
}

static int npa_t_empty_cache(void *ctx, int device)
{
	return npa_empty_cache(ctx, device);
}

static int npa_t_reset_peak(void *ctx, int device)
{
	return npa_reset_peak_stats(ctx, device);
}

static int npa_t_reset_accumulated(void *ctx, int device)
{
	return npa_reset_accumulated_stats(ctx, device);
}

static int npa_t_set_fraction(void *ctx, int device, double fraction, char *err,
			      size_t errlen)
{
	return npa_set_memory_fraction(ctx, device, fraction, err, errlen);
}

static int npa_t_device_count(void *ctx)
{
	return npa_device_count(ctx);
}

static int npa_t_check(void *ctx, int device, char *err, size_t errlen)
{
	return npa_check(ctx, device, err, errlen);
}

static struct npa *npa_t_caching(void *ctx)
{
	return ctx;
}

static struct npa_host *npa_t_host(void *ctx)
{
	return npa_host_of(ctx);
}

static const struct wl_target_ops npa_ops = {
	.malloc = npa_t_malloc,
	.free = npa_t_free,
	.record_stream = npa_t_record_stream,
	.set_stream_number = npa_t_set_stream_number,
	.erase_stream = npa_t_erase_stream,
	.empty_cache = npa_t_empty_cache,
	.reset_peak = npa_t_reset_peak,
	.reset_accumulated = npa_t_reset_accumulated,
	.set_fraction = npa_t_set_fraction,
	.device_count = npa_t_device_count,
	.check = npa_t_check,
	.caching = npa_t_caching,
	.host = npa_t_host,
};

struct wl_target wl_target_npa(struct npa *a)
{
	return (struct wl_target){ .ops = &npa_ops, .ctx = a };
}

static int sw_t_malloc(void *ctx, int device, size_t size, aclrtStream stream,
		       void **ptr, char *err, size_t errlen)
{
	return sw_malloc(ctx, device, size, stream, ptr, err, errlen);
}

static int sw_t_free(void *ctx, void *ptr, char *err, size_t errlen)
{
	return sw_free(ctx, ptr, err, errlen);
}

static int sw_t_record_stream(void *ctx, void *ptr, aclrtStream stream)
{
	return sw_record_stream(ctx, ptr, stream);
}

static int sw_t_set_stream_number(void *ctx, aclrtStream stream, int device, long number)
{
	return sw_set_stream_number(ctx, stream, device, number);
}

static int sw_t_erase_stream(void *ctx, void *ptr, aclrtStream stream)
{
	return sw_erase_stream(ctx, ptr, stream);
}

static int sw_t_empty_cache(void *ctx, int device)
{
	return sw_empty_cache(ctx, device);
}

static int sw_t_reset_peak(void *ctx, int device)
{
	return sw_reset_peak_stats(ctx, device);
}

static int sw_t_reset_accumulated(void *ctx, int device)
{
	return sw_reset_accumulated_stats(ctx, device);
}

static int sw_t_set_fraction(void *ctx, int device, double fraction, char *err,
			     size_t errlen)
{
	return sw_set_memory_fraction(ctx, device, fraction, err, errlen);
}

static int sw_t_device_count(void *ctx)
{
	return sw_device_count(ctx);
}

static struct npa *sw_t_caching(void *ctx)
{
	return sw_current_caching(ctx);
}

static struct npa_host *sw_t_host(void *ctx)
{
	return sw_host(ctx);
}

static const struct wl_target_ops sw_ops = {
	.malloc = sw_t_malloc,
	.free = sw_t_free,
	.record_stream = sw_t_record_stream,
	.set_stream_number = sw_t_set_stream_number,
	.erase_stream = sw_t_erase_stream,
	.empty_cache = sw_t_empty_cache,
	.reset_peak = sw_t_reset_peak,
	.reset_accumulated = sw_t_reset_accumulated,
	.set_fraction = sw_t_set_fraction,
	.device_count = sw_t_device_count,
	.check = NULL,
	.caching = sw_t_caching,
	.host = sw_t_host,
};

struct wl_target wl_target_switch(struct sw *sw)
{
	return (struct wl_target){ .ops = &sw_ops, .ctx = sw };
}

/*
 * size_class.c - request rounding, pool choice and segment sizes
 * (upstream round_size, get_pool, get_allocation_size).
 */
#include "device.h"

static bool is_power_of_two(size_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static size_t power_of_two_floor(size_t x)
{
	return (size_t)1 << (63 - __builtin_clzll((unsigned long long)x));
}

size_t npa_roundup_power2_next_division(size_t size, unsigned divisions)
{
	if (is_power_of_two(size))
		return size;
	size_t floor = power_of_two_floor(size);
	size_t step = floor >> (31 - __builtin_clz(divisions));
	if (step == 0)
		return floor << 1;
	size_t down = size & ~(step - 1);
	return down == size ? size : down + step;
}

size_t npa_round_size(const struct npa_device *dev, size_t size)
{
	size += dev->flavor->pad;
	if (size < NPA_MIN_BLOCK_SIZE)
		return NPA_MIN_BLOCK_SIZE;
	unsigned d = npa_conf_divisions(dev->conf, size);
	if (d > 1 && size > NPA_MIN_BLOCK_SIZE * d)
		return npa_roundup_power2_next_division(size, d);
	return NPA_MIN_BLOCK_SIZE * ((size + NPA_MIN_BLOCK_SIZE - 1) / NPA_MIN_BLOCK_SIZE);
}

#define NPA_EXTRA_LARGE_BUFFER ((size_t)1 << 30) /* npu kExtraLargeBuffer */

size_t npa_allocation_size(const struct npa_device *dev, size_t size)
{
	if (size <= NPA_SMALL_SIZE)
		return NPA_SMALL_BUFFER;
	/* npu page_size:1g puts large-pool segments on 1 GiB pages. */
	if (dev->conf->page_size_1g)
		return NPA_EXTRA_LARGE_BUFFER *
		       ((size + NPA_EXTRA_LARGE_BUFFER - 1) / NPA_EXTRA_LARGE_BUFFER);
	if (size < NPA_MIN_LARGE_ALLOC)
		return dev->conf->large_segment_size;
	return NPA_ROUND_LARGE * ((size + NPA_ROUND_LARGE - 1) / NPA_ROUND_LARGE);
}

struct npa_pool *npa_pool_for(struct npa_device *dev, size_t size)
{
	return size <= NPA_SMALL_SIZE ? &dev->small : &dev->large;
}

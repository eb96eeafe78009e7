/*
 * size_class.c - rounding to power-of-two divisions (upstream
 * roundup_power2_next_division); round_size, get_pool and
 * get_allocation_size are inline in device.h, on every malloc's path.
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

bool npa_conf_rounds_by_divisions(const struct npa_conf *conf)
{
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++)
		if (conf->roundup_power2_divisions[i] > 1)
			return true;
	return false;
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

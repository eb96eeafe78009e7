/*
 * alloc_conf.c - PYTORCH_NPU_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF settings.
 */
#include <stdint.h>
#include <string.h>

#include <npumemfs/alloc_conf.h>

#define MiB ((size_t)1 << 20)
#define KiB ((size_t)1 << 10)

void npa_conf_default(struct npa_conf *conf, const struct npa_flavor *flavor)
{
	memset(conf, 0, sizeof(*conf));
	conf->max_split_size = SIZE_MAX;
	conf->max_non_split_rounding = 20 * MiB; /* kLargeBuffer */
	conf->large_segment_size = 20 * MiB;
	conf->per_process_memory_fraction = 1.0;
	/* torch_npu aligns large expandable blocks to 16 KiB by default. */
	conf->base_addr_aligned = (flavor && flavor->pad) ? 16 * KiB : 0;
}

/* Interval index of a size: floor(log2(size)) - 20, clamped to 0..15. */
static unsigned divisions_index(size_t size)
{
	if (size == 0)
		return 0;
	int log2 = 63 - __builtin_clzll((unsigned long long)size);
	int idx = log2 - 20;
	if (idx < 0)
		idx = 0;
	if (idx > NPA_ROUNDUP_INTERVALS - 1)
		idx = NPA_ROUNDUP_INTERVALS - 1;
	return (unsigned)idx;
}

unsigned npa_conf_divisions(const struct npa_conf *conf, size_t size)
{
	return conf->roundup_power2_divisions[divisions_index(size)];
}

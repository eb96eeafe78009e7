#include <stdint.h>
#include <string.h>

#include "history_fixture.h"

static struct npa_block_info blocks[] = {
	{ HF_SEG, 1024, 1000, NPA_BLOCK_ACTIVE_ALLOCATED },
	{ HF_SEG + 1024, 2096128, 0, NPA_BLOCK_INACTIVE },
};

static struct npa_segment_info segment = {
	.device = 0, .address = HF_SEG, .total_size = 2097152,
	.allocated_size = 1024, .active_size = 1024, .requested_size = 1000,
	.stream = 0, .is_large = false, .is_expandable = false,
	.nblocks = 2, .blocks = blocks,
};

static struct npa_trace_entry entries[] = {
	{ NPA_TRACE_SEGMENT_ALLOC, HF_SEG, 2097152, 0, HF_TIME },
	{ NPA_TRACE_ALLOC, HF_SEG, 1000, 0, HF_TIME + 1 },
	{ NPA_TRACE_OOM, 1048576, 67109376, 0, HF_TIME + 2 },
};

void hf_snapshot(struct npa_snapshot *snap)
{
	*snap = (struct npa_snapshot){ .nsegments = 1, .segments = &segment };
}

void hf_trace(struct npa_trace *t)
{
	*t = (struct npa_trace){ .device = 0, .first = 0, .recorded = 3, .n = 3,
				 .entries = entries };
}

void hf_conf(struct npa_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->max_split_size = SIZE_MAX;
	conf->expandable_segments = true;
	conf->roundup_power2_divisions[2] = 4;
	strcpy(conf->last_string, "expandable_segments:True,roundup_power2_divisions:[4:4]");
}

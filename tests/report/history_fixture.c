#include <stdint.h>
#include <string.h>

#include "history_fixture.h"

/* Line 3 of a replayed trace made x and its segment; a tensor file's
 * truncate ran out of memory. */
#define LINE_3 { .filename = "/work/run.trace", .name = "alloc", .line = 3 }
#define TRUNCATE_BIG { .filename = "/mnt/tensors/device0/big", .name = "truncate" }

static struct npa_block_info blocks[] = {
	{ HF_SEG, 1024, 1000, NPA_BLOCK_ACTIVE_ALLOCATED, LINE_3 },
	{ HF_SEG + 1024, 2096128, 0, NPA_BLOCK_INACTIVE, { 0 } },
};

static struct npa_segment_info segment = {
	.device = 0, .address = HF_SEG, .total_size = 2097152,
	.allocated_size = 1024, .active_size = 1024, .requested_size = 1000,
	.stream = 0, .is_large = false, .is_expandable = false, .frame = LINE_3,
	.nblocks = 2, .blocks = blocks,
};

static struct npa_trace_entry entries[] = {
	{ .action = NPA_TRACE_SEGMENT_ALLOC, .addr = HF_SEG, .size = 2097152,
	  .time_us = HF_TIME, .frame = LINE_3 },
	{ .action = NPA_TRACE_ALLOC, .addr = HF_SEG, .size = 1000, .time_us = HF_TIME + 1,
	  .frame = LINE_3 },
	/* an OOM inside a MemPool: its id travels with the entry */
	{ .action = NPA_TRACE_OOM, .addr = 1048576, .size = 67109376, .pool_id = { 0, 1 },
	  .time_us = HF_TIME + 2, .frame = TRUNCATE_BIG },
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

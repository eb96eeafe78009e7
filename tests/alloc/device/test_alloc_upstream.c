/*
 * Decisions where this allocator once differed from upstream's code, each
 * stated with the upstream function it comes from.
 */
#include "alloc_fixture.h"

static void expandable(struct npa_conf *conf)
{
	conf->expandable_segments = true;
}

static void assert_block(const struct npa_block_info *b, uint64_t size, uint64_t requested)
{
	assert_int_equal(b->size, size);
	assert_int_equal(b->requested_size, requested);
}

/*
 * torch_npu DeviceCachingAllocator::malloc, base address alignment: the
 * found block keeps the unaligned front bytes (and its requested_size);
 * the aligned rest is a new Block, so the tail split off it after the
 * allocation has requested_size 0.
 *
 * 1.5 MiB requests take 1573376 bytes (32 pad, 512 rounding). B at
 * offset 1573376 is freed and merges with the tail; a 2 MiB request
 * (2097664 bytes) then starts 15872 bytes further, on 16 KiB.
 */
static void npu_alignment_fragment_keeps_the_found_blocks_request(void **state)
{
	struct npa *a = fx_start_conf(FLAVOR(state), 8 * GiB, expandable);
	struct npa_snapshot s;

	void *pa = fx_malloc(a, 1572864, NULL);
	void *pb = fx_malloc(a, 1572864, NULL);
	fx_free(a, pb);
	void *pc = fx_malloc(a, 2 * MiB, NULL);
	assert_int_equal((uintptr_t)pc - (uintptr_t)pa, 1573376 + 15872);
	assert_int_equal(npa_snapshot(a, 0, &s), 0);
	assert_int_equal(s.nsegments, 1);
	assert_int_equal(s.segments[0].nblocks, 4);
	assert_block(&s.segments[0].blocks[0], 1573376, 1572864);
	assert_block(&s.segments[0].blocks[1], 15872, 1572864);
	assert_block(&s.segments[0].blocks[2], 2097664, 2 * MiB);
	assert_block(&s.segments[0].blocks[3], 20 * MiB - 1573376 - 15872 - 2097664, 0);
	npa_snapshot_release(&s);
	fx_free(a, pa);
	fx_free(a, pc);
	fx_stop(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "npu_alignment_fragment_keeps_the_found_blocks_request (npu)",
		  npu_alignment_fragment_keeps_the_found_blocks_request, NULL, NULL,
		  (void *)&npa_flavor_npu },
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

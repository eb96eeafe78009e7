/*
 * Frames: where each trace entry, block and segment came from. The caller
 * names its origin (npa_set_origin); the history keeps it as upstream
 * keeps a gathered context: on the entries recorded meanwhile, on the
 * blocks while they are active and on the segments they made. A free or a
 * segment's release from no named origin shows the allocation's frame.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alloc_fixture.h"
#include "alloc/device/frames.h"

#define TRACE "/work/run.trace"

static struct npa *start(void **state)
{
	struct npa *a = fx_start_device_segments(FLAVOR(state), 1 * GiB, NULL);

	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	return a;
}

static void stop(struct npa *a)
{
	npa_set_origin(NULL);
	fx_stop(a);
}

static struct npa_trace history(struct npa *a)
{
	struct npa_trace t;

	assert_int_equal(npa_history_copy(a, 0, 0, &t), 0);
	return t;
}

static void assert_frame(const struct npa_frame *f, const char *filename, uint32_t line,
			 const char *name)
{
	assert_non_null(f->filename);
	assert_string_equal(f->filename, filename);
	assert_int_equal(f->line, line);
	assert_string_equal(f->name, name);
}

static void assert_no_frame(const struct npa_frame *f)
{
	assert_null(f->filename);
}

/* The one segment of device 0 in a snapshot. */
static struct npa_segment_info *only_segment(struct npa *a, struct npa_snapshot *snap)
{
	assert_int_equal(npa_snapshot(a, 0, snap), 0);
	assert_int_equal(snap->nsegments, 1);
	return &snap->segments[0];
}

/* Line 3 allocates, line 4 frees: each entry has the line that made it. */
static void each_entry_has_the_frame_of_the_line_that_made_it(void **state)
{
	struct npa *a = start(state);
	struct npa_frame origin = { TRACE, "alloc", 3 };

	npa_set_origin(&origin);
	void *x = fx_malloc(a, 1000, NULL);
	origin = (struct npa_frame){ TRACE, "free", 4 };
	fx_free(a, x);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 4);
	assert_frame(&t.entries[0].frame, TRACE, 3, "alloc"); /* segment_alloc */
	assert_frame(&t.entries[1].frame, TRACE, 3, "alloc"); /* alloc */
	assert_frame(&t.entries[2].frame, TRACE, 4, "free");  /* free_requested */
	assert_frame(&t.entries[3].frame, TRACE, 4, "free");  /* free_completed */
	npa_trace_release(&t);
	stop(a);
}

/* Upstream: context ? context : block->context_when_allocated. */
static void a_free_from_no_origin_shows_the_allocations_frame(void **state)
{
	struct npa *a = start(state);
	struct npa_frame origin = { "/mnt/tensors/device0/t", "truncate", 0 };

	npa_set_origin(&origin);
	void *x = fx_malloc(a, 1000, NULL);
	npa_set_origin(NULL);
	fx_free(a, x);
	assert_int_equal(npa_empty_cache(a, 0), 0);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 5);
	assert_string_equal(npa_trace_action_name(t.entries[4].action), "segment_free");
	for (size_t i = 0; i < t.n; i++)
		assert_frame(&t.entries[i].frame, "/mnt/tensors/device0/t", 0, "truncate");
	npa_trace_release(&t);
	stop(a);
}

/* An OOM and a snapshot have the caller's frame, and none without one. */
static void oom_and_snapshot_entries_have_the_callers_frame(void **state)
{
	struct npa *a = start(state);
	struct npa_frame origin = { "/mnt/tensors/device0/big", "truncate", 0 };
	struct npa_snapshot snap;
	char err[NPA_ERRLEN];
	void *p;

	npa_set_origin(&origin);
	assert_int_equal(npa_malloc(a, 0, 2 * GiB, NULL, &p, err, sizeof(err)), -ENOMEM);
	npa_set_origin(NULL);
	assert_int_equal(npa_snapshot(a, 0, &snap), 0);
	npa_snapshot_release(&snap);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 2);
	assert_string_equal(npa_trace_action_name(t.entries[0].action), "oom");
	assert_frame(&t.entries[0].frame, "/mnt/tensors/device0/big", 0, "truncate");
	assert_string_equal(npa_trace_action_name(t.entries[1].action), "snapshot");
	assert_no_frame(&t.entries[1].frame);
	npa_trace_release(&t);
	stop(a);
}

/* A snapshot shows the frame of each active block and of the segment; a
 * block whose free completed shows none. */
static void snapshot_blocks_have_their_allocations_frame_while_active(void **state)
{
	struct npa *a = start(state);
	struct npa_frame origin = { TRACE, "alloc", 3 };
	struct npa_snapshot snap;

	npa_set_origin(&origin);
	void *x = fx_malloc(a, 1000, NULL);
	origin.line = 5;
	void *y = fx_malloc(a, 3000, NULL);
	origin = (struct npa_frame){ TRACE, "free", 6 };
	fx_free(a, x);
	struct npa_segment_info *seg = only_segment(a, &snap);
	assert_frame(&seg->frame, TRACE, 3, "alloc");
	assert_int_equal(seg->nblocks, 3);
	assert_int_equal(seg->blocks[0].state, NPA_BLOCK_INACTIVE);
	assert_no_frame(&seg->blocks[0].frame);
	assert_int_equal(seg->blocks[1].address, (uintptr_t)y);
	assert_frame(&seg->blocks[1].frame, TRACE, 5, "alloc");
	assert_no_frame(&seg->blocks[2].frame);
	npa_snapshot_release(&snap);
	fx_free(a, y);
	stop(a);
}

/* A block freed while a stream uses it keeps its frame until the free
 * completes; the completion has the frame of the call that saw it. */
static void a_pending_block_keeps_its_frame_until_its_free_completes(void **state)
{
	struct npa *a = start(state);
	struct npa_frame origin = { TRACE, "alloc", 3 };
	struct npa_snapshot snap;
	aclrtStream s;

	assert_int_equal(aclrtCreateStream(&s), ACL_SUCCESS);
	npa_set_origin(&origin);
	void *x = fx_malloc(a, 1000, NULL);
	assert_int_equal(npusim_launch_open(s), ACL_SUCCESS);
	assert_int_equal(npa_record_stream(a, x, s), 0);
	origin = (struct npa_frame){ TRACE, "free", 4 };
	fx_free(a, x);
	struct npa_segment_info *seg = only_segment(a, &snap);
	assert_int_equal(seg->blocks[0].state, NPA_BLOCK_ACTIVE_PENDING_FREE);
	assert_frame(&seg->blocks[0].frame, TRACE, 3, "alloc");
	npa_snapshot_release(&snap);
	assert_int_equal(aclrtSynchronizeStream(s), ACL_SUCCESS);
	origin = (struct npa_frame){ TRACE, "alloc", 9 };
	void *z = fx_malloc(a, 1000, NULL); /* processes the events first */
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 6); /* the snapshot's entry is the fourth */
	assert_string_equal(npa_trace_action_name(t.entries[4].action), "free_completed");
	assert_frame(&t.entries[4].frame, TRACE, 9, "alloc");
	npa_trace_release(&t);
	fx_free(a, z);
	assert_int_equal(aclrtDestroyStream(s), ACL_SUCCESS);
	stop(a);
}

/* Recording off forgets every frame: a block made before it is turned on
 * again has none, as upstream's blocks made while off have no context. */
static void turning_recording_off_forgets_the_frames(void **state)
{
	struct npa *a = start(state);
	struct npa_frame origin = { TRACE, "alloc", 3 };
	struct npa_snapshot snap;

	npa_set_origin(&origin);
	void *x = fx_malloc(a, 1000, NULL);
	assert_int_equal(npa_record_memory_history(a, 0, NULL, 0), 0);
	void *y = fx_malloc(a, 1000, NULL);
	assert_int_equal(npa_record_memory_history(a, 0, "all", 100), 0);
	struct npa_segment_info *seg = only_segment(a, &snap);
	assert_no_frame(&seg->frame);
	for (size_t i = 0; i < seg->nblocks; i++)
		assert_no_frame(&seg->blocks[i].frame);
	npa_snapshot_release(&snap);
	fx_free(a, x);
	fx_free(a, y);
	stop(a);
}

/* The history keeps its own copy of the file name: the caller's buffer may
 * change, and equal names share one copy. */
static void the_file_name_is_copied_once(void **state)
{
	struct npa *a = start(state);
	char path[64];
	struct npa_frame origin = { path, "write", 0 };

	snprintf(path, sizeof(path), "/mnt/tensors/device0/a");
	npa_set_origin(&origin);
	void *x = fx_malloc(a, 1000, NULL);
	snprintf(path, sizeof(path), "/mnt/tensors/device0/b");
	void *y = fx_malloc(a, 1000, NULL);
	snprintf(path, sizeof(path), "/mnt/tensors/device0/a");
	fx_free(a, x);
	struct npa_trace t = history(a);
	assert_int_equal(t.n, 5);
	assert_frame(&t.entries[1].frame, "/mnt/tensors/device0/a", 0, "write");
	assert_frame(&t.entries[2].frame, "/mnt/tensors/device0/b", 0, "write");
	assert_ptr_not_equal(t.entries[1].frame.filename, path);
	assert_ptr_equal(t.entries[3].frame.filename, t.entries[1].frame.filename);
	npa_trace_release(&t);
	fx_free(a, y);
	stop(a);
}

/* More distinct names than the history keeps are named by one string. */
static void names_beyond_the_limit_share_one_string(void **state)
{
	struct npa_frame_names names;
	char s[32];

	(void)state;
	npa_frame_names_init(&names);
	for (int i = 0; i < NPA_FRAME_NAMES_MAX; i++) {
		snprintf(s, sizeof(s), "/t/%d", i);
		assert_string_equal(npa_frame_names_intern(&names, s), s);
	}
	assert_string_equal(npa_frame_names_intern(&names, "/t/7"), "/t/7");
	assert_string_equal(npa_frame_names_intern(&names, "/t/new"), NPA_FRAME_NAMES_FULL);
	npa_frame_names_fini(&names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_FLAVORS(each_entry_has_the_frame_of_the_line_that_made_it),
		BOTH_FLAVORS(a_free_from_no_origin_shows_the_allocations_frame),
		BOTH_FLAVORS(oom_and_snapshot_entries_have_the_callers_frame),
		BOTH_FLAVORS(snapshot_blocks_have_their_allocations_frame_while_active),
		BOTH_FLAVORS(a_pending_block_keeps_its_frame_until_its_free_completes),
		BOTH_FLAVORS(turning_recording_off_forgets_the_frames),
		BOTH_FLAVORS(the_file_name_is_copied_once),
		cmocka_unit_test(names_beyond_the_limit_share_one_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

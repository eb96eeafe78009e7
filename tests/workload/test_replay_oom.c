/*
 * test_replay_oom.c - a replay that cannot get memory. A streamed
 * replay's follow fails with -ENOMEM, and every array the replay walks
 * still holds the capacity the walk trusts, so releasing and freeing the
 * replay stay inside them; a replay that cannot start says why.
 *
 * Linked with --wrap=malloc: a test makes the Nth malloc of its own
 * thread from now fail (the stream's reading thread allocates meanwhile).
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload/replay_impl.h"

#include "replay_fixture.h"

#define GiB (1ULL << 30)

/* The malloc_fails_in-th malloc of this thread fails; 0: none does. */
static _Thread_local int malloc_fails_in;

void *__real_malloc(size_t n);

void *__wrap_malloc(size_t n)
{
	if (malloc_fails_in > 0 && --malloc_fails_in == 0)
		return NULL;
	return __real_malloc(n);
}

/* The test's trace file and stream, for the teardown to close and remove
 * whichever way the test ended. */
static char trace_path[64];
static struct wl_trace_stream *stream;

static int close_trace(void **state)
{
	malloc_fails_in = 0;
	if (trace_path[0])
		unlink(trace_path); /* first: a replay the bug broke may crash below */
	trace_path[0] = '\0';
	teardown(state);    /* the replay reads the stream's trace: before it */
	wl_trace_stream_close(stream);
	stream = NULL;
	return 0;
}

/*
 * A first chunk (4096 events) with 8 blocks of 1 MiB that stay live and
 * one ID reused, then 1000 IDs and 1000 pinned IDs live at once: the
 * second chunk grows every per-slot and per-pin array.
 */
static void write_trace(void)
{
	snprintf(trace_path, sizeof(trace_path), "/tmp/npumemfs-replay-oom-XXXXXX");
	int fd = mkstemp(trace_path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	if (f == NULL)
		close(fd);
	assert_non_null(f);
	for (int i = 0; i < 8; i++)
		fprintf(f, "alloc k%d 1MiB\n", i);
	for (int i = 0; i < 2044; i++)
		fprintf(f, "alloc a 512\nfree a\n");
	for (int i = 0; i < 1000; i++)
		fprintf(f, "alloc b%d 512\npin p%d 512\n", i, i);
	for (int i = 0; i < 1000; i++)
		fprintf(f, "free b%d\nunpin p%d\n", i, i);
	for (int i = 0; i < 8; i++)
		fprintf(f, "free k%d\n", i);
	assert_int_equal(fclose(f), 0);
}

/* Every array a walk over the slots or the pins reads holds its capacity. */
static void assert_arrays_hold_their_capacity(const struct wl_replay *r)
{
	assert_true(malloc_usable_size(r->ptr) >= r->slot_cap * sizeof(*r->ptr));
	assert_true(malloc_usable_size(r->last_use) >= r->slot_cap * sizeof(*r->last_use));
	if (r->done)
		assert_true(malloc_usable_size(r->done) >= r->slot_cap * sizeof(*r->done));
	assert_true(malloc_usable_size(r->pinned) >= r->pin_cap * sizeof(*r->pinned));
	assert_true(malloc_usable_size(r->pinned_size) >=
		    r->pin_cap * sizeof(*r->pinned_size));
}

/* The first chunk replayed and the second read, then the follow with the
 * Nth malloc of it refused (0: none): the follow's result. */
static int follow_with_nth_malloc_refused(struct fixture *fx, int n)
{
	bool ended;

	assert_int_equal(wl_trace_stream_open(trace_path, &stream, fx->err, sizeof(fx->err)), 0);
	const struct wl_trace *t = wl_trace_stream_trace(stream);
	assert_int_equal(wl_trace_stream_next(stream, &ended, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(wl_replay_new(fx->a, t, &fx->r, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(wl_replay_run(fx->r, 0, t->nevents, NULL, fx->err, sizeof(fx->err)), 0);
	assert_int_equal(wl_trace_stream_next(stream, &ended, fx->err, sizeof(fx->err)), 0);
	assert_true(t->nslots > fx->r->slot_cap);
	assert_true(t->npins > fx->r->pin_cap);
	malloc_fails_in = n;
	int rc = wl_replay_follow(fx->r, fx->err, sizeof(fx->err));
	malloc_fails_in = 0;
	return rc;
}

static void a_follow_out_of_memory_leaves_arrays_that_hold_their_capacity(void **state)
{
	int refused = 0;

	(void)state;
	write_trace();
	for (int n = 1;; n++) {
		struct fixture *fx = start_flavor(&npa_flavor_npu, 1, 8 * GiB);
		int rc = follow_with_nth_malloc_refused(fx, n);

		assert_arrays_hold_their_capacity(fx->r);
		stop_fixture(fx); /* release_all and free walk every array */
		wl_trace_stream_close(stream);
		stream = NULL;
		if (rc == 0)
			break;
		assert_int_equal(rc, -ENOMEM);
		refused++;
	}
	/* Each array the chunk grows, refused in turn: ptr, last_use, done
	 * (a streamed trace may complete frees), pinned, pinned_size. */
	assert_int_equal(refused, 5);
}

static void a_refused_follow_leaves_the_live_blocks_releasable(void **state)
{
	struct npa_stats st;

	(void)state;
	write_trace();
	struct fixture *fx = start_flavor(&npa_flavor_npu, 1, 8 * GiB);
	assert_int_equal(follow_with_nth_malloc_refused(fx, 2), -ENOMEM);
	assert_int_equal(npa_get_stats(fx->a, 0, &st), 0);
	/* npu flavor: 1 MiB padded by 32 B, rounded up to 512 B. */
	assert_int_equal(st.allocated_bytes[NPA_STAT_ALL].current, 8 * (1048576 + 512));
	wl_replay_release_all(fx->r);
	assert_int_equal(npa_get_stats(fx->a, 0, &st), 0);
	assert_int_equal(st.allocated_bytes[NPA_STAT_ALL].current, 0);
}

static void a_replay_that_cannot_get_memory_to_start_says_so(void **state)
{
	(void)state;
	struct fixture *fx = start_flavor(&npa_flavor_npu, 1, 8 * GiB);

	assert_int_equal(parse(fx, "alloc a 512\nfree a\n", 0), 0);
	malloc_fails_in = 1;
	assert_int_equal(wl_replay_new(fx->a, fx->t, &fx->r, fx->err, sizeof(fx->err)), -ENOMEM);
	malloc_fails_in = 0;
	assert_null(fx->r);
	assert_string_equal(fx->err, "t: Cannot allocate memory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
			a_follow_out_of_memory_leaves_arrays_that_hold_their_capacity, close_trace),
		cmocka_unit_test_teardown(a_refused_follow_leaves_the_live_blocks_releasable,
					  close_trace),
		cmocka_unit_test_teardown(a_replay_that_cannot_get_memory_to_start_says_so,
					  close_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

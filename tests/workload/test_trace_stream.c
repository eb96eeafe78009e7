/*
 * test_trace_stream.c - a trace read a chunk at a time while the caller
 * replays the last one: the chunks come in order, whole, with the stream
 * numbers seen so far, and a bad line is the error of its chunk. Before
 * the first chunk runs, the file is looked through for the highest
 * device its lines name.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload/trace.h"

/* A trace of `pairs` alloc/free pairs, every third on stream 7, then
 * `tail` (a last line, or ""). Returns its path, to unlink. */
static char *write_trace(unsigned pairs, const char *tail)
{
	static char path[64];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/npumemfs-stream-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	for (unsigned i = 0; i < pairs; i++)
		fprintf(f, "alloc t%u %u%s\nfree t%u\n", i, 512 * (i % 9 + 1),
			i % 3 == 2 ? " stream=7" : "", i);
	fputs(tail, f);
	fclose(f);
	return path;
}

static void chunks_come_in_order_whole_with_their_streams(void **state)
{
	char err[WL_ERRLEN];
	struct wl_trace_stream *s;
	bool ended = false;
	unsigned chunks = 0, line = 0;
	char *path = write_trace(70000, "");

	(void)state;
	assert_int_equal(wl_trace_stream_open(path, &s, err, sizeof(err)), 0);
	const struct wl_trace *t = wl_trace_stream_trace(s);
	/* A file's chunks: 4096 events, 8192, then 16384 (7 of them), then the rest. */
	while (!ended) {
		assert_int_equal(wl_trace_stream_next(s, &ended, err, sizeof(err)), 0);
		size_t want = chunks == 0 ? 4096 : chunks == 1 ? 8192 : 16384;
		assert_int_equal(t->nevents, ended ? 140000 - 4096 - 8192 - 7 * 16384 : want);
		for (size_t i = 0; i < t->nevents; i++) {
			const struct wl_event *ev = &t->events[i];
			assert_int_equal(ev->line, ++line);
			assert_int_equal(ev->op, line % 2 ? WL_ALLOC : WL_FREE);
			if (ev->op == WL_ALLOC)
				assert_int_equal(ev->size, 512 * ((line / 2) % 9 + 1));
		}
		assert_int_equal(t->nstreams, 2);
		assert_int_equal(t->stream_number[1], 7);
		chunks++;
	}
	assert_int_equal(chunks, 10);
	assert_int_equal(line, 140000);
	assert_int_equal(wl_trace_stream_next(s, &ended, err, sizeof(err)), 0);
	assert_true(ended);
	assert_int_equal(t->nevents, 0);
	wl_trace_stream_close(s);
	unlink(path);
}

static void a_bad_line_is_the_error_of_its_chunk(void **state)
{
	char err[WL_ERRLEN], want[WL_ERRLEN + 64];
	struct wl_trace_stream *s;
	bool ended;
	char *path = write_trace(70000, "free t5\n");

	(void)state;
	assert_int_equal(wl_trace_stream_open(path, &s, err, sizeof(err)), 0);
	for (int chunk = 0; chunk < 9; chunk++) {
		assert_int_equal(wl_trace_stream_next(s, &ended, err, sizeof(err)), 0);
		assert_false(ended);
	}
	assert_int_equal(wl_trace_stream_trace(s)->nevents, 16384);
	snprintf(want, sizeof(want), "%s:140001: free of id 't5', freed on line 12", path);
	for (int again = 0; again < 2; again++) {
		err[0] = '\0';
		assert_int_equal(wl_trace_stream_next(s, &ended, err, sizeof(err)), -EINVAL);
		assert_false(ended);
		assert_string_equal(err, want);
	}
	wl_trace_stream_close(s);
	unlink(path);
}

/* Closed after its first chunk, with the reading thread waiting to hand
 * over the next: the close neither waits for the rest nor leaks. */
static void a_stream_closed_early_stops_reading(void **state)
{
	char err[WL_ERRLEN];
	struct wl_trace_stream *s;
	bool ended;
	char *path = write_trace(200000, "");

	(void)state;
	assert_int_equal(wl_trace_stream_open(path, &s, err, sizeof(err)), 0);
	assert_int_equal(wl_trace_stream_next(s, &ended, err, sizeof(err)), 0);
	assert_false(ended);
	wl_trace_stream_close(s);
	unlink(path);
}

/* The highest device=D of a trace whose last line is `tail`. */
static int scanned_max_device(const char *tail)
{
	char err[WL_ERRLEN];
	struct wl_trace_stream *s;
	char *path = write_trace(100000, tail);
	int max = -1;

	assert_int_equal(wl_trace_stream_open(path, &s, err, sizeof(err)), 0);
	assert_int_equal(wl_trace_stream_max_device(s, &max), 0);
	wl_trace_stream_close(s);
	unlink(path);
	return max;
}

static void the_scan_finds_a_device_far_past_the_first_chunk(void **state)
{
	(void)state;
	assert_int_equal(scanned_max_device("alloc x 512 device=3\nfree x\n"), 3);
	assert_int_equal(scanned_max_device(""), 0);
}

static void the_scan_finds_a_device_named_after_another_option(void **state)
{
	(void)state;
	assert_int_equal(scanned_max_device("alloc x 512 stream=7 device=5\nfree x\n"), 5);
}

/* An ID or a name is the first field, never an option. */
static void the_scan_takes_no_id_for_a_device_option(void **state)
{
	(void)state;
	assert_int_equal(scanned_max_device("alloc device=9 512\nfree device=9\n"), 0);
}

/*
 * The file is looked through a block at a time: a line that runs across
 * a block's end (1 MiB is one, whatever the block) is taken whole, not as
 * two halves that each name no device.
 */
static void the_scan_takes_a_line_across_a_block_whole(void **state)
{
	const long boundary = 1L << 20;
	const char line[] = "alloc y 512 device=6\n";
	char err[WL_ERRLEN], path[] = "/tmp/npumemfs-stream-XXXXXX";
	struct wl_trace_stream *s;
	int fd = mkstemp(path), max = -1;
	FILE *f = fdopen(fd, "w");

	(void)state;
	assert_non_null(f);
	/* comment lines up to 10 bytes before the boundary */
	for (long at = 0; at < boundary - 10;) {
		long n = boundary - 10 - at > 100 ? 100 : boundary - 10 - at;
		fprintf(f, "#%.*s\n", (int)(n - 2), "................................................"
						     "..................................................");
		at += n;
	}
	assert_int_equal(ftell(f), boundary - 10);
	fputs(line, f);
	fputs("free y\n", f);
	fclose(f);
	assert_int_equal(wl_trace_stream_open(path, &s, err, sizeof(err)), 0);
	assert_int_equal(wl_trace_stream_max_device(s, &max), 0);
	assert_int_equal(max, 6);
	wl_trace_stream_close(s);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunks_come_in_order_whole_with_their_streams),
		cmocka_unit_test(a_bad_line_is_the_error_of_its_chunk),
		cmocka_unit_test(a_stream_closed_early_stops_reading),
		cmocka_unit_test(the_scan_finds_a_device_far_past_the_first_chunk),
		cmocka_unit_test(the_scan_finds_a_device_named_after_another_option),
		cmocka_unit_test(the_scan_takes_no_id_for_a_device_option),
		cmocka_unit_test(the_scan_takes_a_line_across_a_block_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

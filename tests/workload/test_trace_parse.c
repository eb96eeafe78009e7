/*
 * test_trace_parse.c - what the trace parser accepts, what it refuses, and
 * how it resolves IDs, streams, devices and sizes before anything runs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload/trace.h"

#include "bad_traces.h"

static int parse_text(const char *text, size_t len, struct wl_trace **t, char *err)
{
	FILE *f = fmemopen((void *)text, len ? len : strlen(text), "r");
	int rc;

	assert_non_null(f);
	err[0] = '\0';
	rc = wl_trace_parse(f, "t", t, err, WL_ERRLEN);
	fclose(f);
	return rc;
}

static struct wl_trace *parse_ok(const char *text)
{
	char err[WL_ERRLEN];
	struct wl_trace *t = NULL;
	int rc = parse_text(text, 0, &t, err);

	if (rc != 0)
		fail_msg("parse failed: %s", err);
	return t;
}

static void bad_trace_gives_trace_line_reason(void **state)
{
	const struct bad_trace *b = *state;
	char err[WL_ERRLEN];
	struct wl_trace *t = NULL;

	assert_int_equal(parse_text(b->text, b->len, &t, err), -EINVAL);
	assert_string_equal(err, b->message);
	assert_null(t);
}

static void comments_and_blank_lines_are_skipped_but_counted(void **state)
{
	struct wl_trace *t = parse_ok("# a trace\n\n   \nalloc a 1 # the first\n"
				      "\t\n#free a\nfree a\n");

	(void)state;
	assert_int_equal(t->nevents, 2);
	assert_int_equal(t->events[0].op, WL_ALLOC);
	assert_int_equal(t->events[0].line, 4);
	assert_int_equal(t->events[1].op, WL_FREE);
	assert_int_equal(t->events[1].line, 7);
	wl_trace_free(t);
}

static void sizes_take_iec_suffixes(void **state)
{
	struct wl_trace *t = parse_ok("alloc a 4096\nalloc b 1KiB\nalloc c 2MiB\n"
				      "alloc d 3GiB\nalloc e 5TiB\nalloc f 0\n");

	(void)state;
	assert_int_equal(t->nevents, 6);
	assert_int_equal(t->events[0].size, 4096);
	assert_int_equal(t->events[1].size, 1024);
	assert_int_equal(t->events[2].size, 2097152);
	assert_int_equal(t->events[3].size, 3221225472ULL);
	assert_int_equal(t->events[4].size, 5ULL << 40);
	assert_int_equal(t->events[5].size, 0);
	wl_trace_free(t);
}

static void tabs_and_crlf_separate_fields(void **state)
{
	struct wl_trace *t = parse_ok("alloc\ta\t 1MiB\r\nfree a\r\n");

	(void)state;
	assert_int_equal(t->nevents, 2);
	assert_int_equal(t->events[0].size, 1048576);
	wl_trace_free(t);
}

/* A plain line ("alloc ID SIZE", "free ID", single spaces) is read by the
 * fast path, the same line with other blanks by the general parser: the
 * events are the same, up to a SIZE of 19 digits. */
static void plain_lines_give_the_events_of_the_general_parser(void **state)
{
	struct wl_trace *fast = parse_ok("alloc a 4096\nalloc b 0007\nfree a\n"
					 "alloc c 9999999999999999999\nalloc a 1\n"
					 "free b\nfree c\nfree a\n");
	struct wl_trace *slow = parse_ok("alloc\ta 4096\nalloc b\t0007\nfree\ta\n"
					 "alloc c  9999999999999999999\nalloc a 1 \n"
					 "free b \nfree\tc\nfree  a\n");

	(void)state;
	assert_int_equal(fast->nevents, 8);
	assert_int_equal(slow->nevents, 8);
	assert_int_equal(fast->nslots, slow->nslots);
	for (size_t i = 0; i < 8; i++) {
		const struct wl_event *f = &fast->events[i], *s = &slow->events[i];
		assert_int_equal(f->op, s->op);
		assert_int_equal(f->slot, s->slot);
		assert_int_equal(f->line, s->line);
		assert_int_equal(f->device, s->device);
		assert_int_equal(f->stream, s->stream);
		assert_int_equal(f->size, s->size);
	}
	assert_int_equal(fast->events[0].size, 4096);
	assert_int_equal(fast->events[1].size, 7);
	assert_true(fast->events[3].size == 9999999999999999999ull);
	assert_int_equal(fast->events[4].slot, 0); /* a's slot again */
	wl_trace_free(fast);
	wl_trace_free(slow);
}

/* The events of `fast` and `slow`, which must be the same. */
static void assert_same_events(const struct wl_trace *fast, const struct wl_trace *slow)
{
	assert_int_equal(fast->nevents, slow->nevents);
	assert_int_equal(fast->nslots, slow->nslots);
	for (size_t i = 0; i < fast->nevents; i++) {
		const struct wl_event *f = &fast->events[i], *s = &slow->events[i];
		assert_int_equal(f->op, s->op);
		assert_int_equal(f->slot, s->slot);
		assert_int_equal(f->line, s->line);
		assert_true(f->size == s->size);
	}
}

/* "alloc ID SIZE" then "free ID" for an ID of `id_len` bytes and a SIZE
 * of `digits` digits, fields split by `blank`, into buf. */
static void alloc_free_lines(char *buf, size_t cap, size_t id_len, size_t digits, char blank)
{
	char id[32], size[32];

	for (size_t i = 0; i < id_len; i++)
		id[i] = (char)('a' + (i * 7 + id_len) % 26);
	id[id_len] = '\0';
	for (size_t i = 0; i < digits; i++)
		size[i] = (char)('1' + (i * 3 + digits) % 9);
	size[digits] = '\0';
	snprintf(buf, cap, "alloc%c%s%c%s\nfree%c%s\n", blank, id, blank, size, blank, id);
}

/* The fast path reads an ID and a SIZE a word at a time: every length of
 * each, across one word and two, gives the general parser's events. */
static void ids_and_sizes_of_every_length_give_the_events_of_the_general_parser(void **state)
{
	char fast_text[128], slow_text[128];

	(void)state;
	for (size_t id_len = 1; id_len <= 20; id_len++) {
		for (size_t digits = 1; digits <= 19; digits++) {
			alloc_free_lines(fast_text, sizeof(fast_text), id_len, digits, ' ');
			alloc_free_lines(slow_text, sizeof(slow_text), id_len, digits, '\t');
			struct wl_trace *fast = parse_ok(fast_text), *slow = parse_ok(slow_text);
			assert_same_events(fast, slow);
			wl_trace_free(fast);
			wl_trace_free(slow);
		}
	}
}

/* The message of a trace that must be refused. */
static void refusal(const char *text, char *err)
{
	struct wl_trace *t = NULL;

	assert_int_equal(parse_text(text, 0, &t, err), -EINVAL);
	assert_null(t);
}

/* A plain line with a byte that is not a digit in its SIZE, or that ends
 * its ID early, gives what the same line with tabs gives: the bytes next
 * to '0' and '9' ('/', ':') and a '#' in a word read whole included. */
static void a_plain_line_with_a_stray_byte_gives_the_general_refusal(void **state)
{
	static const char *const lines[][2] = {
		{ "alloc a 12/4\n", "alloc\ta\t12/4\n" },
		{ "alloc a 1234567:\n", "alloc\ta\t1234567:\n" },
		{ "alloc abcdefg 1x\n", "alloc\tabcdefg\t1x\n" },
		{ "alloc abc#defgh 5\n", "alloc\tabc#defgh\t5\n" },
		{ "alloc a 5\nfree abcdefghij#k\n", "alloc\ta\t5\nfree\tabcdefghij#k\n" },
	};
	char fast[WL_ERRLEN], slow[WL_ERRLEN];

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		refusal(lines[i][0], fast);
		refusal(lines[i][1], slow);
		assert_string_equal(fast, slow);
	}
}

static void ids_are_any_tokens_resolved_to_dense_slots(void **state)
{
	struct wl_trace *t = parse_ok("alloc 0x7f3a8c000000 512\nalloc tensor/weights:0 1\n"
				      "free 0x7f3a8c000000\nalloc 0x7f3a8c000000 3\n"
				      "free tensor/weights:0\n");

	(void)state;
	assert_int_equal(t->nslots, 2);
	assert_int_equal(t->events[0].slot, 0);
	assert_int_equal(t->events[1].slot, 1);
	assert_int_equal(t->events[2].slot, 0);
	assert_int_equal(t->events[3].slot, 0);
	assert_int_equal(t->events[4].slot, 1);
	wl_trace_free(t);
}

static void streams_become_dense_indexes_with_zero_the_default(void **state)
{
	struct wl_trace *t = parse_ok("alloc a 1\nalloc b 1 stream=7\nrecord_stream a 3\n"
				      "sync 7\nsync\nsync 0\n");

	(void)state;
	assert_int_equal(t->events[0].stream, 0);
	assert_int_equal(t->events[1].stream, 1);
	assert_int_equal(t->events[2].stream, 2);
	assert_int_equal(t->events[3].stream, 1);
	assert_int_equal(t->events[4].stream, -1);
	assert_int_equal(t->events[5].stream, 0);
	assert_int_equal(t->nstreams, 3);
	assert_int_equal(t->stream_number[1], 7);
	assert_int_equal(t->stream_number[2], 3);
	assert_int_equal(t->max_stream, 7);
	wl_trace_free(t);
}

static void free_and_record_stream_carry_the_device_of_their_id(void **state)
{
	struct wl_trace *t = parse_ok("alloc a 1 device=3\nrecord_stream a 1\nfree a\n");

	(void)state;
	assert_int_equal(t->events[0].device, 3);
	assert_int_equal(t->events[1].device, 3);
	assert_int_equal(t->events[2].device, 3);
	assert_int_equal(t->max_device, 3);
	wl_trace_free(t);
}

static void fraction_accepts_zero_and_one_with_a_device(void **state)
{
	struct wl_trace *t = parse_ok("fraction 0\nfraction 1 device=2\nfraction 0.25\n");

	(void)state;
	assert_true(t->events[0].fraction == 0.0);
	assert_true(t->events[1].fraction == 1.0);
	assert_int_equal(t->events[1].device, 2);
	assert_true(t->events[2].fraction == 0.25);
	assert_int_equal(t->events[2].device, 0);
	wl_trace_free(t);
}

static void every_command_has_its_op(void **state)
{
	struct wl_trace *t = parse_ok("alloc a 1\nrecord_stream a 1\nfree a\nsync 1\n"
				      "empty_cache\nreset_peak\nreset_accumulated\n"
				      "fraction 0.5\nempty_virt_addr_cache\n");
	static const enum wl_op ops[] = {
		WL_ALLOC, WL_RECORD_STREAM, WL_FREE, WL_SYNC, WL_EMPTY_CACHE,
		WL_RESET_PEAK, WL_RESET_ACCUMULATED, WL_FRACTION, WL_EMPTY_VIRT_ADDR_CACHE,
	};

	(void)state;
	assert_int_equal(t->nevents, 9);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(t->events[i].op, ops[i]);
	wl_trace_free(t);
}

/* A graph name keeps its index; each unnamed capture is a graph of its own. */
static void captures_resolve_graphs_pools_and_streams(void **state)
{
	struct wl_trace *t = parse_ok("capture_begin 3 pool=P graph=g device=2 mode=relaxed\n"
				      "alloc a 1 stream=3 device=2\ncapture_end 3\n"
				      "capture_begin 1 pool=P\nsync 3\ncapture_end 1\n"
				      "capture_begin 1\ncapture_end 1\n"
				      "graph_reset g\ncapture_begin 1 graph=g\ncapture_end 1\n"
				      "graph_replay g stream=5\ngraph_replay g\n"
				      "capture_begin 4 graph=h device=2\ncapture_end 4\ngraph_replay h\n");
	const struct wl_event *ev = t->events;

	(void)state;
	assert_int_equal(t->nevents, 16);
	assert_int_equal(ev[0].op, WL_CAPTURE_BEGIN);
	assert_int_equal(ev[0].slot, 0);
	assert_int_equal(ev[0].pool, 0);
	assert_int_equal(ev[0].device, 2);
	assert_int_equal(ev[0].flags, ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
	assert_int_equal(t->stream_number[ev[0].stream], 3);
	assert_int_equal(ev[2].op, WL_CAPTURE_END);
	assert_int_equal(ev[2].slot, 0);
	assert_int_equal(ev[2].device, 2);
	assert_int_equal(ev[2].stream, ev[0].stream);
	/* The same pool name, another graph. */
	assert_int_equal(ev[3].slot, 1);
	assert_int_equal(ev[3].pool, 0);
	assert_int_equal(ev[3].device, 0);
	assert_int_equal(ev[4].op, WL_SYNC);
	assert_int_equal(ev[5].slot, 1);
	assert_int_equal(ev[6].slot, 2);
	assert_int_equal(ev[6].pool, WL_NO_POOL);
	assert_int_equal(ev[6].flags, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
	assert_int_equal(ev[8].op, WL_GRAPH_RESET);
	assert_int_equal(ev[8].slot, 0);
	assert_int_equal(ev[9].slot, 0);
	assert_int_equal(ev[11].op, WL_GRAPH_REPLAY);
	assert_int_equal(t->stream_number[ev[11].stream], 5);
	/* Replayed where its latest capture was: device 0 now. */
	assert_int_equal(ev[11].device, 0);
	assert_int_equal(ev[12].stream, 0);
	assert_int_equal(ev[15].slot, 3);
	assert_int_equal(ev[15].device, 2);
	assert_int_equal(t->ngraphs, 4);
	assert_int_equal(t->npools, 1);
	assert_int_equal(t->max_device, 2);
	wl_trace_free(t);
}

/* pool=graph:G names graph G's pool; pool=handle:H and bare pool=H one handle. */
static void pool_graph_names_a_graph_and_pool_handle_the_bare_name(void **state)
{
	struct wl_trace *t = parse_ok("capture_begin 1 graph=g0\ncapture_end 1\n"
				      "capture_begin 2 graph=g1 pool=graph:g0\ncapture_end 2\n"
				      "capture_begin 3 pool=handle:P\ncapture_end 3\n"
				      "capture_begin 4 pool=P\ncapture_end 4\n");
	const struct wl_event *ev = t->events;

	(void)state;
	assert_int_equal(ev[0].flags & WL_POOL_OF_GRAPH, 0);
	assert_int_equal(ev[2].flags & WL_POOL_OF_GRAPH, WL_POOL_OF_GRAPH);
	assert_int_equal(ev[2].pool, ev[0].slot);
	assert_int_equal(ev[2].flags & ~WL_POOL_OF_GRAPH, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
	assert_int_equal(ev[4].pool, ev[6].pool);
	assert_int_equal(ev[4].flags & WL_POOL_OF_GRAPH, 0);
	assert_int_equal(t->npools, 1);
	wl_trace_free(t);
}

static void mempools_take_flags_and_share_names_with_pools(void **state)
{
	struct wl_trace *t = parse_ok("mempool_create m no_split use_on_oom device=1\n"
				      "mempool_create n use_on_oom\nmempool_begin m stream=0\n"
				      "alloc a 1 device=1\nmempool_end m\n"
				      "capture_begin 2 pool=n\ncapture_end 2\n"
				      "mempool_begin m stream=2\nmempool_end m\nmempool_release m\n"
				      "mempool_release n\n");
	const struct wl_event *ev = t->events;
	static const enum wl_op ops[] = {
		WL_MEMPOOL_CREATE, WL_MEMPOOL_CREATE, WL_MEMPOOL_BEGIN, WL_ALLOC,
		WL_MEMPOOL_END, WL_CAPTURE_BEGIN, WL_CAPTURE_END, WL_MEMPOOL_BEGIN,
		WL_MEMPOOL_END, WL_MEMPOOL_RELEASE, WL_MEMPOOL_RELEASE,
	};

	(void)state;
	assert_int_equal(t->nevents, 11);
	for (size_t i = 0; i < 11; i++)
		assert_int_equal(ev[i].op, ops[i]);
	assert_int_equal(ev[0].flags, WL_POOL_USE_ON_OOM | WL_POOL_NO_SPLIT);
	assert_int_equal(ev[0].pool, 0);
	assert_int_equal(ev[0].device, 1);
	assert_int_equal(ev[1].flags, WL_POOL_USE_ON_OOM);
	assert_int_equal(ev[1].pool, 1);
	assert_int_equal(ev[1].device, 0);
	/* A mempool's lines are on its device. */
	assert_int_equal(ev[2].device, 1);
	assert_int_equal(ev[2].stream, 0);
	assert_int_equal(ev[4].device, 1);
	assert_int_equal(ev[5].pool, 1);
	assert_int_equal(t->stream_number[ev[7].stream], 2);
	assert_int_equal(ev[9].pool, 0);
	assert_int_equal(ev[10].pool, 1);
	assert_int_equal(t->npools, 2);
	assert_int_equal(t->ngraphs, 1);
	wl_trace_free(t);
}

/* A line of WL_LINE_MAX bytes is read; one byte more is refused at its line. */
static void a_line_longer_than_4096_bytes_is_refused(void **state)
{
	size_t len = 10 + WL_LINE_MAX + 2;
	char *text = malloc(len + 1), err[WL_ERRLEN] = "";
	struct wl_trace *t = NULL;

	(void)state;
	assert_non_null(text);
	strcpy(text, "alloc a 1\n");
	memset(text + 10, '#', WL_LINE_MAX);
	strcpy(text + 10 + WL_LINE_MAX, "\n");
	assert_int_equal(parse_text(text, 0, &t, err), 0);
	assert_int_equal(t->nevents, 1);
	wl_trace_free(t);
	t = NULL;
	strcpy(text + 10 + WL_LINE_MAX, "#\n");
	assert_int_equal(parse_text(text, 0, &t, err), -EINVAL);
	assert_string_equal(err, "t:2: line longer than 4096 bytes");
	assert_null(t);
	free(text);
}

/* The reader looks for NUL bytes a block (64 KiB) at a time: one far into
 * the file is found on its line, and one past the first 4097 bytes of a
 * line leaves it a line too long, as a reader of one byte at a time finds. */
static void a_nul_byte_past_the_first_block_names_its_line(void **state)
{
	const size_t pairs = 100000; /* 2.6 MB of lines before it */
	size_t cap = pairs * 32 + 2 * WL_LINE_MAX + 64, n = 0;
	char *text = malloc(cap), err[WL_ERRLEN] = "";
	struct wl_trace *t = NULL;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < pairs; i++)
		n += (size_t)sprintf(text + n, "alloc a%zu 1\nfree a%zu\n", i, i);
	size_t line = n;
	memcpy(text + n, "sync\0 1\n", 8);
	assert_int_equal(parse_text(text, n + 8, &t, err), -EINVAL);
	assert_string_equal(err, "t:200001: NUL byte in line");
	memset(text + line, '#', WL_LINE_MAX + 1);
	memcpy(text + line + WL_LINE_MAX + 1, "\0\n", 2);
	assert_int_equal(parse_text(text, line + WL_LINE_MAX + 3, &t, err), -EINVAL);
	assert_string_equal(err, "t:200001: line longer than 4096 bytes");
	free(text);
}

/* Weights before loop_start, steps after it that free what they allocate
 * (an ID freed and allocated again in the steps is fine). */
static void loop_start_marks_the_first_repeated_event(void **state)
{
	struct wl_trace *t = parse_ok("alloc w 4MiB\nalloc b 1\nloop_start\nfree b\n"
				      "alloc x 2MiB\nfree x\nalloc b 1\n");

	(void)state;
	assert_true(t->has_loop);
	assert_int_equal(t->loop_from, 2);
	assert_int_equal(t->nevents, 6);
	assert_int_equal(t->events[t->loop_from].line, 4);
	wl_trace_free(t);
}

static void a_trace_without_loop_start_has_no_loop(void **state)
{
	struct wl_trace *t = parse_ok("alloc a 1\nfree a\n");

	(void)state;
	assert_false(t->has_loop);
	wl_trace_free(t);
}

static void empty_trace_has_no_events(void **state)
{
	struct wl_trace *t = parse_ok("# nothing\n");

	(void)state;
	assert_int_equal(t->nevents, 0);
	assert_int_equal(t->nslots, 0);
	wl_trace_free(t);
}

static void missing_file_gives_its_name_and_enoent(void **state)
{
	char err[WL_ERRLEN];
	struct wl_trace *t = NULL;

	(void)state;
	assert_int_equal(wl_trace_load("/nonexistent/x.trace", &t, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/x.trace: No such file or directory");
	assert_null(t);
}

static void load_names_messages_after_the_path(void **state)
{
	char path[] = "/tmp/npumemfs-trace-XXXXXX";
	int fd = mkstemp(path);
	char err[WL_ERRLEN], want[WL_ERRLEN + 64];
	struct wl_trace *t = NULL;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "alloc a 1\nfree b\n", 17), 17);
	close(fd);
	assert_int_equal(wl_trace_load(path, &t, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: free of unknown id 'b'", path);
	assert_string_equal(err, want);
	unlink(path);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(comments_and_blank_lines_are_skipped_but_counted),
		cmocka_unit_test(sizes_take_iec_suffixes),
		cmocka_unit_test(tabs_and_crlf_separate_fields),
		cmocka_unit_test(plain_lines_give_the_events_of_the_general_parser),
		cmocka_unit_test(ids_and_sizes_of_every_length_give_the_events_of_the_general_parser),
		cmocka_unit_test(a_plain_line_with_a_stray_byte_gives_the_general_refusal),
		cmocka_unit_test(ids_are_any_tokens_resolved_to_dense_slots),
		cmocka_unit_test(streams_become_dense_indexes_with_zero_the_default),
		cmocka_unit_test(free_and_record_stream_carry_the_device_of_their_id),
		cmocka_unit_test(fraction_accepts_zero_and_one_with_a_device),
		cmocka_unit_test(every_command_has_its_op),
		cmocka_unit_test(captures_resolve_graphs_pools_and_streams),
		cmocka_unit_test(pool_graph_names_a_graph_and_pool_handle_the_bare_name),
		cmocka_unit_test(mempools_take_flags_and_share_names_with_pools),
		cmocka_unit_test(a_line_longer_than_4096_bytes_is_refused),
		cmocka_unit_test(a_nul_byte_past_the_first_block_names_its_line),
		cmocka_unit_test(empty_trace_has_no_events),
		cmocka_unit_test(loop_start_marks_the_first_repeated_event),
		cmocka_unit_test(a_trace_without_loop_start_has_no_loop),
		cmocka_unit_test(missing_file_gives_its_name_and_enoent),
		cmocka_unit_test(load_names_messages_after_the_path),
	};
	static struct CMUnitTest tests[NBAD_TRACES + sizeof(fixed) / sizeof(fixed[0])];
	size_t n = 0;

	for (size_t i = 0; i < NBAD_TRACES; i++) {
		struct CMUnitTest c = cmocka_unit_test_prestate(bad_trace_gives_trace_line_reason,
								(void *)&bad_traces[i]);
		c.name = bad_traces[i].name;
		tests[n++] = c;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		tests[n++] = fixed[i];
	return _cmocka_run_group_tests("trace_parse", tests, n, NULL, NULL);
}

/*
 * test_trace_gen.c - the trace generators are deterministic and write
 * traces the parser accepts, with the shapes their names promise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workload/trace.h"
#include "workload/trace_gen.h"

struct text {
	char *data;
	size_t len;
};

static struct text generate_with(enum wl_gen_kind kind, const struct wl_gen_options *opt)
{
	struct text t = { 0 };
	FILE *f = open_memstream(&t.data, &t.len);

	assert_non_null(f);
	assert_int_equal(wl_gen_write(kind, opt, f), 0);
	assert_int_equal(fclose(f), 0);
	return t;
}

static struct text generate(enum wl_gen_kind kind, uint64_t seed, unsigned steps)
{
	struct wl_gen_options opt = { .seed = seed, .steps = steps };

	return generate_with(kind, &opt);
}

static struct wl_trace *parse(const struct text *text)
{
	char err[WL_ERRLEN] = "";
	struct wl_trace *t = NULL;
	FILE *f = fmemopen(text->data, text->len, "r");

	assert_non_null(f);
	if (wl_trace_parse(f, "gen", &t, err, sizeof(err)) != 0)
		fail_msg("generated trace does not parse: %s", err);
	fclose(f);
	return t;
}

static size_t count_op(const struct wl_trace *t, enum wl_op op)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nevents; i++)
		n += t->events[i].op == op;
	return n;
}

static void same_seed_gives_identical_text(enum wl_gen_kind kind, unsigned steps)
{
	struct text a = generate(kind, 42, steps), b = generate(kind, 42, steps);

	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	free(a.data);
	free(b.data);
}

static void different_seeds_give_different_text(enum wl_gen_kind kind, unsigned steps)
{
	struct text a = generate(kind, 1, steps), b = generate(kind, 2, steps);

	assert_true(a.len != b.len || memcmp(a.data, b.data, a.len) != 0);
	free(a.data);
	free(b.data);
}

static void training_is_deterministic(void **state)
{
	(void)state;
	same_seed_gives_identical_text(WL_GEN_TRAINING, 3);
	different_seeds_give_different_text(WL_GEN_TRAINING, 3);
}

static void churn_is_deterministic(void **state)
{
	(void)state;
	same_seed_gives_identical_text(WL_GEN_CHURN, 5000);
	different_seeds_give_different_text(WL_GEN_CHURN, 5000);
}

static void random_is_deterministic(void **state)
{
	(void)state;
	same_seed_gives_identical_text(WL_GEN_RANDOM, 5000);
	different_seeds_give_different_text(WL_GEN_RANDOM, 5000);
}

static void first_line_says_how_the_trace_was_made(void **state)
{
	struct text a = generate(WL_GEN_CHURN, 7, 10);
	const char *want = "# npumem-gentrace churn --seed 7 --steps 10\n";

	(void)state;
	assert_true(a.len > strlen(want));
	assert_memory_equal(a.data, want, strlen(want));
	free(a.data);
}

/* Every allocation is freed by the end, so a replay leaves nothing live. */
static void assert_balanced(const struct wl_trace *t)
{
	assert_int_equal(count_op(t, WL_ALLOC), count_op(t, WL_FREE));
}

static void training_parses_with_streams_and_syncs(void **state)
{
	struct text a = generate(WL_GEN_TRAINING, 1, 4);
	struct wl_trace *t = parse(&a);

	(void)state;
	/* Per step: the prefetched batch, and 3 all-reduced gradient buckets. */
	assert_int_equal(count_op(t, WL_RECORD_STREAM), 4 * (1 + 3));
	/* Per step: sync 1 (prefetch), sync 2 (all-reduce), sync 0. */
	assert_int_equal(count_op(t, WL_SYNC), 4 * 3);
	assert_int_equal(t->nstreams, 3);
	wl_trace_free(t);
	free(a.data);
}

/* 12 layers of 12 parameters and the embedding; Adam's two moments for
 * each layer and the embedding. */
#define TRAINING_PERSISTENT (12 * 12 + 1 + 2 * 13)

static void training_keeps_weights_and_adam_state_and_loops_over_steps(void **state)
{
	struct text a = generate(WL_GEN_TRAINING, 1, 4);
	struct wl_trace *t = parse(&a);

	(void)state;
	assert_int_equal(count_op(t, WL_ALLOC) - count_op(t, WL_FREE), TRAINING_PERSISTENT);
	assert_true(t->has_loop);
	/* The steps after the first repeat: loop_start follows step 0's last sync. */
	assert_int_equal(t->events[t->loop_from - 1].op, WL_FREE);
	assert_int_equal(t->events[t->loop_from - 2].op, WL_SYNC);
	assert_true(strstr(a.data, "\nloop_start\n# step 1,") != NULL);
	wl_trace_free(t);
	free(a.data);
}

static void churn_sizes_lie_between_512_bytes_and_1_mib(void **state)
{
	struct text a = generate(WL_GEN_CHURN, 3, 20000);
	struct wl_trace *t = parse(&a);
	uint64_t lo = UINT64_MAX, hi = 0;

	(void)state;
	assert_balanced(t);
	for (size_t i = 0; i < t->nevents; i++) {
		if (t->events[i].op != WL_ALLOC)
			continue;
		lo = t->events[i].size < lo ? t->events[i].size : lo;
		hi = t->events[i].size > hi ? t->events[i].size : hi;
	}
	assert_true(lo >= 512 && lo < 1024);
	assert_true(hi < 1048576 && hi >= 524288);
	wl_trace_free(t);
	free(a.data);
}

static void churn_live_set_stays_at_most_1000(void **state)
{
	struct text a = generate(WL_GEN_CHURN, 3, 20000);
	struct wl_trace *t = parse(&a);
	long live = 0, most = 0;

	(void)state;
	for (size_t i = 0; i < t->nevents; i++) {
		live += t->events[i].op == WL_ALLOC ? 1 : -1;
		most = live > most ? live : most;
	}
	assert_true(most <= 1000);
	assert_true(most >= 500);
	wl_trace_free(t);
	free(a.data);
}

/* The trace: 512 B to 4 MiB, about 2,000 live blocks. */
static void churn_live_and_max_size_set_its_shape(void **state)
{
	struct wl_gen_options opt = { .seed = 3, .steps = 40000, .live = 2000,
				       .max_size = 4ULL << 20 };
	struct text a = generate_with(WL_GEN_CHURN, &opt);
	struct wl_trace *t = parse(&a);
	const char *want = "# npumem-gentrace churn --seed 3 --steps 40000 --live 2000 "
			   "--max-size 4194304\n";
	uint64_t hi = 0;
	long live = 0, most = 0;

	(void)state;
	assert_balanced(t);
	for (size_t i = 0; i < t->nevents; i++) {
		live += t->events[i].op == WL_ALLOC ? 1 : -1;
		most = live > most ? live : most;
		if (t->events[i].op == WL_ALLOC && t->events[i].size > hi)
			hi = t->events[i].size;
	}
	assert_true(most <= 2666 && most >= 1800);
	assert_true(hi < (4ULL << 20) && hi >= (2ULL << 20));
	assert_true(strncmp(a.data, want, strlen(want)) == 0);
	wl_trace_free(t);
	free(a.data);
}

static void random_sizes_are_at_most_64_mib_and_live_bytes_at_most_8_gib(void **state)
{
	struct text a = generate(WL_GEN_RANDOM, 9, 20000);
	struct wl_trace *t = parse(&a);
	uint64_t *size = calloc(t->nslots, sizeof(*size));
	uint64_t live = 0, most = 0;

	(void)state;
	assert_balanced(t);
	for (size_t i = 0; i < t->nevents; i++) {
		const struct wl_event *ev = &t->events[i];
		if (ev->op == WL_ALLOC) {
			assert_true(ev->size >= 1 && ev->size <= (64ULL << 20));
			size[ev->slot] = ev->size;
			live += ev->size;
		} else {
			live -= size[ev->slot];
		}
		most = live > most ? live : most;
	}
	assert_true(most <= (8ULL << 30));
	assert_true(most > (4ULL << 30));
	free(size);
	wl_trace_free(t);
	free(a.data);
}

static void steps_count_events_before_the_final_frees(void **state)
{
	struct text a = generate(WL_GEN_RANDOM, 5, 1000);
	struct wl_trace *t = parse(&a);
	size_t allocs_in_steps = 0;

	(void)state;
	/* After 1000 events only frees follow. */
	for (size_t i = 1000; i < t->nevents; i++)
		assert_int_equal(t->events[i].op, WL_FREE);
	for (size_t i = 0; i < 1000; i++)
		allocs_in_steps += t->events[i].op == WL_ALLOC;
	assert_int_equal(t->nevents, 1000 + (allocs_in_steps - (1000 - allocs_in_steps)));
	wl_trace_free(t);
	free(a.data);
}

static void kinds_are_found_by_name(void **state)
{
	enum wl_gen_kind k;

	(void)state;
	assert_int_equal(wl_gen_kind_find("training", &k), 0);
	assert_int_equal(k, WL_GEN_TRAINING);
	assert_int_equal(wl_gen_kind_find("churn", &k), 0);
	assert_int_equal(k, WL_GEN_CHURN);
	assert_int_equal(wl_gen_kind_find("random", &k), 0);
	assert_int_equal(k, WL_GEN_RANDOM);
	assert_int_equal(wl_gen_kind_find("inference", &k), -EINVAL);
	assert_string_equal(wl_gen_kind_name(WL_GEN_CHURN), "churn");
}

static void batches_are_vllm_sizes_in_a_range_or_a_list(void **state)
{
	struct wl_gen_options o = { 0 };
	static const unsigned vllm[] = { 1, 2, 4, 8, 16, 24, 32 };

	(void)state;
	assert_int_equal(wl_gen_parse_batches("1..32", &o), 0);
	assert_int_equal(o.nbatches, 7);
	assert_memory_equal(o.batches, vllm, sizeof(vllm));
	assert_int_equal(wl_gen_parse_batches(WL_GEN_DEFAULT_BATCHES, &o), 0);
	assert_int_equal(o.nbatches, 35);
	assert_int_equal(o.batches[34], 256);
	assert_int_equal(wl_gen_parse_batches("3,5,1000", &o), 0);
	assert_int_equal(o.nbatches, 3);
	assert_int_equal(o.batches[2], 1000);
	/* Refused, and nothing changes. */
	assert_int_equal(wl_gen_parse_batches("3..3", &o), -EINVAL);
	assert_int_equal(wl_gen_parse_batches("8..1", &o), -EINVAL);
	assert_int_equal(wl_gen_parse_batches("0..8", &o), -EINVAL);
	assert_int_equal(wl_gen_parse_batches("1..1025", &o), -EINVAL);
	assert_int_equal(wl_gen_parse_batches("2,2", &o), -EINVAL);
	assert_int_equal(wl_gen_parse_batches("1,", &o), -EINVAL);
	assert_int_equal(wl_gen_parse_batches("", &o), -EINVAL);
	assert_int_equal(o.nbatches, 3);
}

/* One capture per size, largest first, each ended; replays only of them. */
static void decode_graphs_captures_each_size_once_then_replays(void **state)
{
	struct wl_gen_options opt = { .seed = 7, .steps = 50 };

	(void)state;
	assert_int_equal(wl_gen_parse_batches("1..64", &opt), 0);
	struct text text = generate_with(WL_GEN_DECODE_GRAPHS, &opt);
	struct wl_trace *t = parse(&text);
	assert_int_equal(count_op(t, WL_CAPTURE_BEGIN), 11);
	assert_int_equal(count_op(t, WL_CAPTURE_END), 11);
	assert_int_equal(count_op(t, WL_GRAPH_REPLAY), 50);
	assert_int_equal(t->ngraphs, 11);
	assert_int_equal(t->npools, 1);
	assert_non_null(strstr(text.data, "capture_begin 1 pool=graphs graph=b64\n"));
	assert_true(strstr(text.data, "graph=b64") < strstr(text.data, "graph=b1\n"));
	wl_trace_free(t);
	free(text.data);
}

static void decode_graphs_without_sharing_names_no_pool(void **state)
{
	struct wl_gen_options opt = { .seed = 1, .steps = 1, .own_pools = true };
	struct text text = generate_with(WL_GEN_DECODE_GRAPHS, &opt);

	(void)state;
	struct wl_trace *t = parse(&text);
	assert_int_equal(t->ngraphs, 35);
	assert_int_equal(t->npools, 0);
	wl_trace_free(t);
	free(text.data);
}

/* The eager baseline: the same decode steps, each running its layers on
 * the default stream; no graph, no pool. */
static void decode_without_graphs_captures_nothing(void **state)
{
	struct wl_gen_options opt = { .seed = 1, .steps = 3, .no_graphs = true };
	struct text text = generate_with(WL_GEN_DECODE_GRAPHS, &opt);

	(void)state;
	struct wl_trace *t = parse(&text);
	assert_int_equal(count_op(t, WL_CAPTURE_BEGIN), 0);
	assert_int_equal(count_op(t, WL_GRAPH_REPLAY), 0);
	assert_int_equal(t->ngraphs, 0);
	assert_int_equal(t->nstreams, 1);
	assert_null(strstr(text.data, "stream="));
	wl_trace_free(t);
	free(text.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(training_is_deterministic),
		cmocka_unit_test(churn_is_deterministic),
		cmocka_unit_test(random_is_deterministic),
		cmocka_unit_test(first_line_says_how_the_trace_was_made),
		cmocka_unit_test(training_parses_with_streams_and_syncs),
		cmocka_unit_test(training_keeps_weights_and_adam_state_and_loops_over_steps),
		cmocka_unit_test(churn_sizes_lie_between_512_bytes_and_1_mib),
		cmocka_unit_test(churn_live_set_stays_at_most_1000),
		cmocka_unit_test(churn_live_and_max_size_set_its_shape),
		cmocka_unit_test(random_sizes_are_at_most_64_mib_and_live_bytes_at_most_8_gib),
		cmocka_unit_test(steps_count_events_before_the_final_frees),
		cmocka_unit_test(kinds_are_found_by_name),
		cmocka_unit_test(batches_are_vllm_sizes_in_a_range_or_a_list),
		cmocka_unit_test(decode_graphs_captures_each_size_once_then_replays),
		cmocka_unit_test(decode_graphs_without_sharing_names_no_pool),
		cmocka_unit_test(decode_without_graphs_captures_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

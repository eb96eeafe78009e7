/*
 * The training-like trace replayed with and without expandable segments:
 * peak reserved over peak allocated, the fragmentation expandable segments
 * exist to remove.
 */
#include <stdio.h>
#include <stdlib.h>

#include "workload/replay.h"
#include "workload/trace_gen.h"

#include "alloc_fixture.h"

#define STEPS 4

struct peaks {
	int64_t reserved;
	int64_t allocated;
	uint64_t ooms;
};

static struct wl_trace *training_trace(void)
{
	struct wl_gen_options opt = { .seed = 1, .steps = STEPS };
	char *text = NULL, err[NPA_ERRLEN] = "";
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct wl_trace *t = NULL;

	assert_non_null(f);
	assert_int_equal(wl_gen_write(WL_GEN_TRAINING, &opt, f), 0);
	assert_int_equal(fclose(f), 0);
	f = fmemopen(text, len, "r");
	assert_non_null(f);
	if (wl_trace_parse(f, "training", &t, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	fclose(f);
	free(text);
	return t;
}

static void expandable(struct npa_conf *c)
{
	c->expandable_segments = true;
}

static struct peaks replay(const struct wl_trace *t, void (*tweak)(struct npa_conf *))
{
	struct npa *a = tweak != NULL ? fx_start_conf(&npa_flavor_npu, 16 * GiB, tweak)
				      : fx_start_device_segments(&npa_flavor_npu, 16 * GiB, NULL);
	struct wl_replay *r = NULL;
	struct wl_replay_counters c;
	char err[NPA_ERRLEN] = "";

	assert_int_equal(wl_replay_new(a, t, &r, err, sizeof(err)), 0);
	if (wl_replay_run(r, 0, SIZE_MAX, NULL, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	wl_replay_counters(r, &c);
	struct npa_stats st = fx_stats(a);
	wl_replay_release_all(r);
	wl_replay_free(r);
	fx_stop(a);
	return (struct peaks){ st.reserved_bytes[ALL].peak, st.allocated_bytes[ALL].peak,
			       c.ooms };
}

static void expandable_segments_reserve_less_over_the_same_peak(void **state)
{
	(void)state;
	struct wl_trace *t = training_trace();
	struct peaks dflt = replay(t, NULL);
	struct peaks exp = replay(t, expandable);

	print_message("training, %d steps: peak reserved / peak allocated\n", STEPS);
	print_message("  default             %lld / %lld = %.4f\n", (long long)dflt.reserved,
		      (long long)dflt.allocated, (double)dflt.reserved / (double)dflt.allocated);
	print_message("  expandable_segments %lld / %lld = %.4f\n", (long long)exp.reserved,
		      (long long)exp.allocated, (double)exp.reserved / (double)exp.allocated);
	assert_int_equal(dflt.ooms, 0);
	assert_int_equal(exp.ooms, 0);
	/* The same requests: peaks of allocated bytes differ only by block splitting. */
	assert_true(exp.allocated <= dflt.allocated);
	/* Seed 1, 4 steps: 5974786048 / 4773759488 = 1.25 against
	 * 4890558464 / 4769121792 = 1.03 (pages mapped to the rounded request). */
	assert_true((double)dflt.reserved / (double)dflt.allocated > 1.20);
	assert_true((double)exp.reserved / (double)exp.allocated < 1.05);
	wl_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expandable_segments_reserve_less_over_the_same_peak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

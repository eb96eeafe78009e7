/*
 * replay_fixture.h - a simulated device, a caching allocator and a replay
 * of a trace given as text, for the replay tests (include after cmocka.h).
 */
#ifndef NPUMEMFS_TESTS_REPLAY_FIXTURE_H
#define NPUMEMFS_TESTS_REPLAY_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <npumemfs/npusim.h>
#include "workload/replay.h"

struct fixture {
	struct npa *a;
	struct wl_trace *t;
	struct wl_replay *r;
	char err[WL_ERRLEN];
};

/* The running fixture, so a failed test's teardown still shuts it down. */
static struct fixture *current;

static inline struct fixture *start_flavor(const struct npa_flavor *flavor, int devices,
					    uint64_t capacity)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct npusim_config sc;
	struct npa_options opt = { .flavor = flavor, .device_count = devices };

	assert_non_null(fx);
	npusim_config_default(&sc, devices, capacity);
	assert_int_equal(npusim_init(&sc), 0);
	npa_conf_default(&opt.conf, opt.flavor);
	assert_int_equal(npa_create(&opt, &fx->a), 0);
	current = fx;
	return fx;
}

static inline void stop_fixture(struct fixture *fx)
{
	if (fx->r) {
		wl_replay_release_all(fx->r);
		wl_replay_free(fx->r);
	}
	wl_trace_free(fx->t);
	npa_destroy(fx->a, NULL);
	npusim_shutdown();
	free(fx);
	current = NULL;
}

static inline int teardown(void **state)
{
	(void)state;
	if (current)
		stop_fixture(current);
	else if (npusim_initialized())
		npusim_shutdown();
	return 0;
}

static inline int parse(struct fixture *fx, const char *text, size_t len)
{
	FILE *f = fmemopen((void *)text, len ? len : strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = wl_trace_parse(f, "t", &fx->t, fx->err, sizeof(fx->err));
	fclose(f);
	return rc;
}

static inline void load(struct fixture *fx, const char *text)
{
	if (parse(fx, text, 0) != 0)
		fail_msg("parse: %s", fx->err);
	if (wl_replay_new(fx->a, fx->t, &fx->r, fx->err, sizeof(fx->err)) != 0)
		fail_msg("replay_new: %s", fx->err);
}

static inline void run_all(struct fixture *fx)
{
	if (wl_replay_run(fx->r, 0, fx->t->nevents, NULL, fx->err, sizeof(fx->err)) != 0)
		fail_msg("replay: %s", fx->err);
}

#endif /* NPUMEMFS_TESTS_REPLAY_FIXTURE_H */

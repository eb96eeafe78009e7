/*
 * whatif_run.c - one row of npumem-whatif in this process: the machine,
 * the allocator under the row's setting (or the switch with its plug-in),
 * the replay, and the capacity search, each capacity on a machine of its
 * own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <npumemfs/npusim.h>

#include "alloc/acl/block_handle.h"
#include "alloc/caching/caching_allocator.h"
#include "alloc/switch/allocator_switch.h"
#include "machine.h"
#include "report/svg.h"
#include "replay_setup.h"
#include "whatif_rows.h"

/* The search doubles the configured capacity up to this at most. */
#define CAPACITY_LIMIT (1ull << 40)

/* One machine at one capacity, with the row's allocator on it. */
struct rig {
	const struct whatif_env *env;
	const struct whatif_setting *s;
	uint64_t probe_events;  /* the capacity search's replays, summed */
	bool refused;           /* refused at the configured capacity: not a replay's failure */
	bool probing;           /* the capacity search runs: a refusal fails the row */
	uint64_t peak_used;     /* the most device memory the row's replay held, any device */
	bool sim_up;
	struct npa *alloc;
	struct sw *sw;
};

static int start_allocator(struct rig *g, const struct nmfs_config *cfg, char *err,
			   size_t errlen)
{
	struct npa_options opt = { .flavor = cfg->flavor, .device_count = cfg->device_count,
				   .no_caching = cfg->no_memory_caching };
	int rc = replay_setup_conf(cfg, g->s->plugin ? NULL : g->s->text, &opt.conf, err,
				   errlen);

	if (rc)
		return rc;
	return npa_create_err(&opt, &g->alloc, err, errlen);
}

/* The switch with the plug-in current, under the daemon's rules. */
static int start_plugin(struct rig *g, const struct nmfs_config *cfg, char *err,
			size_t errlen)
{
	return replay_setup_switch(cfg, g->alloc, g->s->text, &g->sw, err, errlen);
}

static void rig_down(struct rig *g)
{
	sw_destroy(g->sw);
	g->sw = NULL;
	npa_block_handles_bind(NULL);
	if (g->alloc)
		npa_destroy(g->alloc, NULL);
	g->alloc = NULL;
	if (g->sim_up)
		machine_stop();
	g->sim_up = false;
}

static int rig_up(struct rig *g, uint64_t capacity, struct allocator *out, char *err,
		  size_t errlen)
{
	struct nmfs_config cfg = g->env->cfg;
	int rc;

	cfg.capacity = capacity;
	if ((rc = machine_start(&cfg, err, errlen)) != 0)
		return rc;
	g->sim_up = true;
	rc = start_allocator(g, &cfg, err, errlen);
	if (rc == 0 && g->s->plugin)
		rc = start_plugin(g, &cfg, err, errlen);
	g->refused = rc == -EINVAL && !g->probing;
	if (rc) {
		rig_down(g);
		return rc;
	}
	*out = g->sw ? sw_allocator(g->sw) : npa_allocator(g->alloc);
	return 0;
}

/* The most device memory any device of the running machine held. */
static uint64_t peak_device_used(const struct whatif_env *env)
{
	uint64_t peak = 0;

	for (int d = 0; d < env->cfg.device_count; d++) {
		struct npusim_counters c;

		if (npusim_device_counters(d, &c) == 0 && c.peak_used > peak)
			peak = c.peak_used;
	}
	return peak;
}

static int measure_at(struct rig *g, uint64_t capacity, const struct wl_whatif_opts *opt,
		      struct wl_whatif_row *row, char *err, size_t errlen)
{
	struct allocator a;
	int rc = rig_up(g, capacity, &a, err, errlen);

	if (rc)
		return rc;
	rc = wl_whatif_measure(a, g->env->trace, opt, row, err, errlen);
	/* The search's hint comes from the row's own replay, not its probes. */
	if (!g->probing)
		g->peak_used = peak_device_used(g->env);
	rig_down(g);
	return rc;
}

/* The capacity search's probe: a replay that stops at the first OOM. A
 * machine that could not be set up ran no event. A failure says at which
 * capacity: the row's own replay ran at another. */
static int runs_at(void *ctx, uint64_t capacity, char *err, size_t errlen)
{
	struct rig *g = ctx;
	const struct wl_whatif_opts opt = { .stop_at_oom = true, .device = g->env->device };
	struct wl_whatif_row row = { 0 };
	char why[WHATIF_TEXT], size[32];
	int rc = measure_at(g, capacity, &opt, &row, why, sizeof(why));

	g->probe_events += row.events;
	if (rc >= 0)
		return row.num_ooms == 0;
	svg_size(size, sizeof(size), capacity);
	snprintf(err, errlen, "--min-capacity, probing %s (%llu bytes): %s", size,
		 (unsigned long long)capacity, why);
	return rc;
}

static int search_capacity(struct rig *g, struct whatif_result *out, char *err,
			   size_t errlen)
{
	const struct whatif_env *env = g->env;
	const struct wl_capacity_probe probe = { .runs = runs_at, .ctx = g };
	const struct wl_capacity_search s = {
		.floor = env->largest_request,
		.start = env->cfg.capacity,
		.limit = env->cfg.capacity > CAPACITY_LIMIT ? env->cfg.capacity : CAPACITY_LIMIT,
		.page = env->cfg.page_size,
		/* The row's replay at the configured capacity answers for it, and
		 * the memory it held is where the answer likely is, just below. */
		.start_result = out->m.num_ooms == 0 ? WL_START_RUNS : WL_START_OOMS,
		.hint = out->m.num_ooms == 0 ? g->peak_used : 0,
	};

	int rc;

	out->min_searched = true;
	g->probing = true;
	rc = wl_min_capacity_find(&probe, &s, &out->min, err, errlen);
	out->min_events = g->probe_events;
	return rc;
}

void whatif_row_start(struct whatif_result *out, const struct whatif_env *env,
		      const struct whatif_setting *s, unsigned index, unsigned rows)
{
	memset(out, 0, sizeof(*out));
	out->index = index;
	out->rows = rows;
	out->plugin = s->plugin;
	out->curve.every = env->curve_every;
	snprintf(out->settings, sizeof(out->settings), "%s", s->text);
	snprintf(out->flavor, sizeof(out->flavor), "%s", env->cfg.flavor->name);
	snprintf(out->under, sizeof(out->under), "%s", env->cfg.alloc_conf);
}

int whatif_run_row(const struct whatif_env *env, const struct whatif_setting *s,
		   unsigned index, unsigned rows, struct whatif_result *out, char *err,
		   size_t errlen)
{
	struct rig g = { .env = env, .s = s };
	struct wl_whatif_opts opt = { .curve = env->curve_every ? &out->curve : NULL,
				      .device = env->device };
	int rc;

	whatif_row_start(out, env, s, index, rows);
	rc = measure_at(&g, env->cfg.capacity, &opt, &out->m, err, errlen);
	if (rc == 0 && env->min_capacity)
		rc = search_capacity(&g, out, err, errlen);
	if (rc == 0 || g.refused)
		return rc;
	whatif_row_fail(out, err);
	return 0;
}

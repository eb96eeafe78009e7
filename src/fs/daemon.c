/*
 * daemon.c - bring the daemon's parts up in order and down in reverse.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <npumemfs/npusim.h>

#include "daemon.h"

static int start_sim(const struct nmfs_config *cfg, char *err, size_t errlen)
{
	struct npusim_config sim;

	npusim_config_default(&sim, cfg->device_count, cfg->capacity);
	for (int i = 0; i < cfg->device_count; i++) {
		sim.device[i].page_size = cfg->page_size;
		sim.device[i].malloc_latency_us = cfg->malloc_latency_us;
		sim.device[i].free_latency_us = cfg->free_latency_us;
	}
	int rc = npusim_init(&sim);
	if (rc)
		snprintf(err, errlen, "cannot start the simulated NPU: %s",
			 strerror(-rc));
	return rc;
}

static int start_alloc(struct nmfs *d, char *err, size_t errlen)
{
	struct npa_options opt = { .flavor = d->cfg.flavor,
				   .device_count = d->cfg.device_count };
	char why[NPA_CONF_ERRLEN];
	int rc;

	npa_conf_default(&opt.conf, opt.flavor);
	if (d->cfg.alloc_conf[0] &&
	    (rc = npa_conf_parse(&opt.conf, opt.flavor, d->cfg.alloc_conf,
				 NPA_ORIGIN_INI, why, sizeof(why)))) {
		snprintf(err, errlen, "alloc_conf: %s", why);
		return rc;
	}
	rc = npa_create(&opt, &d->alloc);
	if (rc)
		snprintf(err, errlen, "cannot create the allocator: %s", strerror(-rc));
	return rc;
}

static void log_unload(void *ctx, const char *name, const char *path)
{
	struct nmfs *d = ctx;

	dlog_printf(&d->log, "allocator %s (%s) unloaded: it holds no blocks any more",
		    name, path);
}

static int start_switch(struct nmfs *d, char *err, size_t errlen)
{
	struct sw_options opt = {
		.caching = d->alloc,
		.device_count = d->device_count,
		.plugin_dirs = d->cfg.plugin_dirs,
		.owner = d->uid,
		.on_unload = log_unload,
		.ctx = d,
	};
	int rc = sw_create(&opt, &d->sw);

	if (rc)
		snprintf(err, errlen, "cannot create the allocator switch: %s",
			 strerror(-rc));
	return rc;
}

static int start_tensors(struct nmfs *d)
{
	for (int i = 0; i < d->device_count; i++) {
		int rc = ts_new_switch(d->sw, i, &d->tensors[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void free_tensors(struct nmfs *d)
{
	for (int i = 0; i < d->device_count; i++) {
		uint64_t bytes = 0;
		if (!d->tensors[i])
			continue;
		size_t n = ts_release_all(d->tensors[i], &bytes);
		if (n)
			dlog_printf(&d->log,
				    "shutdown: freed %zu tensor%s (%llu bytes) on device%d",
				    n, n == 1 ? "" : "s", (unsigned long long)bytes, i);
		ts_free(d->tensors[i]);
		d->tensors[i] = NULL;
	}
}

int nmfs_open(struct nmfs *d, const struct nmfs_config *cfg, char *err,
	      size_t errlen)
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	d->flavor = cfg->flavor;
	d->device_count = cfg->device_count;
	d->started = time(NULL);
	d->uid = getuid();
	d->gid = getgid();
	LIST_INIT(&d->open_files);
	pthread_mutex_init(&d->open_files_lock, NULL);
	dlog_init(&d->log, true);
	rc = start_sim(cfg, err, errlen);
	if (rc)
		goto out_log;
	rc = start_alloc(d, err, errlen);
	if (rc)
		goto out_sim;
	rc = start_switch(d, err, errlen);
	if (rc)
		goto out_alloc;
	rc = start_tensors(d);
	if (rc == 0)
		rc = tree_build(&d->tree, d->device_count);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto out_switch;
	}
	struct wl_target replay_target = wl_target_switch(d->sw);
	rw_init(&d->replay, &replay_target, &d->log);
	dlog_printf(&d->log, "started: %d %s device%s of %llu bytes%s%s",
		    d->device_count, d->flavor->name, d->device_count == 1 ? "" : "s",
		    (unsigned long long)cfg->capacity, cfg->path[0] ? ", config " : "",
		    cfg->path);
	return 0;

out_switch:
	free_tensors(d);
	sw_destroy(d->sw);
out_alloc:
	npa_destroy(d->alloc, NULL);
out_sim:
	npusim_shutdown();
out_log:
	dlog_destroy(&d->log);
	pthread_mutex_destroy(&d->open_files_lock);
	return rc;
}

int nmfs_start(struct nmfs *d, char *err, size_t errlen)
{
	if (!d->cfg.replay[0])
		return 0;
	return rw_start(&d->replay, d->cfg.replay, d->cfg.loop, err, errlen);
}

static int check_devices(struct nmfs *d)
{
	char why[NPA_ERRLEN];
	int bad = 0;

	for (int i = 0; i < d->device_count; i++) {
		if (npa_check(d->alloc, i, why, sizeof(why)) == 0)
			continue;
		dlog_printf(&d->log, "invariant check: device%d: %s", i, why);
		bad = -EFAULT;
	}
	if (!bad)
		dlog_printf(&d->log, "invariant check: ok");
	return bad;
}

int nmfs_close(struct nmfs *d)
{
	uint64_t leaked_bytes = 0;

	rw_stop(&d->replay);
	free_tensors(d);
	/* Tensors are gone, so every plug-in is unloaded here. */
	sw_destroy(d->sw);
	d->sw = NULL;
	int rc = check_devices(d);
	size_t leaks = npa_destroy(d->alloc, &leaked_bytes);
	if (leaks) {
		dlog_printf(&d->log, "leak: %zu block%s (%llu bytes) still allocated",
			    leaks, leaks == 1 ? "" : "s",
			    (unsigned long long)leaked_bytes);
		rc = rc ? rc : -EFAULT;
	} else {
		dlog_printf(&d->log, "no leaks");
	}
	npusim_shutdown();
	tree_release(&d->tree);
	dlog_destroy(&d->log);
	pthread_mutex_destroy(&d->open_files_lock);
	return rc;
}
